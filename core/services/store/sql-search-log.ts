import { rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { safeFileName } from '../../api/file-name.js';
import { writeFileAtomicSafe as writeFileAtomic } from './atomic.js';
import { gatedWrite, type DataDomain } from './data-domain.js';
import { DATABASE_FILE, databaseFor, MIGRATED_DIR, type StoreDatabase } from './database.js';
import { isAttachedPath, moveFolderContents } from './search-log-files.js';
import { headerProblem, keepAside, linesOf, monthFilesUnder, setAsideInPlace } from './search-log-import.js';
import { tableOf } from './sql-chat-log.js';
import type { SearchHit, SearchLogItem } from './store-declarations.js';

export type { SearchHit, SearchLogItem };

/**
 * Rows of one chat share a range of rowids, `chat number × CHAT_SPAN` upwards, in the order written: the full-text
 * index is scoped to one chat by a rowid range (no join, no other chat's rows read), and "newest first" is the
 * index's own order.
 */
const CHAT_SPAN = 2 ** 40;
/** Per query word, how many of its newest matches are fused (enough to hold every match of a rare word). */
const PER_TERM = 400;
const MAX_QUERY_TERMS = 8;
const WRITTEN = Promise.resolve();

/** The words of a query or message as the index sees them (letters and digits, lower case). */
export function queryTerms(text: string): string[] {
  return [...new Set(text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean))];
}

/** A term as one FTS5 string (its quotes doubled), so no word of a user's query is read as FTS5 syntax. */
const phrase = (term: string) => `"${term.replace(/"/g, '""')}"`;

/** What a search log is: its declaration's name, where its files live, how a stored value becomes an item. */
export interface SearchLogSetup<I extends SearchLogItem> {
  dataDir: string;
  /** `core`, `whatsapp` or the plugin's name. */
  namespace: string;
  /** The declaration's name (also the kind the month files of earlier versions name in their first line). */
  name: string;
  /** Where it lives, absolute: each chat's attached files in `<folder>/<chat>/`, and the month files of earlier versions. */
  folder: string;
  domain: DataDomain;
  /** What it is, in words (for the log and the data health). */
  title: string;
  /** The item a stored value is (checked, normalised), or undefined when it is not one. */
  item(value: unknown): I | undefined;
  /** Items without words are kept too (an erased marker); by default they are skipped. */
  keepsEmpty?: boolean;
  /** Files that belong to an item (paths inside the chat's folder): deleted with the item, moved with the chat. */
  files?(item: I): string[];
  /** Lines of a month file of an earlier version that were not items (skipped when it was taken in). */
  badLines?(file: string, count: number): void;
  /** Told of each chat's log when it is first used in this run (a plugin catches up after a crash). */
  onFirstUse?(log: SearchLogChat<I>): void;
}

/**
 * The items of one `Store.chatSearchLog` declaration, every chat's, in the store database: a table of items (chat,
 * time, message id, the item as JSON) and a contentless FTS5 index of their words (`detail=none`: which rows hold a
 * word, nothing more; accents and case ignored), its rowids those of the items. Every call reads or changes one chat;
 * there is no search across chats.
 *
 * What a delete, an edit or retention takes leaves every file: the index is kept with FTS5's secure delete and merged
 * (`optimize`) so no segment keeps a removed word, the table's pages are zeroed (`secure_delete`), and the WAL is
 * checkpointed. Month files of earlier versions are taken in once, each in the transaction that records it done, then
 * kept aside under `data/migrated/` until a removal makes that copy older than the log.
 */
