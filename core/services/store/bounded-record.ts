import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { domainFor, setAsideUnreadable } from './data-domain.js';
import { databaseFor, keepAside, keptAsideOf, type StoreDatabase } from './database.js';
import { checkDocument, type DataSchema } from './schemas.js';
import { tableOf } from './sql-chat-log.js';
import type { RecordEntry } from './store-declarations.js';

export type { RecordEntry };

/** How a bounded record is kept and bounded. */
export interface BoundedRecordOptions<T extends RecordEntry> {
  /** The data folder whose store database holds the record. */
  dataDir: string;
  /** The JSON file earlier versions kept it in (absolute path): taken in once, then kept aside under `data/migrated/`. */
  file: string;
  /** The record's name (its table in `namespace`, default `core`), and the earlier file's one key (`{ "<field>": [...] }`). */
  field: string;
  namespace?: string;
  /** The earlier file's schema (a file that breaks it is set aside with its bytes kept, as before). */
  schema: DataSchema;
  /** The chat an entry belongs to, and the same entry moved to another chat (the entry's own field names stay). */
  chatOf(entry: T): string;
  withChat(entry: T, chatId: string): T;
  /** Entries older than this are forgotten, and never returned. */
  keepMs: number;
  /** At most this many entries are kept (the oldest go first): the table stays small whatever the traffic. */
  keepCount: number;
  now?: () => number;
}

/**
 * A small record of ids per chat in the store database (a table of the `core` namespace), bounded by age and count,
 * with a lookup by chat and id. The kernel keeps which messages were answered together, which were deleted for
 * everyone and which polls it sent this way; all need the same bounds and the same privacy operations (a person's
 * entries removed, a chat's entries moved), each one statement series in one transaction. What a removal takes is
 * checkpointed out of the WAL.
 *
 * @example
 * const seen = new BoundedRecord<{ id: string; chat: string; at: number }>({
 *   dataDir, file: path.join(dataDir, 'seen.json'), field: 'seen', schema: SEEN_SCHEMA,
 *   chatOf: (e) => e.chat, withChat: (e, chat) => ({ ...e, chat }), keepMs: 86_400_000, keepCount: 1000,
 * });
 * await seen.add([{ id: 'm1', chat: '123@g.us', at: Date.now() }]);
 * await seen.get('123@g.us', 'm1'); // the entry, while it is kept
 */
export class BoundedRecord<T extends RecordEntry> {
  private readonly now: () => number;
  private readonly table: string;
  private ready: Promise<void> | undefined;
  private readyFor: StoreDatabase | undefined;

  constructor(private readonly options: BoundedRecordOptions<T>) {
    this.now = options.now ?? Date.now;
    this.table = tableOf('record', options.namespace ?? 'core', options.field);
  }

  private get keptAside(): string {
    return keptAsideOf(this.options.dataDir, this.options.file);
  }

  /** The database with the table made and the earlier file taken in (once). */
  private async open(): Promise<StoreDatabase> {
    const db = databaseFor(this.options.dataDir);
    // Made again for a database opened anew (the app closed it at a stop).
    if (this.readyFor !== db) {
      this.readyFor = db;
      this.ready = this.prepare(db);
    }
    await this.ready;
    return db;
  }

  private async prepare(db: StoreDatabase): Promise<void> {
    {
      db.exec(
        `CREATE TABLE IF NOT EXISTS ${this.table} (seq INTEGER PRIMARY KEY AUTOINCREMENT, chat TEXT NOT NULL, id TEXT NOT NULL, at INTEGER NOT NULL, entry TEXT NOT NULL, UNIQUE (chat, id));`,
      );
      await this.migrate(db);
    }
  }

  /**
   * Takes in the JSON file of earlier versions: read and checked as before (a broken one is set aside with its bytes),
   * its entries written with the row recording it (by its content) in one transaction, then the file moved aside.
   */
  private async migrate(db: StoreDatabase): Promise<void> {
    const { file, field } = this.options;
    if (!existsSync(file)) return;
    const bytes = readFileSync(file);
    let entries: T[];
    try {
      const checked = checkDocument(this.options.schema, JSON.parse(bytes.toString('utf8')));
      if (!checked.ok) throw new Error(checked.reason);
      entries = (checked.value[field] as T[] | undefined) ?? [];
    } catch (err) {
      // As every store does with a file it cannot read: set aside with its bytes, named, and the record starts empty.
      setAsideUnreadable(file, (err as Error).message);
      return;
    }
    const what = `${this.table}:${createHash('sha256').update(bytes).digest('hex')}`;
    db.takeInOnce(what, () => entries.forEach((entry) => this.insert(db, entry)));
    keepAside(this.options.dataDir, file);
  }

