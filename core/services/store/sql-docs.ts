import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DataWriteError } from '../../api/errors.js';
import { safeFileName } from '../../api/file-name.js';
import { setAsideUnreadable, type DataDomain, type Unsaved } from './data-domain.js';
import { databaseFor, keepAside, keptAsideOf, type StoreDatabase } from './database.js';
import { checkDocument, fileVersionKey, type DataSchema } from './schemas.js';
import { tableOf } from './sql-chat-log.js';

/** Time between retries of a failed write. */
const RETRY_MS = 5000;
/** The key of a `Store.doc` (one document for the whole plugin) in its table. */
const WHOLE = '';

/** How the documents of one declaration are kept (see `SqlDocs`). */
export interface SqlDocsOptions<T> {
  dataDir: string;
  /** The table's namespace (`core`, `whatsapp`, a plugin's name) and the declaration's name. */
  namespace: string;
  name: string;
  /** One document (`Store.doc`) or one per chat or key (`Store.chatDoc`). */
  perKey: boolean;
  /**
   * Where earlier versions kept it (absolute): the file of a `Store.doc`, the folder of `<key>.json` files of a
   * `Store.chatDoc`. Taken in once, then kept aside under `data/migrated/`; a document set aside as unreadable is
   * written beside it, named as before (`<file>.corrupt-<time>`).
   */
  where: string;
  /** Files in that folder that are not documents of this kind (another declaration's `Store.doc` sharing it). */
  notMine?: ReadonlySet<string>;
  schema: DataSchema;
  initial(key: string): T;
  check?(value: T, key: string): string | undefined;
  domain: DataDomain;
  /**
   * How long changes are gathered before one write (counters: the data flush interval): the first change after a
   * write starts the pause, so a steady stream costs one write per pause, never one per change (a write itself is one
   * synchronous statement: no change lands during it); `flush` writes at once. Default: the changes of one tick.
   */
  coalesceMs?: number;
}

/**
 * The documents of one `Store.doc` or `Store.chatDoc` declaration, in one table of the store database (`key`, the
 * document as JSON with its schema version, as its file held it). The files of earlier versions are taken in on first
 * use, each with the row recording it (by its content) in one transaction, then moved under `data/migrated/` (a crash
 * between the two only moves it at the next start); a file that does not parse or match is set aside with its bytes,
 * as before. Those copies go once a person's delete or a chat move changes the documents (`erased`).
 */
export class SqlDocs<T> {
  private readonly table: string;
  private readonly docs = new Map<string, SqlDoc<T>>();
  private prepared: StoreDatabase | undefined;

  constructor(readonly options: SqlDocsOptions<T>) {
    this.table = tableOf('doc', options.namespace, options.name);
  }

  /** The database with the table made and the earlier files taken in (again after the app closed it at a stop). */
  db(): StoreDatabase {
    const db = databaseFor(this.options.dataDir);
    if (this.prepared !== db) {
      db.exec(`CREATE TABLE IF NOT EXISTS ${this.table} (key TEXT PRIMARY KEY, value TEXT NOT NULL);`);
      this.prepared = db;
      this.migrate(db);
    }
    return db;
  }

  /** The file a document was kept in by earlier versions (its name in messages and for copies set aside). */
  fileOf(key: string): string {
    return this.options.perKey ? path.join(this.options.where, `${safeFileName(key)}.json`) : this.options.where;
  }