export class SqlSearchLog<I extends SearchLogItem = SearchLogItem> {
  private readonly items: string;
  private readonly chatsTable: string;
  private readonly index: string;
  private prepared: StoreDatabase | undefined;
  private readonly views = new Map<string, SearchLogChat<I>>();
  /** Items added without waiting (`addSoon`), per chat, in order: written together, before any other use of the log. */
  private pending = new Map<string, I[]>();
  private pendingTimer: NodeJS.Timeout | undefined;
  private settling: Promise<void> | undefined;
  /** `whenIdle` callers waiting for the scheduled write to start. */
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly setup: SearchLogSetup<I>) {
    this.items = tableOf('search-log', setup.namespace, setup.name);
    this.chatsTable = tableOf('search-log-chats', setup.namespace, setup.name);
    this.index = tableOf('search-log-words', setup.namespace, setup.name);
  }

  /** The database (opened again after the app closed it at a stop). */
  private get db(): StoreDatabase {
    return databaseFor(this.setup.dataDir);
  }

  private ready(): StoreDatabase {
    const db = this.db;
    if (this.prepared === db) return db;
    const exists = db.get(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?`, [this.index.slice(1, -1).replace(/""/g, '"')]) !== undefined;
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${this.items} (row INTEGER PRIMARY KEY, chat TEXT NOT NULL, at INTEGER NOT NULL, id TEXT, item TEXT NOT NULL);` +
        `CREATE TABLE IF NOT EXISTS ${this.chatsTable} (n INTEGER PRIMARY KEY, chat TEXT NOT NULL UNIQUE);` +
        `CREATE VIRTUAL TABLE IF NOT EXISTS ${this.index} USING fts5(text, content='', contentless_delete=1, detail=none, tokenize='unicode61 remove_diacritics 2');`,
    );
    // A deleted row leaves the index's pages at once (not at a later merge).
    if (!exists) db.run(`INSERT INTO ${this.index} (${this.index}, rank) VALUES ('secure-delete', 1)`);
    this.prepared = db;
    this.takeInMonthFiles(db);
    return db;
  }

  /** Where this log's month files of earlier versions are kept once taken in. */
  private get keptAside(): string {
    return path.join(this.setup.dataDir, MIGRATED_DIR, path.relative(this.setup.dataDir, this.setup.folder));
  }

  /**
   * Takes in the month files of earlier versions: each file with the row that records it, in one transaction; then
   * moves it aside. A crash between the two leaves a file whose row exists: it is only moved. A file whose first line
   * is not its chat's header (damaged, or another chat's) is set aside in place with its bytes kept.
   */
  private takeInMonthFiles(db: StoreDatabase): void {
    const health = this.setup.domain.health;
    for (const month of monthFilesUnder(this.setup.folder, this.items)) {
      const problem = headerProblem(month.text.slice(0, Math.max(0, month.text.indexOf('\n'))) || month.text, this.setup.name, month.chatId);
      if (problem) {
        const movedTo = setAsideInPlace(month.file);
        health.corrupt(month.file, movedTo, `${this.setup.title}: ${problem}`);
        continue;
      }
      let bad = 0;
      const taken = db.takeInOnce(month.key, () => {
        for (const line of linesOf(month.text)) {
          const item = this.parse(line);
          if (!item) bad++;
          else if (this.worthKeeping(item)) this.insert(db, month.chatId, item);
        }
      });
      if (taken && bad) this.setup.badLines?.(month.file, bad);
      keepAside(month.file, this.setup.folder, this.keptAside);
    }
  }

  private parse(text: string): I | undefined {
    try {
      return this.setup.item(JSON.parse(text));
    } catch {
      return undefined;
    }
  }

  /** Whether an item is kept: one with words (or without, when the log keeps those). */
  private worthKeeping(item: I | undefined): item is I {
    return Boolean(item && (this.setup.keepsEmpty || item.text.trim()));
  }

  /** The chat's number (its rowid range), made when `create`. */
  private numberOf(db: StoreDatabase, chatId: string, create: boolean): number | undefined {
    const found = db.get<{ n: number }>(`SELECT n FROM ${this.chatsTable} WHERE chat = ?`, [chatId]);
    if (found || !create) return found?.n;
    db.run(`INSERT INTO ${this.chatsTable} (chat) VALUES (?)`, [chatId]);
    return db.get<{ n: number }>(`SELECT n FROM ${this.chatsTable} WHERE chat = ?`, [chatId])!.n;
  }

  private insert(db: StoreDatabase, chatId: string, item: I): void {
    const n = this.numberOf(db, chatId, true)!;
    const last = db.get<{ row: number | null }>(`SELECT max(row) AS row FROM ${this.items} WHERE row >= ? AND row < ?`, [n * CHAT_SPAN, (n + 1) * CHAT_SPAN])?.row;
    const row = (last ?? n * CHAT_SPAN) + 1;
    db.run(`INSERT INTO ${this.items} (row, chat, at, id, item) VALUES (?, ?, ?, ?, ?)`, [row, chatId, item.at, item.id ?? null, JSON.stringify(item)]);
    if (item.text) db.run(`INSERT INTO ${this.index} (rowid, text) VALUES (?, ?)`, [row, item.text]);
  }

  private deleteRow(db: StoreDatabase, row: number): void {
    db.run(`DELETE FROM ${this.items} WHERE row = ?`, [row]);
    db.run(`DELETE FROM ${this.index} WHERE rowid = ?`, [row]);
  }

  /** Runs a write now, or once a backup holding the writes lets them go (in order); a failure is reported and thrown. */
  private write<R>(work: (db: StoreDatabase) => R): Promise<R> {
    return gatedWrite(this.setup.domain, path.join(path.resolve(this.setup.dataDir), DATABASE_FILE), () => work(this.ready()));
  }

  /** Writes the items added without waiting (one transaction); on failure they stay, to be tried again. */
  private settle(): Promise<void> {
    if (this.pendingTimer) clearTimeout(this.pendingTimer);
    this.pendingTimer = undefined;
    // Woken now, they find the write under way (`settling`, set below) and wait for it.
    for (const wake of this.idleWaiters.splice(0)) wake();
    if (this.settling) return this.settling.then(() => this.settle());
    if (!this.pending.size) return WRITTEN;
    const batch = this.pending;
    this.pending = new Map();
    this.settling = this.write((db) =>
      db.transaction(() => {
        for (const [chatId, items] of batch) for (const item of items) this.insert(db, chatId, item);
      }),
    )
      .catch(() => {
        // Kept, before anything added meanwhile, for the next write (the data health said why).
        for (const [chatId, items] of this.pending) batch.set(chatId, [...(batch.get(chatId) ?? []), ...items]);
        this.pending = batch;
      })
      .finally(() => (this.settling = undefined));
    return this.settling;
  }

  /**
   * Resolves once the items added without waiting were written on their own, after their delay (nothing is forced,
   * unlike `flush`): what a test awaits to see them in the database instead of sleeping. Items a failed write kept
   * wait for the next use of the log, not for this.
   */
  async whenIdle(): Promise<void> {
    for (;;) {
      if (this.settling) await this.settling;
      else if (this.pendingTimer) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
      else return;
    }
  }

  /** Items added without waiting that could not be written yet. */
  unsavedCount(): number {
    let n = 0;
    for (const items of this.pending.values()) n += items.length;
    return n;
  }

  /** The log of one chat (the id comes from the message being handled or the tool call's binding). */
  chat(chatId: string): SearchLogChat<I> {
    if (typeof chatId !== 'string' || !chatId.trim()) throw new TypeError('a search log needs the chat id');
    let view = this.views.get(chatId);
    if (!view) {
      view = new SearchLogChat<I>(this, chatId, path.join(this.setup.folder, safeFileName(chatId)));
      this.views.set(chatId, view);
      this.setup.onFirstUse?.(view);
    }
    return view;
  }

  /** The chats that have items (or items waiting to be written). */
  async chatIds(): Promise<string[]> {
    await this.settle();
    const db = this.ready();
    const ids = db
      .all<{ chat: string }>(`SELECT c.chat AS chat FROM ${this.chatsTable} c WHERE EXISTS (SELECT 1 FROM ${this.items} WHERE row > c.n * ${CHAT_SPAN} AND row < (c.n + 1) * ${CHAT_SPAN})`)
      .map((r) => r.chat);
    for (const chatId of this.pending.keys()) if (!ids.includes(chatId)) ids.push(chatId);
    return ids;
  }

  /** Every row of a chat, in the order written. */
  private rowsOf(db: StoreDatabase, chatId: string): Array<{ row: number; item: I }> {
    const n = this.numberOf(db, chatId, false);
    if (n === undefined) return [];
    const out: Array<{ row: number; item: I }> = [];
    for (const r of db.all<{ row: number; item: string }>(`SELECT row, item FROM ${this.items} WHERE row > ? AND row < ? ORDER BY row`, [n * CHAT_SPAN, (n + 1) * CHAT_SPAN])) {
      const item = this.parse(r.item);
      if (item) out.push({ row: r.row, item });
    }
    return out;
  }

  /** @internal SearchLogChat */
  async add(chatId: string, inputs: I[]): Promise<void> {
    const items = this.kept(inputs);
    await this.settle();
    if (!items.length) return;
    await this.write((db) => db.transaction(() => items.forEach((item) => this.insert(db, chatId, item))));
  }

  /** @internal SearchLogChat */
  addSoon(chatId: string, input: I, delayMs: number): boolean {
    const item = this.setup.item(input);
    if (!this.worthKeeping(item)) return false;
    const list = this.pending.get(chatId);
    if (list) list.push(item);
    else this.pending.set(chatId, [item]);
    // Not unref'd: a process that ends on its own still writes what it was told.
    this.pendingTimer ??= setTimeout(() => void this.settle(), delayMs);
    return true;
  }

  /** @internal SearchLogChat */
  async search(chatId: string, query: string, options: { limit?: number; excludeId?: string; notBefore?: number }): Promise<Array<SearchHit<I>>> {
    const terms = queryTerms(String(query ?? '')).slice(0, MAX_QUERY_TERMS);
    if (!terms.length) return [];
    await this.settle();
    const db = this.ready();
    const n = this.numberOf(db, chatId, false);
    if (n === undefined) return [];
    const limit = Math.max(1, Math.min(20, Math.floor(options.limit ?? 5) || 5));
    const from = n * CHAT_SPAN;
    const to = (n + 1) * CHAT_SPAN;
    const notBefore = options.notBefore ?? 0;
    // The index alone gives the candidates (rowids in this chat's range, newest first): reading an item per match
    // through a join cost ~20× the index's own time; items are read only for the few shown.
    const matches = (term: string, count: number, below = to) =>
      db.all<{ rowid: number }>(`SELECT rowid FROM ${this.index} WHERE ${this.index} MATCH ? AND rowid > ? AND rowid < ? ORDER BY rowid DESC LIMIT ?`, [phrase(term), from, below, count]).map((r) => r.rowid);
    const chosen: Array<{ row: number; item: string }> = [];
    /** Takes a candidate when its item is at or after `notBefore` and not the excluded message; true once `limit` are taken. */
    const take = (row: number) => {
      const r = db.get<{ at: number; id: string | null; item: string }>(`SELECT at, id, item FROM ${this.items} WHERE row = ?`, [row]);
      if (r && r.at >= notBefore && (options.excludeId === undefined || r.id !== options.excludeId)) chosen.push({ row, item: r.item });
      return chosen.length >= limit;
    };
    if (terms.length === 1) {
      // One word: the newest matches, a batch at a time until enough are taken.
      for (let below = to, batch = limit * 2; ; batch = PER_TERM) {
        const rows = matches(terms[0], batch, below);
        if (rows.some(take) || rows.length < batch) break;
        below = rows.at(-1)!;
      }
    } else {
      // Each word's newest PER_TERM matches, fused: a word weighs more the fewer messages it is in (idf). The chat's
      // size is its rowid span (two index seeks; rows removed since only make every word a little rarer alike).
      // (Two ordered seeks: min() and max() together in one query would scan the range.)
      const lo = db.get<{ row: number }>(`SELECT row FROM ${this.items} WHERE row > ? AND row < ? ORDER BY row LIMIT 1`, [from, to])?.row;
      const hi = db.get<{ row: number }>(`SELECT row FROM ${this.items} WHERE row > ? AND row < ? ORDER BY row DESC LIMIT 1`, [from, to])?.row;
      const size = lo !== undefined && hi !== undefined ? hi - lo + 1 : 0;
      const scores = new Map<number, number>();
      for (const term of terms) {
        const rows = matches(term, PER_TERM);
        if (!rows.length) continue;
        const idf = Math.log(1 + size / rows.length);
        for (const row of rows) scores.set(row, (scores.get(row) ?? 0) + idf);
      }
      // Equal scores: the newer message first.
      const ranked = [...scores.entries()].sort((a, b) => b[1] - a[1] || b[0] - a[0]);
      for (const [row] of ranked) if (take(row)) break;
    }
    const neighbour = (sql: string, row: number, bound: number) => {
      const r = db.get<{ item: string }>(sql, [row, bound]);
      return r ? this.parse(r.item) : undefined;
    };
    const hits: Array<SearchHit<I>> = [];
    for (const { row, item } of chosen) {
      const message = this.parse(item);
      if (!message) continue;
      const before = neighbour(`SELECT item FROM ${this.items} WHERE row < ? AND row > ? ORDER BY row DESC LIMIT 1`, row, from);
      const after = neighbour(`SELECT item FROM ${this.items} WHERE row > ? AND row < ? ORDER BY row LIMIT 1`, row, to);
      hits.push({ message, ...(before ? { before } : {}), ...(after ? { after } : {}) });
    }
    return hits;
  }

  /** @internal SearchLogChat */
  async where(chatId: string, matches: (item: I) => boolean): Promise<I[]> {
    await this.settle();
    return this.rowsOf(this.ready(), chatId)
      .map((r) => r.item)
      .filter((item) => matches(item));
  }

  /** @internal SearchLogChat: the chat's newest item, if any. */
  async last(chatId: string): Promise<I | undefined> {
    await this.settle();
    const db = this.ready();
    const n = this.numberOf(db, chatId, false);
    if (n === undefined) return undefined;
    const r = db.get<{ item: string }>(`SELECT item FROM ${this.items} WHERE row > ? AND row < ? ORDER BY row DESC LIMIT 1`, [n * CHAT_SPAN, (n + 1) * CHAT_SPAN]);
    return r ? this.parse(r.item) : undefined;
  }

  /** @internal SearchLogChat: the inputs that are items worth keeping, as kept. */
  kept(inputs: unknown[]): I[] {
    return inputs.map((e) => this.setup.item(e)).filter((e): e is I => this.worthKeeping(e));
  }

  /** @internal SearchLogChat */
  async size(chatId: string): Promise<number> {
    await this.settle();
    const db = this.ready();
    const n = this.numberOf(db, chatId, false);
    if (n === undefined) return 0;
    return db.get<{ n: number }>(`SELECT count(*) AS n FROM ${this.items} WHERE row > ? AND row < ?`, [n * CHAT_SPAN, (n + 1) * CHAT_SPAN])?.n ?? 0;
  }

  /** Deletes the attached files of items that leave the log, or that an item no longer names after a change. */
  private async removeFiles(dir: string, changes: Array<[I, I | undefined]>): Promise<void> {
    const files = this.setup.files;
    if (!files) return;
    for (const [item, next] of changes) {
      const kept = new Set(next ? files(next) : []);
      for (const rel of files(item)) if (isAttachedPath(rel) && !kept.has(rel)) await rm(path.join(dir, rel), { force: true });
    }
  }

  /**
   * Removes (no `change`) or changes the items of a chat that match, in one transaction; their files go first (a write
   * that then fails leaves an item without its file, never a file of a removed item). Resolves with how many.
   */
  async rewrite(chatId: string, dir: string, matches: (item: I) => boolean, change?: (item: I) => I): Promise<number> {
    await this.settle();
    const db = this.ready();
    const touched = this.rowsOf(db, chatId)
      .filter((r) => matches(r.item))
      .map((r) => ({ ...r, next: change ? (this.setup.item(change(r.item)) ?? r.item) : undefined }));
    if (!touched.length) return 0;
    const changes = touched.map((t): [I, I | undefined] => [t.item, t.next]);
    await this.removeFiles(dir, changes);
    await this.write((db) =>
      db.transaction(() => {
        for (const { row, next } of touched) {
          if (!next) {
            this.deleteRow(db, row);
            continue;
          }
          db.run(`UPDATE ${this.items} SET at = ?, id = ?, item = ? WHERE row = ?`, [next.at, next.id ?? null, JSON.stringify(next), row]);
          db.run(`DELETE FROM ${this.index} WHERE rowid = ?`, [row]);
          if (next.text) db.run(`INSERT INTO ${this.index} (rowid, text) VALUES (?, ?)`, [row, next.text]);
        }
      }),
    );
    if (this.took(changes)) this.erased();
    return touched.length;
  }

  /**
   * Whether a change took something the items held (an item, or a word, an id, a name no longer in its item), as a
   * delete, an edit or retention does: only then is what is left of it erased, and the copy of the earlier layout,
   * older than the log now, deleted. A change that only adds (a note's later context) or renames attached files keeps
   * that copy.
   */
  private took(changes: Array<[I, I | undefined]>): boolean {
    return changes.some(([item, next]) => {
      if (!next) return true;
      const renamed = new Set(this.setup.files?.(item) ?? []);
      const kept = new Set(stringsOf(next));
      return stringsOf(item).some((s) => !kept.has(s) && !renamed.has(s));
    });
  }

  /** Drops every chat's items written before `cutoff` (epoch ms), their files with them; resolves with how many went. */
  async prune(cutoff: number): Promise<number> {
    // Every chat with items is used by the sweep (at start): a plugin catching up after a crash hears of each.
    for (const chatId of await this.chatIds()) this.chat(chatId);
    const db = this.ready();
    const old = db.all<{ row: number; chat: string; item: string }>(`SELECT row, chat, item FROM ${this.items} WHERE at < ?`, [cutoff]);
    if (!old.length) return 0;
    for (const r of old) {
      const item = this.parse(r.item);
      if (item) await this.removeFiles(path.join(this.setup.folder, safeFileName(r.chat)), [[item, undefined]]);
    }
    await this.write((db) => db.transaction(() => old.forEach((r) => this.deleteRow(db, r.row))));
    this.erased();
    return old.length;
  }

  /**
   * A private chat is known as `to` from now on (WhatsApp moved it from its LID to the phone number): the items of
   * `from` join those of `to` in time order (equal times: `to`'s first), an item `to` holds already (the same JSON) is
   * not taken twice, and the attached files follow. One transaction: a crash leaves the move undone or done.
   */
  async moveChat(from: string, to: string): Promise<void> {
    if (from === to) return;
    await this.settle();
    const db = this.ready();
    if (this.numberOf(db, from, false) === undefined) return;
    const fromDir = path.join(this.setup.folder, safeFileName(from));
    await moveFolderContents(fromDir, path.join(this.setup.folder, safeFileName(to)));
    await rm(fromDir, { recursive: true, force: true });
    await this.write((db) =>
      db.transaction(() => {
        const ours = this.rowsOf(db, to);
        const theirs = this.rowsOf(db, from);
        const held = new Map<string, number>();
        for (const { item } of ours) {
          const json = JSON.stringify(item);
          held.set(json, (held.get(json) ?? 0) + 1);
        }
        const incoming = theirs.filter(({ item }) => {
          const json = JSON.stringify(item);
          const copies = held.get(json) ?? 0;
          if (copies) held.set(json, copies - 1);
          return !copies;
        });
        const merged = [...ours, ...incoming].map((r) => r.item).sort((a, b) => a.at - b.at);
        for (const { row } of [...ours, ...theirs]) this.deleteRow(db, row);
        db.run(`DELETE FROM ${this.chatsTable} WHERE chat = ?`, [from]);
        for (const item of merged) this.insert(db, to, item);
      }),
    );
    this.views.delete(from);
    db.erase();
  }

  /** Writes the items added without waiting; resolves with how many could not be written (they are kept and retried). */
  async flush(): Promise<number> {
    await this.settle();
    return this.unsavedCount();
  }

  /**
   * What a removal or a change took leaves every file: the index merged into one segment without it, the WAL
   * checkpointed, and the copy of the earlier layout (now older than the log) deleted. Chats left without items are
   * forgotten (their id too).
   */
  private erased(): void {
    const db = this.ready();
    db.run(`DELETE FROM ${this.chatsTable} WHERE NOT EXISTS (SELECT 1 FROM ${this.items} WHERE row > n * ${CHAT_SPAN} AND row < (n + 1) * ${CHAT_SPAN})`);
    db.run(`INSERT INTO ${this.index} (${this.index}) VALUES ('optimize')`);
    db.erase();
    rmSync(this.keptAside, { recursive: true, force: true });
  }
}

