import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { gatedWrite, type DataDomain } from './data-domain.js';
import { DATABASE_FILE, databaseFor, keepAside, MIGRATED_DIR, type StoreDatabase } from './database.js';
import { checkValue } from './schemas.js';
import type { ChatLogDeclaration } from './store-declarations.js';

/** A table name for a declaration of a namespace (`core`, `whatsapp`, a plugin): quoted, so any name is one. */
export function tableOf(kind: string, namespace: string, name: string): string {
  return `"${`${kind}:${namespace}:${name}`.replace(/"/g, '""')}"`;
}

/** One chat's log, as the stores and the privacy controls use it. */
export interface ChatLogView<I> {
  append(item: I): Promise<void>;
  read(): Promise<I[]>;
  /** Keeps the items `keep` returns (one transaction when something changes); resolves with how many went. */
  rewrite(keep: (items: I[]) => I[]): Promise<number>;
  removeWhere(matches: (item: I) => boolean): Promise<number>;
  flush(): Promise<void>;
}

/** Every chat's log of one declaration, as the stores and the privacy controls use it (`SqlChatLog`, or an engine served for it). */
export interface ChatLogEngine<I> {
  chats(): string[] | Promise<string[]>;
  chat(chatId: string): ChatLogView<I>;
  /** Every item of `from` goes to `to` (nothing stays under `from`). */
  move(from: string, to: string): Promise<void>;
  /** Drops every chat's items written before `cutoff` (epoch ms); resolves with how many went. */
  prune(cutoff: number): Promise<number>;
}

const WRITTEN = Promise.resolve();

/**
 * The items of one `Store.chatLog` declaration, every chat's, in one table of the store database (`chat`, `at`,
 * the item as JSON, in the order written). A change that removes or rewrites items runs as one transaction and is
 * checkpointed out of the WAL, so removed words are in no file. The JSON-lines files of earlier versions
 * (`<path>/<chat>.jsonl`) are imported on first use, in the same transaction that records it done, then moved under
 * `data/migrated/` (a crash between the two only moves them at the next start); that copy goes once a removal in this
 * log (a delete, a retention sweep) makes it older than the log.
 */
export class SqlChatLog<I> implements ChatLogEngine<I> {
  private readonly table: string;
  private prepared: StoreDatabase | undefined;

  /** The database (opened again after the app closed it at a stop). */
  private get db(): StoreDatabase {
    return databaseFor(this.dataDir);
  }

  constructor(
    private readonly dataDir: string,
    namespace: string,
    private readonly decl: ChatLogDeclaration<I>,
    /** The folder of the earlier JSON-lines layout (absolute). */
    private readonly folder: string,
    private readonly domain: DataDomain,
    private readonly title: string,
  ) {
    this.table = tableOf('chat-log', namespace, decl.name);
  }

  private ready(): void {
    if (this.prepared === this.db) return;
    this.db.exec(
      `CREATE TABLE IF NOT EXISTS ${this.table} (seq INTEGER PRIMARY KEY AUTOINCREMENT, chat TEXT NOT NULL, at INTEGER, item TEXT NOT NULL);` +
        `CREATE INDEX IF NOT EXISTS ${this.table.slice(0, -1)}:chat" ON ${this.table} (chat, seq);`,
    );
    this.migrate();
    this.prepared = this.db;
  }

  /** Where this log's files of the earlier layout are kept once imported. */
  private get keptAside(): string {
    return path.join(this.db.dataDir, MIGRATED_DIR, path.relative(this.db.dataDir, this.folder));
  }

  /**
   * Imports the JSON-lines files of the earlier layout: each file with the row that records it imported, in one
   * transaction; then moves it aside. A crash between the two leaves a file whose row exists: it is only moved.
   */
  private migrate(): void {
    const names = existsSync(this.folder) ? readdirSync(this.folder).filter((n) => n.endsWith('.jsonl')) : [];
    for (const name of names) {
      const file = path.join(this.folder, name);
      const text = readFileSync(file, 'utf8');
      // Named by its content: the same file found again (a crash before it moved aside) is not taken in twice.
      const what = `${this.table}/${name}:${createHash('sha256').update(text).digest('hex')}`;
      this.db.takeInOnce(what, () => {
        const chat = decodeURIComponent(name.slice(0, -'.jsonl'.length));
        const { items, bad } = this.parse(text);
        if (bad) this.domain.health.skippedLines(file, bad, `not a valid ${this.title} line`);
        for (const item of items) this.insert(chat, item);
      });
      keepAside(this.db.dataDir, file);
    }
  }