  private earlierFiles(): Array<{ file: string; key: string }> {
    const { where, perKey, notMine } = this.options;
    if (!perKey) return existsSync(where) && statSync(where).isFile() ? [{ file: where, key: WHOLE }] : [];
    if (!existsSync(where)) return [];
    return readdirSync(where, { withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith('.json') && !notMine?.has(path.join(where, e.name)))
      .map((e) => ({ file: path.join(where, e.name), key: decodeURIComponent(e.name.slice(0, -'.json'.length)) }));
  }

  private keptAside(file: string): string {
    return keptAsideOf(this.options.dataDir, file);
  }

  /** Takes in the files of earlier versions: checked as they were on load; a bad one is set aside with its bytes. */
  private migrate(db: StoreDatabase): void {
    for (const { file, key } of this.earlierFiles()) {
      const bytes = readFileSync(file);
      const problem = this.read(bytes.toString('utf8'), key);
      if (typeof problem === 'string') {
        setAsideUnreadable(file, problem);
        continue;
      }
      // Named by its key and content (hashed: the record keeps no chat id): the same file found again (a crash before
      // it moved aside) is not taken in over later changes.
      const what = `${this.table}:${createHash('sha256').update(key).update('\0').update(bytes).digest('hex')}`;
      const taken = db.takeInOnce(what, () => db.run(`INSERT INTO ${this.table} (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, [key, this.serialize(problem.value)]));
      if (taken && problem.migratedFrom !== undefined) this.options.domain.health.migrated(file, problem.migratedFrom, this.options.schema.version);
      keepAside(this.options.dataDir, file);
    }
  }

  /** A stored text as the document, or why it is none (it does not parse, match the schema or pass `check`). */
  read(text: string, key: string): { value: T; migratedFrom?: number } | string {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      return `not valid JSON: ${(err as Error).message}`;
    }
    const checked = checkDocument(this.options.schema, parsed);
    if (!checked.ok) return checked.reason;
    const value = checked.value as T;
    return this.options.check?.(value, key) ?? { value, migratedFrom: checked.migratedFrom };
  }

  serialize(value: T): string {
    // The version goes first, under a key the document itself does not use, as in the files (see fileVersionKey).
    const schema = this.options.schema;
    return JSON.stringify({ [fileVersionKey(schema, value)]: schema.version, ...(value as object) });
  }

  /** The document of `key` (`Store.doc`: the one document, whatever the key). */
  doc(key = WHOLE): SqlDoc<T> {
    const at = this.options.perKey ? key : WHOLE;
    let doc = this.docs.get(at);
    if (!doc) {
      doc = new SqlDoc<T>(this, at, this.table);
      this.docs.set(at, doc);
    }
    return doc;
  }

  /** Forgets a document's copy in memory (it was removed). @internal SqlDoc */
  drop(key: string): void {
    this.docs.delete(key);
  }

  /** The keys with a document: stored, or changed in memory and not written yet (a backup holding the writes). */
  keys(): string[] {
    const stored = this.db().all<{ key: string }>(`SELECT key FROM ${this.table}`).map((r) => r.key);
    const pending = [...this.docs.values()].filter((d) => d.pending).map((d) => d.key);
    return [...new Set([...stored, ...pending])];
  }

  /** Every document with a change not written yet, or a write under way. */
  opened(): SqlDoc<T>[] {
    return [...this.docs.values()];
  }

  /**
   * What a person's delete or a chat move took leaves the WAL too, and the copies of the earlier files (now older than
   * the documents) go.
   */
  erased(): void {
    this.db().erase();
    const { where, perKey, notMine } = this.options;
    if (!perKey) return rmSync(this.keptAside(where), { force: true });
    const folder = this.keptAside(where);
    const others = new Set([...(notMine ?? [])].map((f) => this.keptAside(f)));
    for (const name of existsSync(folder) ? readdirSync(folder) : []) {
      const file = path.join(folder, name);
      if (name.endsWith('.json') && !others.has(file)) rmSync(file, { force: true });
    }
  }
}

/**
 * One document of a `SqlDocs` table with its copy in memory: read once; a change is written soon after (the changes
 * of one tick in one statement), waiting while an online backup holds the writes. A write that fails keeps the change
 * in memory, is reported and retried; `flush()` rejects while it still cannot be written. A stored value that no
 * longer matches the schema is set aside with its bytes (`<file>.corrupt-<time>`) and the document starts anew.
 */
export class SqlDoc<T> implements Unsaved {
  private value: T | undefined;
  private dirty = false;
  private writing: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private failure: unknown;
  private pendingUpdate: Promise<void> | undefined;
  /** The pause before a gathered write (`coalesceMs`). */
  private pause: NodeJS.Timeout | undefined;
  /** whenIdle() callers, woken each time a write ends or a pause turns out to have nothing to write. */
  private idleWaiters: Array<() => void> = [];
  /** The file earlier versions kept it in: its name in errors and for a copy set aside. */
  readonly file: string;

  constructor(private readonly docs: SqlDocs<T>, readonly key: string, private readonly table: string) {
    this.file = docs.fileOf(key);
  }

  private get domain(): DataDomain {
    return this.docs.options.domain;
  }

  /** Whether a change is not written yet. */
  get pending(): boolean {
    return this.dirty;
  }

  /** The document (read on first use). Never rejects: a stored value that is no document starts it anew. */
  async get(): Promise<T> {
    if (this.value === undefined) this.value = this.load();
    return this.value;
  }

  private load(): T {
    const db = this.docs.db();
    const row = db.get<{ value: string }>(`SELECT value FROM ${this.table} WHERE key = ?`, [this.key]);
    if (!row) return this.docs.options.initial(this.key);
    const read = this.docs.read(row.value, this.key);
    if (typeof read !== 'string') {
      if (read.migratedFrom !== undefined) {
        this.domain.health.migrated(this.file, read.migratedFrom, this.docs.options.schema.version);
        this.schedule();
      }
      return read.value;
    }
    // Its bytes kept where the file would have been set aside, named in the data health; the row goes.
    const movedTo = `${this.file}.corrupt-${Date.now()}`;
    mkdirSync(path.dirname(movedTo), { recursive: true, mode: 0o700 });
    writeFileSync(movedTo, row.value, { mode: 0o600 });
    db.run(`DELETE FROM ${this.table} WHERE key = ?`, [this.key]);
    this.domain.health.corrupt(this.file, movedTo, read);
    return this.docs.options.initial(this.key);
  }

  /** Changes the document in place (or replaces it by returning a new one); written soon after. */
  update(change: (value: T) => T | void): Promise<T> {
    const applied = this.get().then((current) => {
      const next = change(current);
      if (next !== undefined) this.value = next;
      this.schedule();
      return this.value as T;
    });
    this.pendingUpdate = applied.then(
      () => undefined,
      () => undefined,
    );
    return applied;
  }

  private schedule(): void {
    this.dirty = true;
    // The data folder's pending set: an online backup flushes it before it holds the writes.
    this.domain.unsaved.add(this);
    if (this.writing || this.retry || this.pause) return;
    const delay = this.docs.options.coalesceMs;
    // Not unref'd: a process that ends on its own still writes what it changed.
    if (delay) this.pause = setTimeout(() => this.startWriting(), delay);
    else this.writing = this.write();
  }

  private startWriting(): void {
    if (this.pause) clearTimeout(this.pause);
    this.pause = undefined;
    if (this.writing || !this.dirty) return this.wakeIdle();
    this.writing = this.write();
  }

  private wakeIdle(): void {
    for (const wake of this.idleWaiters.splice(0)) wake();
  }

  private async write(): Promise<void> {
    const gate = this.domain.gate;
    try {
      while (this.dirty) {
        // Waits while a backup holds the writes (and lets the other changes of this tick join this write).
        await gate.enter();
        try {
          this.dirty = false;
          if (this.value !== undefined) this.docs.db().run(`INSERT INTO ${this.table} (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, [this.key, this.docs.serialize(this.value)]);
        } catch (err) {
          // Kept dirty: the change stays in memory, is retried, and flush() reports it.
          this.dirty = true;
          this.failure = err;
          this.domain.health.writeFailed(this.file, err);
          this.retry = setTimeout(() => {
            this.retry = undefined;
            if (!this.writing) this.writing = this.write();
          }, RETRY_MS);
          this.retry.unref();
          return;
        } finally {
          gate.leave();
        }
        if (this.failure !== undefined) {
          this.failure = undefined;
          this.domain.health.writeRecovered(this.file);
        }
      }
      this.domain.unsaved.delete(this);
    } finally {
      this.writing = undefined;
      this.wakeIdle();
    }
  }

  /** Resolves once what was changed so far is in the database; rejects (DataWriteError) when it cannot be written. */
  async flush(): Promise<void> {
    await this.pendingUpdate;
    if (this.dirty && !this.writing) {
      if (this.retry) clearTimeout(this.retry);
      this.retry = undefined;
      this.startWriting();
    }
    while (this.writing) await this.writing;
    if (this.dirty && this.failure !== undefined) throw new DataWriteError([this.file], this.failure);
  }

  /** Resolves once the writes scheduled so far happened on their own, after their pause (unlike flush). */
  async whenIdle(): Promise<void> {
    await this.pendingUpdate;
    while (this.writing || this.pause) {
      if (this.writing) await this.writing;
      else await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    }
  }

  async whenNotWriting(): Promise<void> {
    while (this.writing) await this.writing;
  }

  /**
   * What a person's delete took from the documents of this kind (written already: after `flush`) leaves every file:
   * the WAL, and the copies of the earlier files kept aside.
   */
  erase(): void {
    this.docs.erased();
  }

  /** Deletes the document (the next `get` starts from `initial`), gone from the WAL too. */
  async remove(): Promise<void> {
    await this.pendingUpdate;
    while (this.writing) await this.writing;
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
    if (this.pause) clearTimeout(this.pause);
    this.pause = undefined;
    this.wakeIdle();
    this.dirty = false;
    this.domain.unsaved.delete(this);
    const gate = this.domain.gate;
    await gate.enter();
    try {
      this.docs.db().run(`DELETE FROM ${this.table} WHERE key = ?`, [this.key]);
    } finally {
      gate.leave();
    }
    this.docs.drop(this.key);
    this.value = undefined;
    this.docs.erased();
  }
}
