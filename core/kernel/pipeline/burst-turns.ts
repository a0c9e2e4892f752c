import path from 'node:path';
import { BoundedRecord } from '../../services/store/bounded-record.js';
import { changeableBy, isPrivateChatOf, writtenBy } from '../../services/store/privacy.js';
import type { PersonIds, PrivacyParticipant } from '../port/privacy-participant.js';
import type { DataSchema } from '../../services/store/schemas.js';

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

/** `data/bursts/merged.json`. */
export interface MergedDocument {
  merged: MergedMessage[];
}

const str = { type: 'string' } as const;

export const BURST_TURNS_SCHEMA: DataSchema = {
  name: 'burst-turns',
  version: 1,
  schema: {
    type: 'object',
    required: ['merged'],
    properties: {
      merged: {
        type: 'array',
        maxItems: MERGED_KEPT,
        items: { type: 'object', required: ['chat', 'id', 'turn', 'sender', 'at'], properties: { chat: str, id: str, turn: str, sender: str, at: { type: 'number' } } },
      },
    },
  },
};

/** The file's place under DATA_DIR (for the doctor and the backup manifest). */
export const BURST_TURNS_PATH = 'bursts/merged.json';

/**
 * Which turn each message merged into a burst was answered in, kept on disk: a delete or an edit for everyone of an
 * earlier message of a burst must remove the turn that carries its words, also when it comes after a restart (the
 * turn was stored under the burst's newest id only). Bounded by age and count; only ids, no words. Takes part in
 * the privacy controls like every store: a person's entries are exported and deleted with their data, and a chat's
 * entries move with it.
 *
 * @example
 * const turns = new BurstTurns(dataDir);
 * turns.note(chatId, messages, turnId);
 * const { id, merged } = await turns.turnOf(chatId, someEarlierId);
 */
export class BurstTurns {
  private readonly record: BoundedRecord<MergedMessage>;

  constructor(dataDir: string, private readonly now: () => number = Date.now) {
    this.record = new BoundedRecord({
      dataDir,
      file: path.join(dataDir, BURST_TURNS_PATH),
      field: 'merged',
      schema: BURST_TURNS_SCHEMA,
      chatOf: (m) => m.chat,
      withChat: (m, chat) => ({ ...m, chat }),
      keepMs: MERGED_KEPT_MS,
      keepCount: MERGED_KEPT,
      now,
    });
  }

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

  /** A person's entries: those they sent, and every entry of their private chat. */
  privacyParticipant(): PrivacyParticipant {
    const about = (person: PersonIds) => (m: MergedMessage) => isPrivateChatOf(m.chat, person) || writtenBy(m.sender, person);
    return {
      name: 'messages answered together',
      exportFor: async (person) => (await this.record.entries()).filter(about(person)).map(({ chat, id, turn, at }) => ({ chat, id, turn, at })),
      deleteFor: (person) => this.record.removeWhere(about(person)),
      // The turn is gone from every store: its map entries have nothing left to lead to.
      revoke: (chatId, turnId, author) => this.record.removeWhere((m) => m.chat === chatId && m.turn === turnId && changeableBy(m.sender, author)),
      moveChat: (from, to) => this.record.moveChat(from, to),
    };
  }
}
