import { Type } from '#typebox';
import type { BoundedRecord } from '../../services/store/bounded-record.js';
import type { DataSchema } from '../../services/store/schemas.js';
import { dataSchemaOf, Store } from '../../services/store/store-declarations.js';

/**
 * How long a merged message is remembered: WhatsApp lets a sender delete a message for everyone for about two and a
 * half days (edits only 15 minutes), so a later delete cannot reach it anyway.
 */
export const MERGED_KEPT_MS = 3 * 24 * 60 * 60 * 1000;

/** At most this many merged messages are remembered (the oldest go first): the file stays small whatever the traffic. */
export const MERGED_KEPT = 10_000;

/** One message that was answered as part of a burst's turn. */
export interface MergedMessage {
  chat: string;
  /** The message's own id. */
  id: string;
  /** The id the turn was stored under (its newest message's). */
  turn: string;
  /** Who sent it, so a person's `.mydata` and delete reach it (ids only: no words are kept here). */
  sender: string;
  at: number;
}

/** Where earlier versions kept it, under DATA_DIR (taken in once, then kept aside under `data/migrated/`). */
export const BURST_TURNS_PATH = 'bursts/merged.json';

/**
 * The record as the core declares it (`core` namespace of the store database): a person's `.mydata` lists the entries
 * of their private chat and those they sent (without the sender), and deletes them; a turn deleted for everyone by its
 * writer takes its entries; a chat's entries move with it.
 */
export const BURST_TURNS_STORE = Store.chatRecord('merged', Type.Object({ chat: Type.String(), id: Type.String(), turn: Type.String(), sender: Type.String(), at: Type.Number() }), {
  path: BURST_TURNS_PATH,
  title: 'burst-turns',
  section: 'messages answered together',
  exportAs: '',
  chatOf: (m) => m.chat,
  withChat: (m, chat) => ({ ...m, chat }),
  keepMs: MERGED_KEPT_MS,
  keepCount: MERGED_KEPT,
  // The turn is gone from every store when it is deleted: its entries have nothing left to lead to.
  people: { author: (m) => m.sender, messageId: (m) => m.turn },
  exported: ({ chat, id, turn, at }) => ({ chat, id, turn, at }),
});

/** The earlier file's schema (the backup manifest names it). */
export const BURST_TURNS_SCHEMA: DataSchema = dataSchemaOf(BURST_TURNS_STORE, 'core');

/**
 * Which turn each message merged into a burst was answered in, kept on disk: a delete or an edit for everyone of an
 * earlier message of a burst must remove the turn that carries its words, also when it comes after a restart (the
 * turn was stored under the burst's newest id only). Bounded by age and count; only ids, no words. Takes part in
 * the privacy controls like every store: a person's entries are exported and deleted with their data, and a chat's
 * entries move with it.
 *
 * @example
 * const turns = new BurstTurns(coreStores(dataDir, { histories, memories }).record(BURST_TURNS_STORE));
 * turns.note(chatId, messages, turnId);
 * const { id, merged } = await turns.turnOf(chatId, someEarlierId);
 */
export class BurstTurns {
  /** `record`: the core's stores' `BURST_TURNS_STORE` (core-stores.ts), whose declaration puts it in the privacy controls. */
  constructor(private readonly record: BoundedRecord<MergedMessage>, private readonly now: () => number = Date.now) {}

  /** Remembers that `messages` of `chatId` were answered as one turn stored under `turnId`. Never rejects. */
  note(chatId: string, messages: Array<{ id: string; senderId: string }>, turnId: string): Promise<void> {
    const at = this.now();
    return this.record.add(messages.map((m) => ({ chat: chatId, id: m.id, turn: turnId, sender: m.senderId, at }))).catch(() => undefined);
  }

  /** The id under which the turn carrying `messageId` was stored (its own id when it was not merged). */
  async turnOf(chatId: string, messageId: string): Promise<{ id: string; merged: boolean }> {
    const entry = await this.record.get(chatId, messageId);
    return entry ? { id: entry.turn, merged: true } : { id: messageId, merged: false };
  }

  /** Writes what was noted (a stop, a backup). */
  flush(): Promise<void> {
    return this.record.flush();
  }

}
