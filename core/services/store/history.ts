import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DataWriteError } from '../../api/errors.js';
import { safeFileName } from '../../api/file-name.js';
import { domainFor, setAsideUnreadable, type DataDomain } from './data-domain.js';
import { databaseFor, keepAside, type StoreDatabase } from './database.js';
import { checkDocument, HISTORY_SCHEMA } from './schemas.js';
import { Type } from '#typebox';
import { tableOf, type ChatLogEngine } from './sql-chat-log.js';
import type { DocEngine } from './doc-view.js';
import { Store } from './store-declarations.js';
import { HISTORY_ENTRY_FIELDS } from './history-entry-fields.js';

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
  /** The bot's answers: the sender id of the message answered (their `.mydata` delete removes the answer). */
  answers?: string;
  /**
   * The bot's answers: the id of the message (or turn) answered. A delete for everyone of that message removes the
   * answer with it, since it may repeat the deleted words (a document's text, a quote).
   */
  answersMessage?: string;
  /**
   * The bot's answers: true when its turn carried words that were not the asker's own (a document, a quote, a page, a
   * tool's outside text). The answer may repeat them, so later turns count it as carrying them too (never "clean").
   */
  carried?: boolean;
}

/**
 * What older turns of a chat became once folded out of its history (`history.summarize`): the main model's running
 * summary of them, and who and which messages it covers — a privacy delete or a message deleted for everyone that
 * one of them was part of removes the summary, since its text may repeat their words.
 */
export interface ChatSummary {
  text: string;
  /** Unix ms of the last fold. */
  at: number;
  /** Messages folded in so far. */
  folded: number;
  /** Every sender id of a folded message and every id a folded answer answered. */
  people: string[];
  /**
   * The newest folded messages that carried an id (at most `SUMMARY_RECENT_IDS`): WhatsApp lets a message be deleted
   * for everyone or edited only for a short while (about two days), so older ids are never asked for.
   */
  recent: Array<{ id: string; senderId?: string; role: HistoryEntry['role'] }>;
}

/**
 * How many messages a chat's history keeps: `history.maxMessages` as a sliding window without summaries; with them,
 * turns leave the history only once folded into the summary, and this bound (4 ×) holds only while folding keeps
 * failing (the model down for long), so the history still cannot grow without end.
 */
export function storedMessages(history: { maxMessages: number; summarize: boolean }): number {
  return history.summarize ? 4 * history.maxMessages : history.maxMessages;
}

/** How many folded message ids a summary remembers (see `ChatSummary.recent`). */
export const SUMMARY_RECENT_IDS = 500;

/** How `HistoryStore.append` writes its row. */
export interface AppendOptions {
  /**
   * Kept for callers of the earlier engine: every append is now written once the I/O this turn of the event loop
   * started is under way (appends of one turn share one transaction), so the caller never waits for the disk.
   */
  writeAfterIo?: boolean;
  /**
   * The entry waits for the store's next write (a turn's question waiting for its answer), so a quick turn's question
   * and answer share one commit; it is written on its own after `HELD_AT_MOST_MS` at the latest (a slow model call, a
   * turn that fails), or at once by `writeHeld`. The promise resolves once it is written, as for any append.
   */
  heldForNextWrite?: boolean;
}

/**
 * How long an entry appended with `heldForNextWrite` waits for the next write before it is written on its own: a
 * model that answers within it pays one commit for the question and the answer; a slower one (seconds) has the
 * question on disk while it works, as before. A crash within it loses only a question not answered yet.
 */
export const HELD_AT_MOST_MS = 100;

/** Told of every entry appended to a chat's history (see `HistoryStore.onAppend`). */
export type HistoryAppendListener = (chatId: string, entry: HistoryEntry) => void;

/** The folder of the earlier layout (`data/history/<chat>.json` with its `.jsonl` logs), relative to the data folder. */
const EARLIER_FOLDER = 'history';
/** The files of one chat in the earlier layout, in the order they are read: the JSON file, then the logs replayed over it. */
const EARLIER_SUFFIXES = ['.json', '.folding.jsonl', '.jsonl'] as const;

/** One chat in memory: its bounded history (the objects `recent` hands out, which `fold` compares) and its summary. */
interface ChatHistory {
  messages: HistoryEntry[];
  summary?: ChatSummary;
  /** Rows the chat has in the table (older ones beyond the bound are trimmed in batches). */
  rows: number;
}

/** Two summaries of one chat (kept under both of its ids): both texts, oldest first, and all they cover. */
function mergeSummaries(a: ChatSummary, b: ChatSummary): ChatSummary {
  const [older, newer] = a.at <= b.at ? [a, b] : [b, a];
  return {
    text: `${older.text}\n${newer.text}`,
    at: newer.at,
    folded: older.folded + newer.folded,
    people: [...new Set([...older.people, ...newer.people])],
    recent: [...older.recent, ...newer.recent].slice(-SUMMARY_RECENT_IDS),
  };
}

