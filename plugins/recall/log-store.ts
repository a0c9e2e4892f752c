import type { SearchHit } from '../../core/index.js';
import { SearchLogs, type SearchLogEvents } from '../../core/builtin.js';
import { validEntry, type LoggedMessage } from './entry.js';

export { MAX_TEXT_CHARS, validEntry, type LoggedMessage } from './entry.js';
export { queryTerms } from '../../core/builtin.js';
export type RecallHit = SearchHit<LoggedMessage>;
export type RecallStoreEvents = SearchLogEvents<LoggedMessage>;
export type ChatRecallLog = ReturnType<RecallStore['chat']>;

/** What recall's month files hold: `{"recall":1,"chat":…}` first, then one message per line (see entry.ts). */
export const RECALL_FORMAT = { header: 'recall', item: validEntry };

/**
 * The recall logs under `root` on the core's search-log engine (the plugin opens them through `host.store`; tests and
 * the benchmark use this to reach the same files directly).
 */
export class RecallStore extends SearchLogs<LoggedMessage> {
  constructor(root: string, events: RecallStoreEvents = {}, options: ConstructorParameters<typeof SearchLogs<LoggedMessage>>[3] = {}) {
    super(root, RECALL_FORMAT, events, options);
  }
}