/**
 * The search log of ONE chat: an object bound to its chat id when it is made (by the store, from the message or the
 * tool call's binding — never from what a model asked for). Every method reads or changes that chat only.
 */
export class SearchLogChat<I extends SearchLogItem = SearchLogItem> {
  constructor(
    private readonly log: SqlSearchLog<I>,
    readonly chatId: string,
    /** The chat's folder: its items' attached files live under it. */
    readonly dir: string,
  ) {}

  /** Where a file attached to an item of this chat lives; throws for a path outside the chat's folder. */
  filePath(rel: string): string {
    if (!isAttachedPath(rel)) throw new TypeError(`"${String(rel).slice(0, 80)}" is not a file path inside a chat's folder (e.g. audio/m1.ogg)`);
    return path.join(this.dir, rel);
  }

  /** Writes a file to attach to an item (atomically): add the item once it is written, so no item names a missing file. */
  async putFile(rel: string, bytes: Buffer): Promise<void> {
    await writeFileAtomic(this.filePath(rel), bytes);
  }

  /**
   * This chat's work, one after another: a catch-up after a crash (started when the chat is first used) is done before
   * the search that follows it reads the log.
   */
  private queue: Promise<unknown> = Promise.resolve();

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  add(item: I): Promise<void> {
    return this.serial(() => this.log.add(this.chatId, [item]));
  }