/** A log line of the earlier layout: the entry plus its sequence number, checked with the history schema. */
function parseLine(line: string): { seq: number; entry: HistoryEntry } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!parsed || typeof parsed !== 'object') return undefined;
  const { seq, ...entry } = parsed as Record<string, unknown>;
  if (typeof seq !== 'number' || !Number.isInteger(seq) || seq < 1) return undefined;
  const checked = checkDocument(HISTORY_SCHEMA, { version: HISTORY_SCHEMA.version, messages: [entry] });
  return checked.ok ? { seq, entry: entry as unknown as HistoryEntry } : undefined;
}

/**
 * Two chats' entries as one, in time order, stable (equal times: `ours` first); an entry of `theirs` that `ours` holds
 * (same JSON) is left out, once per copy.
 */
export function mergeEntries<T extends { at: number }>(ours: T[], theirs: T[]): T[] {
  const held = new Map<string, number>();
  for (const entry of ours) held.set(JSON.stringify(entry), (held.get(JSON.stringify(entry)) ?? 0) + 1);
  const taken = theirs.filter((entry) => {
    const copies = held.get(JSON.stringify(entry)) ?? 0;
    if (copies) held.set(JSON.stringify(entry), copies - 1);
    return !copies;
  });
  return [...ours, ...taken].sort((a, b) => a.at - b.at);
}

const HistoryEntrySchema = Type.Object({ ...HISTORY_ENTRY_FIELDS, carried: Type.Optional(Type.Boolean()) });

/**
 * The chats' histories as the core declares them (`core` namespace of the store database; rows kept by
 * `HistoryStore`, see `chatLog()`): a person's `.mydata` holds their private chat whole and, in groups, what they wrote
 * and the bot's answers to them (which may repeat their words); a message deleted for everyone or edited takes the
 * bot's answers to it along; an edit changes the words of the person's message; a chat's history moves with it.
 */
export const HISTORY_STORE = Store.chatLog('history', HistoryEntrySchema, {
  title: 'chat history',
  section: 'history',
  exportAs: '',
  people: {
    author: (e) => e.senderId,
    messageId: (e) => e.id,
    answers: (e) => (e.role === 'assistant' && e.answers !== undefined ? { messageId: e.answersMessage ?? answeredBefore.get(e), person: e.answers } : undefined),
    // The bot's own words stay as they were: only the person's message takes the new text.
    edited: (e, text) => (e.role === 'user' ? { ...e, text } : e),
  },
});

/** A chat without a summary, as the summaries' declaration reads it (no words, no one). */
const NO_SUMMARY: ChatSummary = { text: '', at: 0, folded: 0, people: [], recent: [] };

/**
 * The chats' running summaries as the core declares them (rows kept by `HistoryStore` with the history, see
 * `summaryDocs()`). A summary cannot be cut apart by who said what, so whatever touches one of the messages it folded
 * removes it whole: the `.mydata` delete of one of its people, a message of it deleted for everyone or edited (a
 * person's message; the bot's own are never edited). It moves with the history (same transaction).
 */
export const SUMMARIES_STORE = Store.chatDoc(
  'summaries',
  Type.Object({ text: Type.String(), at: Type.Number(), folded: Type.Number(), people: Type.Array(Type.String()), recent: Type.Array(Type.Object({ id: Type.String(), senderId: Type.Optional(Type.String()), role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]) })) }),
  () => ({ ...NO_SUMMARY, people: [], recent: [] }),
  {
    title: 'conversation summaries',
    section: 'conversation summaries',
    exportAs: '',
    covers: {
      people: (s) => s.people,
      messages: (s) => s.recent.map((m) => ({ id: m.id, ...(m.senderId ? { senderId: m.senderId } : {}), editable: m.role === 'user' })),
    },
  },
);

/**
 * The message each answer written before answers named theirs (`answersMessage`) answered: the one directly before it
 * whose sender it answers. Found when the rows are read, kept beside the entries (they stay as written), so a delete
 * for everyone of that message takes them along as it takes newer ones.
 */
const answeredBefore = new WeakMap<HistoryEntry, string>();

function noteAnswered(messages: HistoryEntry[]): void {
  let question: HistoryEntry | undefined;
  for (const e of messages) {
    if (e.role === 'user') question = e;
    else if (question?.id && !e.answersMessage && !e.id && e.answers !== undefined && e.answers === question.senderId) answeredBefore.set(e, question.id);
  }
}

/** One batch of changes, written in one transaction (see `HistoryStore.write`). */
interface Batch {
  done: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
}

function newBatch(): Batch {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const done = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  // Nobody may wait for an append's write: a failure is reported by the data health, not as unhandled.
  done.catch(() => undefined);
  return { done, resolve, reject };
}

