import path from 'node:path';
import { safeFileName } from './atomic.js';
import { JsonFileCollection, type OnCorrupt } from './json-file.js';
import { HISTORY_SCHEMA } from './schemas.js';

/** One line of a chat's history. */
export interface HistoryEntry {
  id?: string;
  role: 'user' | 'assistant';
  senderId?: string;
  senderName?: string;
  text: string;
  /** Unix ms. */
  at: number;
  /** Media kind when the message carried media (the text is then its caption or transcript). */
  media?: string;
}

/**
 * The history of every chat: `data/history/<chat>.json`, one file per chat, bounded to the last `maxMessages`
 * entries, written atomically.
 *
 * @example
 * await histories.append(chatId, { role: 'user', text: 'hi', at: Date.now() });
 * const recent = await histories.recent(chatId, 20);
 */
export class HistoryStore {
  private readonly docs: JsonFileCollection<{ messages: HistoryEntry[] }>;
  constructor(readonly dataDir: string, public maxMessages = 50, onCorrupt?: OnCorrupt) {
    this.docs = new JsonFileCollection((chat) => path.join(dataDir, 'history', `${safeFileName(chat)}.json`), () => ({ messages: [] }), { schema: HISTORY_SCHEMA, onCorrupt });
  }

  async append(chatId: string, entry: HistoryEntry): Promise<void> {
    await this.docs.doc(chatId).update((doc) => {
      if (!Array.isArray(doc.messages)) doc.messages = [];
      doc.messages.push(entry);
      if (doc.messages.length > this.maxMessages) doc.messages.splice(0, doc.messages.length - this.maxMessages);
    });
  }

  /** The last `limit` entries, oldest first. */
  async recent(chatId: string, limit = this.maxMessages): Promise<HistoryEntry[]> {
    const doc = await this.docs.doc(chatId).get();
    const messages = Array.isArray(doc.messages) ? doc.messages : [];
    return messages.slice(-limit);
  }

  /** Removes one message (deleted for everyone on WhatsApp). Returns true when it was there. */
  async remove(chatId: string, messageId: string): Promise<boolean> {
    const doc = this.docs.doc(chatId);
    const current = await doc.get();
    if (!current.messages.some((m) => m.id === messageId)) return false;
    await doc.update((d) => {
      d.messages = d.messages.filter((m) => m.id !== messageId);
    });
    await doc.flush();
    return true;
  }

  /** Removes the entries of one chat that match (privacy delete) and waits until that is on disk. Returns how many. */
  async removeWhere(chatId: string, matches: (entry: HistoryEntry) => boolean): Promise<number> {
    const doc = this.docs.doc(chatId);
    let removed = 0;
    await doc.update((d) => {
      const kept = d.messages.filter((m) => !matches(m));
      removed = d.messages.length - kept.length;
      d.messages = kept;
    });
    await doc.flush();
    return removed;
  }

  /** Clears the chat's prompt history (`.reset`): the next answer starts a fresh conversation. Returns how many went. */
  async clear(chatId: string): Promise<number> {
    let removed = 0;
    await this.docs.doc(chatId).update((doc) => {
      removed = Array.isArray(doc.messages) ? doc.messages.length : 0;
      doc.messages = [];
    });
    return removed;
  }

  flush(): Promise<void> {
    return this.docs.flush();
  }
}
