import { HISTORY_STORE, SUMMARIES_STORE, type HistoryStore } from '../../services/store/history.js';
import { MEMORY_STORE, type MemoryStore } from '../../services/store/memory.js';
import { PluginStores } from '../../services/store/plugin-store.js';
import type { StoreDeclaration } from '../../services/store/store-declarations.js';
import { ACCESS_STORE } from '../access/access-document.js';
import { POLL_BOOK_STORE } from '../chat/polls.js';
import { BURST_TURNS_STORE } from '../pipeline/burst-turns.js';
import { DELETED_MESSAGES_STORE } from '../pipeline/deleted-messages.js';

/**
 * What the core itself keeps, declared like a plugin's stores (`Store.*`) under the `core` namespace of the store
 * database: `.mydata` export and delete, messages deleted for everyone, edits and chat moves follow from these
 * declarations, as they do for a plugin's.
 */
export const CORE_STORES: readonly StoreDeclaration[] = [HISTORY_STORE, SUMMARIES_STORE, MEMORY_STORE, BURST_TURNS_STORE, DELETED_MESSAGES_STORE, POLL_BOOK_STORE, ACCESS_STORE];

/** The engines that keep some of the core's rows themselves (see `PluginStores.serve`). */
export interface CoreEngines {
  /** The histories and their summaries (its write-behind cache sees every change the privacy controls make). */
  histories: HistoryStore;
  /** The remembered facts (the facts each answer reads are cached there). */
  memories: MemoryStore;
}

/** The core's stores (see `CORE_STORES`), opened from the same service plugins' stores use. */
export function coreStores(dataDir: string, { histories, memories }: CoreEngines, now: () => number = Date.now): PluginStores {
  const stores = new PluginStores('core', dataDir, CORE_STORES, undefined, undefined, now);
  stores.serve(HISTORY_STORE, histories.chatLog());
  stores.serve(SUMMARIES_STORE, histories.summaryDocs());
  stores.serve(MEMORY_STORE, memories.chatLog());
  return stores;
}