/**
 * The history of every chat and its running summary, in the store database (`data/store.db`, the `core` namespace):
 * one row per message (`chat-log:core:history`) and one per summary (`doc:core:summaries`). Each chat is read once
 * into memory, bounded to the last `maxMessages` entries; reads are served from there (the same objects each time, so
 * `fold` can tell the turns it summarised are still the oldest). Appends made in one turn of the event loop are
 * written together in one transaction once that turn's I/O is under way, with one prepared statement; the promise
 * resolves once the rows are committed (they survive a crash of the process). A change that removes words (a delete,
 * an edit, `.reset`, a chat move) rewrites the chat's rows in one transaction and checkpoints the WAL, so the words
 * are in no file.
 *
 * The files of earlier versions (`data/history/<chat>.json` with its `.jsonl` logs) are taken in at first use (all of
 * them) and whenever one turns up for a chat it reads: each chat's files with the row recording them (by content) in
 * one transaction, then moved under `data/migrated/history/` (a crash between the two only moves them at the next
 * use). A JSON file that does not parse or match is set aside with its bytes kept (`<name>.corrupt-<time>`), as before.
 *
 * @example
 * await histories.append(chatId, { role: 'user', text: 'hi', at: Date.now() });
 * const recent = await histories.recent(chatId, 20);
 */
export class HistoryStore {
  private readonly chats = new Map<string, ChatHistory>();
  private readonly appendListeners = new Set<HistoryAppendListener>();
  private readonly messagesTable = tableOf('chat-log', 'core', 'history');
  private readonly summariesTable = tableOf('doc', 'core', 'summaries');
  private readyFor: StoreDatabase | undefined;
  /** Appended entries not in the database yet, in order. */
  private pending: Array<{ chat: string; entry: HistoryEntry }> = [];
  /** Chats whose rows are rewritten from memory at the next write (a removal, an edit, a move). */
  private rewrites = new Set<string>();
  /**
   * Chats whose oldest rows were folded into their summary since the last write: those rows go and the summary is
   * written, the kept rows stay as they are (a fold every ~13 turns rewrote ~50 rows and their JSON before).
   */
  private folds = new Set<string>();
  /** The next write checkpoints the WAL (it removes someone's words). */
  private eraseNext = false;
  /** The write the changes made since the last one started will be part of. */
  private next: Batch | undefined;
  /** The write that held entries (`heldForNextWrite`) wait for while none is asked for, and its deadline. */
  private held: Batch | undefined;
  private heldTimer: NodeJS.Timeout | undefined;
  private readonly writeHeldNow = () => void this.write();
  /** How long a held entry waits for the next write (`HELD_AT_MOST_MS`; a test that must not depend on speed sets more). */
  heldAtMostMs = HELD_AT_MOST_MS;
  /** Writes, one after another. */
  private writing: Promise<void> = Promise.resolve();
  private retry: NodeJS.Timeout | undefined;
  private retryMs = 500;
  private readonly flushNow = () => this.flush();
  /**
   * Entries a delete, an edit or `.reset` took out (not a fold or the bound): an answer still being made to one of
   * them is not kept (see `wasRemoved`).
   */
  private readonly removedEntries = new WeakSet<HistoryEntry>();

  constructor(readonly dataDir: string, public maxMessages = 50) {
    this.folder = path.join(dataDir, EARLIER_FOLDER);
    this.unsavedName = `${path.join(path.resolve(dataDir), 'store.db')} (chat history)`;
  }

  /** The folder of the earlier layout, by which the app's view of the data folder is found. */
  private readonly folder: string;
  /** What the data health calls this store's part of the database when a write fails. */
  private readonly unsavedName: string;

  /** The app's view of the data folder (its health, its write gate), found by path at each use (it is cached there). */
  private get domain(): DataDomain {
    return domainFor(this.folder);
  }

  /** Transactions that wrote history rows since this store was made (what the disk pays for). */
  foldsWritten = 0;

  /** The database (opened again after the app closed it at a stop), with the tables made and earlier files taken in. */
  private get db(): StoreDatabase {
    const db = databaseFor(this.dataDir);
    if (this.readyFor !== db) {
      db.exec(
        // seq without AUTOINCREMENT: a new row takes one past the largest, so a chat's rows keep their order and a message
        // costs no write of sqlite_sequence.
        `CREATE TABLE IF NOT EXISTS ${this.messagesTable} (seq INTEGER PRIMARY KEY, chat TEXT NOT NULL, at INTEGER, written INTEGER NOT NULL, item TEXT NOT NULL);` +
          `CREATE INDEX IF NOT EXISTS ${this.messagesTable.slice(0, -1)}:chat" ON ${this.messagesTable} (chat, seq);` +
          `CREATE TABLE IF NOT EXISTS ${this.summariesTable} (key TEXT PRIMARY KEY, value TEXT NOT NULL);`,
      );
      this.readyFor = db;
      const folder = path.join(this.dataDir, EARLIER_FOLDER);
      const chats = new Set<string>();
      for (const name of existsSync(folder) ? readdirSync(folder) : []) {
        const base = /^(.+?)(\.folding)?\.jsonl?$/.exec(name)?.[1];
        if (base) chats.add(base);
      }
      for (const base of chats) this.takeIn(db, base);
    }
    return db;
  }