  private parse(text: string): { items: I[]; bad: number } {
    const items: I[] = [];
    let bad = 0;
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        const item = JSON.parse(line) as I;
        if (checkValue(this.decl.schema, item) === undefined) items.push(item);
        else bad++;
      } catch {
        bad++;
      }
    }
    return { items, bad };
  }

  private insert(chat: string, item: I): void {
    const at = this.decl.options.at?.(item);
    this.db.run(`INSERT INTO ${this.table} (chat, at, item) VALUES (?, ?, ?)`, [chat, typeof at === 'number' && Number.isFinite(at) ? at : null, JSON.stringify(item)]);
  }

  /** Runs a write now, or once a backup holding the writes lets them go (in order); a failure is reported and thrown. */
  private write<R>(work: () => R): Promise<R> {
    return gatedWrite(this.domain, path.join(path.resolve(this.dataDir), DATABASE_FILE), work);
  }

  private readNow(chat: string): Array<{ seq: number; item: I }> {
    this.ready();
    const rows = this.db.all<{ seq: number; item: string }>(`SELECT seq, item FROM ${this.table} WHERE chat = ? ORDER BY seq`, [chat]);
    const out: Array<{ seq: number; item: I }> = [];
    let bad = 0;
    for (const row of rows) {
      const { items, bad: wrong } = this.parse(row.item);
      bad += wrong;
      if (items.length) out.push({ seq: row.seq, item: items[0] });
    }
    if (bad) this.domain.health.skippedLines(this.db.file, bad, `not a valid ${this.title} item`);
    return out;
  }

  /** The chats with items. */
  chats(): string[] {
    this.ready();
    return this.db.all<{ chat: string }>(`SELECT DISTINCT chat FROM ${this.table}`).map((r) => r.chat);
  }

  /** The log of one chat. */
  chat(chatId: string): ChatLogView<I> {
    return {
      append: (item) => {
        const problem = checkValue(this.decl.schema, item);
        if (problem !== undefined) return Promise.reject(new TypeError(`${this.title}: the item does not match its schema (${problem})`));
        this.ready();
        const written = this.write(() => this.insert(chatId, item));
        return written.then(() => WRITTEN);
      },
      read: async () => this.readNow(chatId).map((r) => r.item),
      rewrite: (keep) => this.rewrite(chatId, keep),
      removeWhere: (matches) => this.rewrite(chatId, (items) => items.filter((item) => !matches(item))),
      flush: async () => undefined,
    };
  }

  private rewrite(chatId: string, keep: (items: I[]) => I[]): Promise<number> {
    this.ready();
    return this.write(() => {
      let removed = 0;
      let changed = false;
      this.db.transaction(() => {
        const items = this.readNow(chatId).map((r) => r.item);
        const kept = keep(items);
        if (kept.length === items.length && kept.every((item, i) => item === items[i])) return;
        changed = true;
        removed = items.length - kept.length;
        this.db.run(`DELETE FROM ${this.table} WHERE chat = ?`, [chatId]);
        for (const item of kept) this.insert(chatId, item);
      });
      if (changed) this.erased();
      return removed;
    });
  }

  /** Moves every item of `from` to `to`, before the items `to` has (one transaction). */
  move(from: string, to: string): Promise<void> {
    this.ready();
    return this.write(() => {
      this.db.transaction(() => {
        const items = [...this.readNow(from), ...this.readNow(to)].map((r) => r.item);
        this.db.run(`DELETE FROM ${this.table} WHERE chat IN (?, ?)`, [from, to]);
        for (const item of items) this.insert(to, item);
      });
      this.erased();
    });
  }

  /** Drops every chat's items written before `cutoff` (epoch ms; one statement); resolves with how many went. */
  prune(cutoff: number): Promise<number> {
    this.ready();
    return this.write(() => {
      const removed = this.db.run(`DELETE FROM ${this.table} WHERE at < ?`, [cutoff]);
      if (removed) this.erased();
      return removed;
    });
  }

  /** Removed or rewritten words leave the WAL too, and the copy of the earlier layout (now older than the log) goes. */
  private erased(): void {
    this.db.erase();
    rmSync(this.keptAside, { recursive: true, force: true });
  }
}