  addMany(items: I[]): Promise<void> {
    return this.serial(() => this.log.add(this.chatId, items));
  }

  addSoon(item: I, delayMs: number): boolean {
    return this.log.addSoon(this.chatId, item, delayMs);
  }

  /**
   * The best matches of `query` in this chat, with the item before and after each. `excludeId` leaves out one message
   * (the question being asked); only items at or after `notBefore` (the retention cutoff) are returned.
   */
  search(query: string, options: { limit?: number; excludeId?: string; notBefore?: number } = {}): Promise<Array<SearchHit<I>>> {
    return this.serial(() => this.log.search(this.chatId, query, options));
  }

  where(matches: (item: I) => boolean): Promise<I[]> {
    return this.serial(() => this.log.where(this.chatId, matches));
  }

  size(): Promise<number> {
    return this.serial(() => this.log.size(this.chatId));
  }

  removeWhere(matches: (item: I) => boolean): Promise<number> {
    return this.serial(() => this.log.rewrite(this.chatId, this.dir, matches));
  }

  changeWhere(matches: (item: I) => boolean, change: (item: I) => I): Promise<number> {
    return this.serial(() => this.log.rewrite(this.chatId, this.dir, matches, change));
  }

  /**
   * After a crash: adds what `recent` (the chat's own recent items, oldest first) holds after the last item in the
   * log — items the crash caught before they were written. With none in the log, those from `since` on. Resolves with
   * how many were added.
   */
  catchUp(recent: () => Promise<I[]>, since: number): Promise<number> {
    return this.serial(() => this.catchUpNow(recent, since));
  }

  private async catchUpNow(recent: () => Promise<I[]>, since: number): Promise<number> {
    const last = await this.log.last(this.chatId);
    const entries = this.log.kept(await recent());
    let from: number;
    if (last) {
      // The same message: its time, words and id (an item's other fields may differ between the history and the log).
      const same = (e: I) => e.at === last.at && e.text === last.text && e.id === last.id;
      let found = -1;
      for (let i = entries.length - 1; i >= 0 && found < 0; i--) if (same(entries[i])) found = i;
      // Not in the history (a message only the observer logged): what came later by time.
      from = found >= 0 ? found + 1 : entries.findIndex((e) => e.at > last.at);
    } else from = entries.findIndex((e) => e.at >= since);
    if (from < 0) return 0;
    const missing = entries.slice(from);
    await this.log.add(this.chatId, missing);
    return missing.length;
  }
}

/** Every string a JSON value holds, at any depth. */
function stringsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) stringsOf(v, out);
  return out;
}