  /** The database, with the chat's files of the earlier layout taken in when any is there (dropped in, or restored). */
  private dbFor(chatId: string): StoreDatabase {
    const db = this.db;
    const base = safeFileName(chatId);
    if (EARLIER_SUFFIXES.some((suffix) => existsSync(this.earlier(base, suffix)))) this.takeIn(db, base);
    return db;
  }

  private earlier(base: string, suffix: string): string {
    return path.join(this.dataDir, EARLIER_FOLDER, base + suffix);
  }

  /**
   * Takes in one chat's files of the earlier layout: the JSON file (set aside with its bytes when it is not a history
   * document) with the log lines it did not hold yet, merged into what the chat holds (an entry held already is taken
   * once), with the row recording them in one transaction; then the files move aside. Files already taken in (a
   * crash before they moved) are only moved.
   */
  private takeIn(db: StoreDatabase, base: string): void {
    let chatId: string;
    try {
      chatId = decodeURIComponent(base);
    } catch {
      return; // Not a name this store wrote.
    }
    const read = (suffix: string) => {
      try {
        return readFileSync(this.earlier(base, suffix));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.domain.health.skippedLines(this.earlier(base, suffix), 0, `cannot be read: ${(err as Error).message}`);
        return undefined;
      }
    };
    let messages: HistoryEntry[] = [];
    let summary: ChatSummary | undefined;
    let logSeq = 0;
    const hash = createHash('sha256');
    const found: string[] = [];
    const json = read('.json');
    if (json) {
      hash.update(json);
      const file = this.earlier(base, '.json');
      try {
        const checked = checkDocument(HISTORY_SCHEMA, JSON.parse(json.toString('utf8')));
        if (!checked.ok) throw new Error(checked.reason);
        messages = (checked.value.messages as HistoryEntry[]) ?? [];
        summary = checked.value.summary as ChatSummary | undefined;
        logSeq = (checked.value.logSeq as number | undefined) ?? 0;
        if (checked.migratedFrom !== undefined) this.domain.health.migrated(file, checked.migratedFrom, HISTORY_SCHEMA.version);
        found.push('.json');
      } catch (err) {
        setAsideUnreadable(file, (err as Error).message);
      }
    }
    for (const suffix of ['.folding.jsonl', '.jsonl'] as const) {
      const bytes = read(suffix);
      if (bytes === undefined) continue;
      found.push(suffix);
      hash.update(`\n${suffix}\n`).update(bytes);
      const lines = bytes.toString('utf8').split('\n');
      // A last line without its newline is an append a crash cut short.
      const torn = lines.pop() ? 1 : 0;
      let bad = 0;
      for (const line of lines) {
        const parsed = parseLine(line);
        if (!parsed) bad++;
        else if (parsed.seq > logSeq) {
          logSeq = parsed.seq;
          messages.push(parsed.entry);
        }
      }
      if (torn || bad) this.domain.health.skippedLines(this.earlier(base, suffix), torn + bad, torn ? 'the bot stopped in the middle of writing the last one' : 'not a valid history line');
    }
    if (!found.length) return;
    const what = `${this.messagesTable}/${base}:${hash.digest('hex')}`;
    const taken = db.takeInOnce(what, () => {
      const held = this.readRows(db, chatId, true);
      // Nothing is dropped: a file holding more than the bound is read whole, as it was, until the next message.
      const merged = mergeEntries(held.messages, messages);
      const heldSummary = held.summary;
      this.replaceRows(db, chatId, merged, summary && heldSummary ? mergeSummaries(heldSummary, summary) : (summary ?? heldSummary));
    });
    // A chat read before its files turned up (a restore) is read again.
    if (taken) this.chats.delete(chatId);
    for (const suffix of found) keepAside(this.dataDir, this.earlier(base, suffix));
  }

  /**
   * A chat's rows (oldest first), its summary and how many rows it has. Rows past the bound are trimmed a batch at a
   * time (`slack`), so up to `slack` more may be there: only the newest `maxMessages` of those are read. More than that
   * were never trimmed (taken in from a larger file of the earlier layout, or kept under a larger bound): all are read,
   * as that file was, until the next message trims them.
   */
  private readRows(db: StoreDatabase, chatId: string, all = false): ChatHistory {
    const count = db.get<{ n: number }>(`SELECT count(*) AS n FROM ${this.messagesTable} WHERE chat = ?`, [chatId])?.n ?? 0;
    const limit = all || count > this.maxMessages + this.slack ? count : this.maxMessages;
    const rows = db.all<{ item: string }>(`SELECT item FROM ${this.messagesTable} WHERE chat = ? ORDER BY seq DESC LIMIT ?`, [chatId, limit]);
    const messages: HistoryEntry[] = [];
    let bad = 0;
    for (let i = rows.length - 1; i >= 0; i--) {
      try {
        messages.push(JSON.parse(rows[i].item) as HistoryEntry);
      } catch {
        bad++;
      }
    }
    if (bad) this.domain.health.skippedLines(db.file, bad, 'not a valid history row');
    noteAnswered(messages);
    const summaryRow = db.get<{ value: string }>(`SELECT value FROM ${this.summariesTable} WHERE key = ?`, [chatId]);
    let summary: ChatSummary | undefined;
    if (summaryRow) {
      try {
        summary = JSON.parse(summaryRow.value) as ChatSummary;
      } catch {
        this.domain.health.skippedLines(db.file, 1, 'not a valid summary row');
      }
    }
    return { messages, rows: count, ...(summary ? { summary } : {}) };
  }