  private insert(db: StoreDatabase, entry: T): void {
    const chat = this.options.chatOf(entry);
    // A later note of the same chat and id replaces the earlier one and counts as the newest.
    db.run(`DELETE FROM ${this.table} WHERE chat = ? AND id = ?`, [chat, entry.id]);
    db.run(`INSERT INTO ${this.table} (chat, id, at, entry) VALUES (?, ?, ?, ?)`, [chat, entry.id, entry.at, JSON.stringify(entry)]);
  }

  /** Runs a write once a backup holding the writes lets them go (at once when none does). */
  private async write<R>(work: (db: StoreDatabase) => R): Promise<R> {
    const db = await this.open();
    const domain = domainFor(db.file);
    await domain.gate.enter();
    try {
      return work(db);
    } catch (err) {
      domain.health.writeFailed(db.file, err);
      throw err;
    } finally {
      domain.gate.leave();
    }
  }

  /** Notes `entries` (a later note of the same chat and id replaces the earlier one), then applies the bounds. */
  async add(entries: T[]): Promise<void> {
    const { keepMs, keepCount } = this.options;
    await this.write((db) => {
      const dropped = db.transaction(() => {
        for (const entry of entries) this.insert(db, entry);
        return (
          db.run(`DELETE FROM ${this.table} WHERE at < ?`, [this.now() - keepMs]) +
          // Everything from the (keepCount + 1)-th newest back: found through the key, not a scan of the table.
          db.run(`DELETE FROM ${this.table} WHERE seq <= (SELECT seq FROM ${this.table} ORDER BY seq DESC LIMIT 1 OFFSET ?)`, [keepCount])
        );
      });
      // What the bounds let go is forgotten on disk too, not left in the WAL.
      if (dropped) db.erase();
    });
  }

  /** The entry noted for `id` in `chatId`, while it is kept. */
  async get(chatId: string, id: string): Promise<T | undefined> {
    const db = await this.open();
    const row = db.get<{ entry: string; at: number }>(`SELECT entry, at FROM ${this.table} WHERE chat = ? AND id = ?`, [chatId, id]);
    return row && row.at >= this.now() - this.options.keepMs ? (JSON.parse(row.entry) as T) : undefined;
  }

  /** Every entry kept, oldest first. */
  async entries(): Promise<T[]> {
    const db = await this.open();
    return db.all<{ entry: string }>(`SELECT entry FROM ${this.table} ORDER BY seq`).map((r) => JSON.parse(r.entry) as T);
  }

  /** Removes the entries `drop` picks (one transaction; gone from the WAL too); how many went. */
  async removeWhere(drop: (entry: T) => boolean): Promise<number> {
    return this.write((db) => {
      const removed = db.transaction(() => {
        let n = 0;
        for (const row of db.all<{ seq: number; entry: string }>(`SELECT seq, entry FROM ${this.table} ORDER BY seq`)) {
          if (drop(JSON.parse(row.entry) as T)) n += db.run(`DELETE FROM ${this.table} WHERE seq = ?`, [row.seq]);
        }
        return n;
      });
      if (removed) this.erased(db);
      return removed;
    });
  }

  /** Moves every entry of chat `from` to chat `to` (a private chat's LID becoming its phone id), in one transaction. */
  async moveChat(from: string, to: string): Promise<void> {
    if (from === to) return;
    await this.write((db) => {
      db.transaction(() => {
        for (const row of db.all<{ seq: number; entry: string }>(`SELECT seq, entry FROM ${this.table} WHERE chat = ? ORDER BY seq`, [from])) {
          const moved = this.options.withChat(JSON.parse(row.entry) as T, to);
          db.run(`DELETE FROM ${this.table} WHERE chat = ? AND id = ?`, [to, moved.id]);
          db.run(`UPDATE ${this.table} SET chat = ?, entry = ? WHERE seq = ?`, [to, JSON.stringify(moved), row.seq]);
        }
      });
      this.erased(db);
    });
  }

  /** Removed entries leave the WAL too, and the copy of the earlier file (now older than the record) goes. */
  private erased(db: StoreDatabase): void {
    db.erase();
    rmSync(this.keptAside, { force: true });
  }

  /** Everything noted is in the database when its promise resolved: nothing waits here. */
  async flush(): Promise<void> {
    if (this.ready) await this.ready;
  }
}
