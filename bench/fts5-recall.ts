import { closeDatabase, databaseFor, type StoreDatabase } from '../core/services/store/database.js';
import { queryTerms } from '../core/services/store/search-log/chat-search-log.js';

/** A logged message as the recall bench fills it. */
export interface LoggedMessage {
  id: string;
  role: 'user' | 'assistant';
  senderId?: string;
  text: string;
  at: number;
}

/** A word's newest matches that take part in a multi-word ranking (as the month-file engine does). */
const PER_TERM = 400;
const MAX_QUERY_TERMS = 8;
const ITEMS = '"search-log:bench:recall"';
const INDEX = '"search-log:bench:recall:fts"';

/** A term as one FTS5 string (its quotes doubled), so no word of a user's query is read as FTS5 syntax. */
const phrase = (term: string) => `"${term.replace(/"/g, '""')}"`;

/**
 * The recall log on FTS5 in the store database, as the next step of the store's move plans it: one table of items
 * (chat, time, the item as JSON) and an external-content FTS5 index of their words (unicode61, diacritics kept, as
 * `queryTerms` splits them). A search is bound to one chat; its ranking is the month-file engine's: one word, the
 * newest matches first; several, each word's newest PER_TERM matches fused by idf, equal scores newest first.
 * The bench times it A/B against the month-file engine on the same corpus.
 */
export class Fts5RecallLog {
  private readonly db: StoreDatabase;

  constructor(readonly dataDir: string) {
    this.db = databaseFor(dataDir);
    this.db.exec(
      `CREATE TABLE IF NOT EXISTS ${ITEMS} (seq INTEGER PRIMARY KEY AUTOINCREMENT, chat TEXT NOT NULL, at INTEGER NOT NULL, text TEXT NOT NULL, item TEXT NOT NULL);` +
        `CREATE INDEX IF NOT EXISTS "search-log:bench:recall:chat" ON ${ITEMS} (chat, seq);` +
        `CREATE VIRTUAL TABLE IF NOT EXISTS ${INDEX} USING fts5(text, content=${ITEMS}, content_rowid='seq', tokenize='unicode61 remove_diacritics 0');`,
    );
  }

  /** Items per chat (the idf's denominator), counted once and kept up to date by `addMany`. */
  private readonly sizes = new Map<string, number>();

  addMany(chatId: string, items: LoggedMessage[]): void {
    this.sizes.delete(chatId);
    this.db.transaction(() => {
      for (const item of items) {
        this.db.run(`INSERT INTO ${ITEMS} (chat, at, text, item) VALUES (?, ?, ?, ?)`, [chatId, item.at, item.text, JSON.stringify(item)]);
        this.db.run(`INSERT INTO ${INDEX} (rowid, text) VALUES (last_insert_rowid(), ?)`, [item.text]);
      }
    });
  }

  /** The newest `limit` items of one chat that `match` finds, newest first (their seq). */
  private newest(chatId: string, match: string, notBefore: number, limit: number): number[] {
    return this.db
      // CROSS JOIN keeps the index's matches as the outer loop, read newest first (the ORDER BY is the index's own), each
      // checked against its chat and time until `limit` are found; a plain join let SQLite walk every item of the chat
      // and ask the index about each (about 5× slower at 100,000 messages).
      .all<{ seq: number }>(
        `SELECT i.seq AS seq FROM ${INDEX} CROSS JOIN ${ITEMS} i ON i.seq = ${INDEX}.rowid WHERE ${INDEX} MATCH ? AND i.chat = ? AND i.at >= ? ORDER BY ${INDEX}.rowid DESC LIMIT ?`,
        [match, chatId, notBefore, limit],
      )
      .map((r) => r.seq);
  }

  /** The best matches of `query` in one chat, each with the message before and after it in that chat. */
  search(chatId: string, query: string, options: { limit?: number; notBefore?: number } = {}): Array<{ message: LoggedMessage; before?: LoggedMessage; after?: LoggedMessage }> {
    const terms = queryTerms(query).slice(0, MAX_QUERY_TERMS);
    if (!terms.length) return [];
    const limit = Math.max(1, Math.min(20, Math.floor(options.limit ?? 5) || 5));
    const notBefore = options.notBefore ?? 0;
    let chosen: number[];
    if (terms.length === 1) chosen = this.newest(chatId, phrase(terms[0]), notBefore, limit);
    else {
      const count = this.sizes.get(chatId) ?? (this.db.get<{ n: number }>(`SELECT count(*) AS n FROM ${ITEMS} WHERE chat = ?`, [chatId])?.n ?? 0);
      this.sizes.set(chatId, count);
      const scores = new Map<number, number>();
      for (const term of terms) {
        const seqs = this.newest(chatId, phrase(term), notBefore, PER_TERM);
        if (!seqs.length) continue;
        const idf = Math.log(1 + count / seqs.length);
        for (const seq of seqs) scores.set(seq, (scores.get(seq) ?? 0) + idf);
      }
      chosen = [...scores.entries()]
        .sort((a, b) => b[1] - a[1] || b[0] - a[0])
        .slice(0, limit)
        .map(([seq]) => seq);
    }
    const itemAt = (sql: string, seq: number) => {
      const row = this.db.get<{ item: string }>(sql, [chatId, seq]);
      return row ? (JSON.parse(row.item) as LoggedMessage) : undefined;
    };
    return chosen.map((seq) => {
      const message = itemAt(`SELECT item FROM ${ITEMS} WHERE chat = ? AND seq = ?`, seq)!;
      const before = itemAt(`SELECT item FROM ${ITEMS} WHERE chat = ? AND seq < ? ORDER BY seq DESC LIMIT 1`, seq);
      const after = itemAt(`SELECT item FROM ${ITEMS} WHERE chat = ? AND seq > ? ORDER BY seq LIMIT 1`, seq);
      return { message, ...(before ? { before } : {}), ...(after ? { after } : {}) };
    });
  }

  close(): void {
    closeDatabase(this.dataDir);
  }
}