  /** The chat's rows become `messages` and `summary` (inside a transaction). */
  private replaceRows(db: StoreDatabase, chatId: string, messages: HistoryEntry[], summary: ChatSummary | undefined): void {
    db.run(`DELETE FROM ${this.messagesTable} WHERE chat = ?`, [chatId]);
    const now = Date.now();
    for (const entry of messages) this.insertRow(db, chatId, entry, now);
    this.writeSummary(db, chatId, summary);
  }

  private writeSummary(db: StoreDatabase, chatId: string, summary: ChatSummary | undefined): void {
    if (summary) db.run(`INSERT INTO ${this.summariesTable} (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, [chatId, JSON.stringify(summary)]);
    else db.run(`DELETE FROM ${this.summariesTable} WHERE key = ?`, [chatId]);
  }

  /** Deletes the chat's rows but its newest `count` (inside a transaction). */
  private keepNewestRows(db: StoreDatabase, chatId: string, count: number): void {
    db.run(`DELETE FROM ${this.messagesTable} WHERE chat = ?1 AND seq <= (SELECT seq FROM ${this.messagesTable} WHERE chat = ?1 ORDER BY seq DESC LIMIT 1 OFFSET ?2)`, [chatId, count]);
  }

  private insertRow(db: StoreDatabase, chatId: string, entry: HistoryEntry, now: number): void {
    db.run(`INSERT INTO ${this.messagesTable} (chat, at, written, item) VALUES (?, ?, ?, ?)`, [chatId, Number.isFinite(entry.at) ? entry.at : null, now, JSON.stringify(entry)]);
  }

  /** The chat in memory, read from the database on first use. */
  private chat(chatId: string): ChatHistory {
    let chat = this.chats.get(chatId);
    if (!chat) {
      chat = this.readRows(this.dbFor(chatId), chatId);
      this.chats.set(chatId, chat);
    }
    return chat;
  }

  /** How many rows past the bound a chat may keep before they are trimmed (a quarter of the bound). */
  private get slack(): number {
    return Math.max(1, this.maxMessages >> 2);
  }

  private trim(chat: ChatHistory): void {
    const over = chat.messages.length - this.maxMessages;
    // One over (every message of a full chat): shift, which allocates nothing.
    if (over === 1) chat.messages.shift();
    else if (over > 1) chat.messages.splice(0, over);
  }

  /**
   * The changes made so far are written in the next transaction; resolves once it committed, rejects (DataWriteError)
   * when it could not be written (the changes stay in memory, are retried, and the data health reports them).
   */
  private write(): Promise<void> {
    if (!this.next) {
      if (this.held) {
        // The held entries ride along in this write.
        this.next = this.held;
        this.held = undefined;
        clearTimeout(this.heldTimer);
      } else {
        this.next = newBatch();
        this.domain.flushers.add(this.flushNow);
      }
      // After the I/O this turn started (an upstream request sent): the caller waits for no disk, and every append of
      // this turn shares the transaction.
      setImmediate(() => (this.writing = this.writing.then(() => this.writeNow())));
    }
    return this.next.done;
  }

  private async writeNow(): Promise<void> {
    const batch = this.next;
    if (!batch) return;
    const gate = this.domain.gate;
    // A backup holding the writes lets them go once its copy is made.
    const held = gate.closed;
    if (held) await gate.enter();
    // From here on, changes go into the next batch.
    this.next = undefined;
    const pending = this.pending;
    const rewrites = this.rewrites;
    const folds = this.folds;
    const erase = this.eraseNext;
    this.pending = [];
    this.rewrites = new Set();
    this.folds = new Set();
    this.eraseNext = false;
    try {
      const db = this.db;
      const now = Date.now();
      const grown = new Map<string, number>();
      db.transaction(() => {
        for (const { chat, entry } of pending) {
          if (rewrites.has(chat)) continue;
          this.insertRow(db, chat, entry, now);
          grown.set(chat, (grown.get(chat) ?? 0) + 1);
        }
        for (const chatId of rewrites) {
          const chat = this.chats.get(chatId);
          if (!chat) {
            // Forgotten (moved away): nothing of it stays.
            this.replaceRows(db, chatId, [], undefined);
            continue;
          }
          this.replaceRows(db, chatId, chat.messages, chat.summary);
          chat.rows = chat.messages.length;
        }
        for (const chatId of folds) {
          const chat = this.chats.get(chatId);
          // A chat rewritten whole (or forgotten) in this write needs nothing more.
          if (!chat || rewrites.has(chatId)) continue;
          // Its rows are what was folded, then what memory holds (a fold keeps the newest; the appends of this write
          // are in already): all but the newest `messages.length` go.
          this.keepNewestRows(db, chatId, chat.messages.length);
          this.writeSummary(db, chatId, chat.summary);
          chat.rows = chat.messages.length;
          grown.delete(chatId);
        }
        for (const [chatId, added] of grown) {
          const chat = this.chats.get(chatId);
          if (!chat) continue;
          chat.rows += added;
          // Rows past the bound go a batch at a time, not one per message.
          if (chat.rows > this.maxMessages + this.slack) {
            this.keepNewestRows(db, chatId, this.maxMessages);
            chat.rows = this.maxMessages;
          }
        }
      });
      if (erase) db.erase();
      this.foldsWritten++;
      this.retryMs = 500;
      this.domain.health.writeRecovered(this.unsavedName);
      if (!this.next && !this.held) this.domain.flushers.delete(this.flushNow);
      batch.resolve();
    } catch (err) {
      // Kept for the next write, before anything changed since.
      this.pending = [...pending, ...this.pending];
      for (const chat of rewrites) this.rewrites.add(chat);
      for (const chat of folds) this.folds.add(chat);
      this.eraseNext ||= erase;
      this.domain.health.writeFailed(this.unsavedName, err);
      batch.reject(new DataWriteError([this.unsavedName], err));
      clearTimeout(this.retry);
      this.retry = setTimeout(() => void this.write().catch(() => undefined), this.retryMs);
      this.retry.unref();
      this.retryMs = Math.min(30_000, this.retryMs * 2);
    } finally {
      if (held) gate.leave();
    }
  }

  /** Whether anything is not in the database yet. */
  private get dirty(): boolean {
    return this.pending.length > 0 || this.rewrites.size > 0 || this.folds.size > 0 || this.next !== undefined || this.held !== undefined;
  }

  /**
   * The write held entries wait for: the one already asked for, or one that starts with the next write asked for or
   * after `HELD_AT_MOST_MS`, whichever comes first.
   */
  private hold(): Promise<void> {
    if (this.next) return this.next.done;
    if (!this.held) {
      this.held = newBatch();
      this.domain.flushers.add(this.flushNow);
      this.heldTimer = setTimeout(this.writeHeldNow, this.heldAtMostMs);
    }
    return this.held.done;
  }

  /** Writes held entries (`heldForNextWrite`) now, without waiting for the next write (a turn ends without an answer). */
  writeHeld(): void {
    if (this.held) void this.write().catch(() => undefined);
  }

  /** The chat's rows are rewritten from memory in the next write (its removed words checkpointed out of the WAL). */
  private rewrite(chatId: string, erase = true): Promise<void> {
    this.rewrites.add(chatId);
    this.eraseNext ||= erase;
    return this.write();
  }

  /**
   * Appends one entry to a chat's history: in memory at once (reads started after this call see it), in the database
   * when the promise resolves (written together with the other appends of this turn of the event loop; a held entry
   * with the next write, see `AppendOptions.heldForNextWrite`).
   */
  async append(chatId: string, entry: HistoryEntry, options?: AppendOptions): Promise<void> {
    const chat = this.chat(chatId);
    chat.messages.push(entry);
    this.trim(chat);
    this.pending.push({ chat: chatId, entry });
    // A failed write is reported by the data health and retried; the entry stays in memory meanwhile.
    await (options?.heldForNextWrite ? this.hold() : this.write()).catch(() => undefined);
    for (const listener of this.appendListeners) {
      try {
        listener(chatId, entry);
      } catch {
        // A listener's failure is its own (it logs); the history write already happened.
      }
    }
  }

  /**
   * Whether the chat's history was written at or after `time` (Unix ms), from the rows' write times (a store catching
   * up after a crash skips the chats the crashed run never touched).
   */
  async changedSince(chatId: string, time: number): Promise<boolean> {
    if (this.pending.some((p) => p.chat === chatId) || this.rewrites.has(chatId) || this.folds.has(chatId)) return true;
    return this.dbFor(chatId).get(`SELECT 1 AS hit FROM ${this.messagesTable} WHERE chat = ? AND written >= ? LIMIT 1`, [chatId, time]) !== undefined;
  }

  /** The last `limit` entries, oldest first. */
  async recent(chatId: string, limit = this.maxMessages): Promise<HistoryEntry[]> {
    return this.chat(chatId).messages.slice(-limit);
  }

  /** Removes one message (deleted for everyone on WhatsApp), gone from every file. True when it was there. */
  async remove(chatId: string, messageId: string): Promise<boolean> {
    return (await this.removeWhere(chatId, (m) => m.id === messageId)) > 0;
  }

  /** Removes the entries of one chat that match (privacy delete) and waits until that is in every file. Returns how many. */
  async removeWhere(chatId: string, matches: (entry: HistoryEntry) => boolean): Promise<number> {
    const chat = this.chat(chatId);
    const gone = chat.messages.filter(matches);
    const kept = chat.messages.filter((m) => !gone.includes(m));
    const removed = gone.length;
    // Rows past the bound not trimmed yet may hold the words too: they go with the rewrite.
    if (removed === 0 && chat.rows <= chat.messages.length) return 0;
    for (const m of gone) this.removedEntries.add(m);
    chat.messages = kept;
    await this.rewrite(chatId);
    return removed;
  }

  /**
   * Changes the entries of one chat that match (an edited message: `change` gives the new entry, or undefined for an
   * entry that goes, as the bot's answer to the old text) in one transaction, and waits until that is written, the
   * old text in no file. Returns how many changed or went.
   */
  async updateWhere(chatId: string, matches: (entry: HistoryEntry) => boolean, change: (entry: HistoryEntry) => HistoryEntry | undefined): Promise<number> {
    const chat = this.chat(chatId);
    let changed = 0;
    const messages: HistoryEntry[] = [];
    for (const m of chat.messages) {
      const next = matches(m) ? (changed++, this.removedEntries.add(m), change(m)) : m;
      if (next) messages.push(next);
    }
    if (changed === 0 && chat.rows <= chat.messages.length) return 0;
    chat.messages = messages;
    await this.rewrite(chatId);
    return changed;
  }

  /**
   * Clears the chat's prompt history and its summary (`.reset`): the next answer starts a fresh conversation. Returns
   * how many messages went.
   */
  async clear(chatId: string): Promise<number> {
    const chat = this.chat(chatId);
    const removed = chat.messages.length;
    for (const m of chat.messages) this.removedEntries.add(m);
    chat.messages = [];
    delete chat.summary;
    await this.rewrite(chatId);
    return removed;
  }

  /**
   * Whether `entry` (as appended) was taken out by a delete, an edit or `.reset` since: the bot's answer to it, still
   * being made then, is not appended (it may repeat the removed words, and would bring them back after the delete).
   */
  wasRemoved(entry: HistoryEntry): boolean {
    return this.removedEntries.has(entry);
  }

  /** The chat's running summary of its folded turns, if it has one. */
  async summary(chatId: string): Promise<ChatSummary | undefined> {
    return this.chat(chatId).summary;
  }

  /**
   * Folds the chat's oldest messages into its summary: `folded` must still be the first messages of the history and
   * `base` still the chat's summary (the same objects the summary was made from). Then both change in one transaction
   * — the messages leave the history, `text` becomes the summary — and this resolves true once that is written.
   * When anything changed meanwhile (a message deleted or edited, `.reset`, the summary removed), nothing changes and
   * this resolves false: the new text may hold words that must be gone, and the turns are still there to fold later.
   */
  async fold(chatId: string, folded: HistoryEntry[], base: ChatSummary | undefined, text: string, now = Date.now()): Promise<boolean> {
    const chat = this.chat(chatId);
    if (!folded.length || chat.summary !== base || folded.length > chat.messages.length) return false;
    for (let i = 0; i < folded.length; i++) if (chat.messages[i] !== folded[i]) return false;
    const people = new Set(base?.people ?? []);
    const recent = [...(base?.recent ?? [])];
    for (const entry of folded) {
      if (entry.senderId) people.add(entry.senderId);
      if (entry.answers) people.add(entry.answers);
      if (entry.id) recent.push({ id: entry.id, role: entry.role, ...(entry.senderId ? { senderId: entry.senderId } : {}) });
    }
    chat.summary = { text, at: now, folded: (base?.folded ?? 0) + folded.length, people: [...people], recent: recent.slice(-SUMMARY_RECENT_IDS) };
    chat.messages = chat.messages.slice(folded.length);
    // One transaction holds both: a crash leaves either the old history or the new summary without those turns.
    this.folds.add(chatId);
    await this.write();
    return true;
  }

  /** Removes the chat's summary when it matches (a privacy delete, a message deleted for everyone); true when it went. */
  async removeSummaryWhere(chatId: string, matches: (summary: ChatSummary) => boolean): Promise<boolean> {
    const chat = this.chat(chatId);
    if (!chat.summary || !matches(chat.summary)) return false;
    delete chat.summary;
    await this.rewrite(chatId);
    return true;
  }

  /**
   * Calls `listener` after every entry appended to any chat's history — what people said and what the bot answered —
   * for stores that keep more than the prompt history (the recall log). Returns the function that unsubscribes.
   *
   * @example const off = histories.onAppend((chatId, entry) => log.add(chatId, entry));
   */
  onAppend(listener: HistoryAppendListener): () => void {
    this.appendListeners.add(listener);
    return () => this.appendListeners.delete(listener);
  }

  /** Writes what the chat has pending and forgets it in memory (it is read from the database at its next use). */
  async release(chatId: string): Promise<void> {
    if (this.dirty) await this.write();
    this.chats.delete(chatId);
  }

  /**
   * A private chat is known as `to` from now on (WhatsApp moved it from its LID to the phone number): the history of
   * `from` joins the history of `to`, both in time order (equal times: `to`'s first), bounded to `maxMessages` as
   * always; an entry `to` already holds is not taken twice. One transaction writes `to` and removes `from`, and
   * `from` is empty in memory from the call on. Rejects when it cannot be written (`from` stays on disk).
   */
  async moveChat(from: string, to: string): Promise<void> {
    if (from === to) return;
    const moving = this.chat(from);
    if (!moving.messages.length && !moving.summary && moving.rows === 0) return;
    const target = this.chat(to);
    target.messages = mergeEntries(target.messages, moving.messages).slice(-this.maxMessages);
    // The summary goes along; with one on both sides both texts are kept (the next fold makes one of them).
    if (moving.summary) target.summary = target.summary ? mergeSummaries(moving.summary, target.summary) : moving.summary;
    // Empty in memory, not forgotten: a use of `from` before the write (a fold coming back) would read its old rows
    // from the database again, and the write would put them back under `from`.
    this.chats.set(from, { messages: [], rows: 0 });
    this.rewrites.add(to);
    await this.rewrite(from);
  }

  /**
   * Resolves once the writes started so far are done (the appends of this turn, the rewrites asked for), without
   * forcing any: a test awaits it to see what the bot does behind a reply.
   */
  async whenIdle(): Promise<void> {
    while (this.next) {
      await this.next.done.catch(() => undefined);
      await this.writing;
    }
    await this.writing;
  }

  /**
   * The chats with a history or a summary (in the database, or opened in this run), each once, sorted. For the local
   * API's chat list.
   */
  async chatIds(): Promise<string[]> {
    const db = this.db;
    const ids = new Set(this.chats.keys());
    for (const { chat } of db.all<{ chat: string }>(`SELECT DISTINCT chat FROM ${this.messagesTable}`)) ids.add(chat);
    for (const { key } of db.all<{ key: string }>(`SELECT key FROM ${this.summariesTable}`)) ids.add(key);
    return [...ids].sort();
  }

  /**
   * Keeps the items `keep` returns of a chat's history (one rewrite when something changed, the removed words in no
   * file); resolves with how many went.
   */
  async rewriteWith(chatId: string, keep: (entries: HistoryEntry[]) => HistoryEntry[]): Promise<number> {
    const chat = this.chat(chatId);
    const kept = keep(chat.messages);
    const unchanged = kept.length === chat.messages.length && kept.every((e, i) => e === chat.messages[i]);
    if (unchanged && chat.rows <= chat.messages.length) return 0;
    const removed = chat.messages.length - kept.length;
    chat.messages = kept;
    await this.rewrite(chatId);
    return removed;
  }

  /** The histories as the engine of `HISTORY_STORE` (the privacy controls change them through this store's memory). */
  chatLog(): ChatLogEngine<HistoryEntry> {
    return {
      chats: () => this.chatIds(),
      chat: (chatId) => ({
        append: (entry) => this.append(chatId, entry),
        read: () => this.recent(chatId, Number.MAX_SAFE_INTEGER),
        rewrite: (keep) => this.rewriteWith(chatId, keep),
        removeWhere: (matches) => this.removeWhere(chatId, matches),
        flush: () => this.flush(),
      }),
      move: (from, to) => this.moveChat(from, to),
      // Bounded by count (`maxMessages`), not by age.
      prune: async () => 0,
    };
  }

  /** The summaries as the engine of `SUMMARIES_STORE`: a chat without one reads as `NO_SUMMARY`; they change only by folding or go whole. */
  summaryDocs(): DocEngine<ChatSummary> {
    return {
      keys: async () => {
        const keys: string[] = [];
        for (const chatId of await this.chatIds()) if (await this.summary(chatId)) keys.push(chatId);
        return keys;
      },
      doc: (chatId) => ({
        get: async () => (await this.summary(chatId)) ?? { ...NO_SUMMARY, people: [], recent: [] },
        update: () => Promise.reject(new Error('a summary changes only by folding the history (see HistoryStore.fold)')),
        remove: async () => void (await this.removeSummaryWhere(chatId, () => true)),
        flush: () => this.flush(),
      }),
    };
  }

  /** Writes everything pending now (stop, backups); rejects (DataWriteError) when it cannot be written. */
  async flush(): Promise<void> {
    if (this.dirty) await this.write();
    await this.writing;
  }
}
