import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { healthFor } from './data-domain.js';

// A CommonJS package, required: an ES import of one has Node parse its source for export names and wrap it (~5 ms of
// a start for each such package).
const Database = createRequire(import.meta.url)('libsql') as typeof import('libsql');

/** The one database of a data folder (one account): `data/store.db`, with its `-wal` beside it. */
export const DATABASE_FILE = 'store.db';

/** Where the files of an earlier layout go once their data is in the database (kept, never read again). */
export const MIGRATED_DIR = 'migrated';

/** Where a file of an earlier version of `dataDir` is kept once taken in: the same path under `data/migrated/`. */
export function keptAsideOf(dataDir: string, file: string): string {
  const root = path.resolve(dataDir);
  return path.join(root, MIGRATED_DIR, path.relative(root, path.resolve(file)));
}

/** Moves a file taken in (see `takeInOnce`) to `keptAsideOf`: found again after a crash before this, it is only moved. */
export function keepAside(dataDir: string, file: string): void {
  const to = keptAsideOf(dataDir, file);
  mkdirSync(path.dirname(to), { recursive: true, mode: 0o700 });
  renameSync(file, to);
}

/** The files SQLite keeps beside the database: set aside with it, and never copied on their own. */
const COMPANIONS = ['-wal', '-shm', '-journal'] as const;

type Connection = InstanceType<typeof Database>;
/**
 * Commits (WAL frames, roughly) after which the WAL is checkpointed even without a quiet moment, and how long writes
 * must pause before one runs on its own. SQLite's automatic checkpoint (every 1000 pages) ran inside whichever commit
 * crossed the line: a message's reply waited 9–25 ms for it. Here it runs when the bot is quiet, and a steady stream
 * pays it every few thousand commits, each hot page copied once instead of once per 1000 frames.
 */
const CHECKPOINT_AFTER_COMMITS = 4000;
const CHECKPOINT_WHEN_QUIET_MS = 1000;

/** A prepared statement, as this module uses it (positional parameters). */
interface Statement {
  run(...params: unknown[]): { changes: number };
  all(...params: unknown[]): unknown[];
  get(...params: unknown[]): unknown;
}

/**
 * The embedded SQLite database under the declared stores (`host.store`): one file per data folder, in WAL mode, with
 * secure delete on so a removed row's bytes are overwritten in the file. What a person deletes is also checkpointed
 * out of the WAL (`erase`), so neither file keeps their words. A file SQLite cannot read is set aside with its bytes
 * kept (`store.db.corrupt-<time>`, its WAL beside it), named in the data health, and a new one started.
 *
 * Open it through `databaseFor(dataDir)`: every store of the folder shares the one connection, so a statement series
 * in `transaction` is one atomic change across declarations.
 *
 * @example
 * const db = databaseFor('data');
 * db.transaction(() => db.run('DELETE FROM t WHERE author = ?', [id]));
 * db.erase();
 */
export class StoreDatabase {
  readonly file: string;
  private connection: Connection;
  private readonly statements = new Map<string, Statement>();
  /** Commits since the last checkpoint, and the timer that checkpoints once writes pause. */
  private commits = 0;
  private quiet: NodeJS.Timeout | undefined;

  constructor(readonly dataDir: string) {
    this.file = path.join(path.resolve(dataDir), DATABASE_FILE);
    mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    this.connection = this.openOrSetAside();
  }

  /** Opens the file and checks it; a file that is no database (or a damaged one) goes aside and a new one starts. */
  private openOrSetAside(): Connection {
    let problem: string | undefined;
    try {
      const db = openConnection(this.file);
      const check = db.prepare('PRAGMA quick_check').pluck().all() as string[];
      if (check.length === 1 && check[0] === 'ok') return db;
      problem = `the database is damaged (${check.slice(0, 3).join('; ')})`;
      db.close();
    } catch (err) {
      problem = `the database cannot be read (${(err as Error).message})`;
    }
    const movedTo = `${this.file}.corrupt-${Date.now()}`;
    renameSync(this.file, movedTo);
    // Its WAL and index belong to the damaged file: kept beside it, named alike, so nothing of it is lost or replayed.
    for (const suffix of COMPANIONS) if (existsSync(this.file + suffix)) renameSync(this.file + suffix, `${this.file}${suffix}.corrupt-${movedTo.slice(movedTo.lastIndexOf('-') + 1)}`);
    healthFor(this.file).corrupt(this.file, movedTo, problem);
    return openConnection(this.file);
  }

  private statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.connection.prepare(sql) as unknown as Statement;
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** Runs DDL or several statements (no parameters). */
  exec(sql: string): void {
    this.connection.exec(sql);
  }

  /** Runs one statement; resolves nothing, returns how many rows it changed. */
  run(sql: string, params: unknown[] = []): number {
    const changes = this.statement(sql).run(...params).changes;
    if (!this.connection.inTransaction) this.committed();
    return changes;
  }

  /**
   * A commit happened: the WAL is checkpointed once writes pause for a moment, or at once after many commits without
   * a pause (SQLite's own automatic checkpoint is off, see CHECKPOINT_AFTER_COMMITS).
   */
  private committed(): void {
    if (++this.commits >= CHECKPOINT_AFTER_COMMITS) return this.checkpoint();
    if (this.quiet) this.quiet.refresh();
    else {
      this.quiet = setTimeout(() => this.checkpoint(), CHECKPOINT_WHEN_QUIET_MS);
      // A process that ends on its own closes the database, which checkpoints it.
      this.quiet.unref();
    }
  }

  /** Copies the WAL into the database file (readers in other connections keep their snapshot: PASSIVE). */
  private checkpoint(): void {
    clearTimeout(this.quiet);
    this.quiet = undefined;
    this.commits = 0;
    if (!this.connection.open || this.connection.inTransaction) return;
    try {
      this.connection.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // Busy or failing: the next one tries again, and the stop's checkpoint (erase) reports a failure.
    }
  }

  /** Every row of a query. */
  all<R>(sql: string, params: unknown[] = []): R[] {
    return this.statement(sql).all(...params) as R[];
  }

  /** The first row of a query, or undefined. */
  get<R>(sql: string, params: unknown[] = []): R | undefined {
    return this.statement(sql).get(...params) as R | undefined;
  }

  /**
   * Runs `takeIn` (what a file of an earlier version held, written into the tables) with the row recording `what` (the
   * file, named by its content) in one transaction, unless that row exists: the same file found again (a crash before
   * it was moved aside under data/migrated/) is not taken in twice. True when it ran.
   */
  takeInOnce(what: string, takeIn: () => void): boolean {
    this.exec('CREATE TABLE IF NOT EXISTS store_migrations (what TEXT PRIMARY KEY, at INTEGER NOT NULL)');
    if (this.get('SELECT at FROM store_migrations WHERE what = ?', [what]) !== undefined) return false;
    this.transaction(() => {
      takeIn();
      this.run('INSERT INTO store_migrations (what, at) VALUES (?, ?)', [what, Date.now()]);
    });
    return true;
  }

  /** Runs `work` as one transaction: all of its statements are on disk together, or none (it threw). */
  transaction<R>(work: () => R): R {
    if (this.connection.inTransaction) return work();
    // Not libsql's transaction(): when SQLite has rolled back already (a full disk), its ROLLBACK fails and that
    // error ("no transaction is active") would hide the cause a user must be told (SQLITE_FULL).
    this.connection.exec('BEGIN IMMEDIATE');
    try {
      const result = work();
      this.connection.exec('COMMIT');
      this.committed();
      return result;
    } catch (err) {
      if (this.connection.inTransaction) this.connection.exec('ROLLBACK');
      throw err;
    }
  }

  /**
   * Moves everything in the WAL into the database file and empties the WAL: after a delete (secure delete already
   * zeroed the rows in the file's pages), the deleted words are in neither file.
   */
  erase(): void {
    this.connection.pragma('wal_checkpoint(TRUNCATE)');
    this.commits = 0;
  }

  get open(): boolean {
    return this.connection.open;
  }

  close(): void {
    if (!this.connection.open) return;
    this.statements.clear();
    clearTimeout(this.quiet);
    this.quiet = undefined;
    try {
      this.erase();
    } finally {
      this.connection.close();
    }
  }
}

function openConnection(file: string): Connection {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    // Overwrites deleted content with zeros in the pages it frees (a person's delete leaves no words in the file).
    db.pragma('secure_delete = ON');
    // In WAL mode NORMAL survives a crash of the process (kill -9); only a power cut may lose the last commits.
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    // Checkpoints run when the bot is quiet (StoreDatabase.committed), not inside a message's commit.
    db.pragma('wal_autocheckpoint = 0');
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

const opened = new Map<string, StoreDatabase>();

/**
 * The database of a data folder, opened on first use and shared by every store of that folder. Ask for it at each
 * use rather than keeping it: the app closes it at its stop (`closeDatabase`), and the next use opens it again.
 */
export function databaseFor(dataDir: string): StoreDatabase {
  // Every store asks at every use (several times a message): the folder as given finds it without resolving the path.
  const known = asGiven.get(dataDir);
  if (known?.open && opened.get(known.dataDir) === known) return known;
  const key = path.resolve(dataDir);
  let db = opened.get(key);
  if (!db || !db.open) {
    db = new StoreDatabase(key);
    opened.set(key, db);
  }
  asGiven.set(dataDir, db);
  return db;
}

/** The database last found for each folder as a store names it (relative or absolute), checked against `opened`. */
const asGiven = new Map<string, StoreDatabase>();

/** Closes the database of a data folder (its WAL checkpointed into the file), at the app's stop; a later use reopens it. */
export function closeDatabase(dataDir: string): void {
  const key = path.resolve(dataDir);
  const db = opened.get(key);
  opened.delete(key);
  db?.close();
}

/** Whether a data-folder path is one of the database's own files (copied through the online backup, never alone). */
export function isDatabaseFile(rel: string): boolean {
  const base = path.basename(rel);
  return base === DATABASE_FILE || COMPANIONS.some((suffix) => base === DATABASE_FILE + suffix);
}

/**
 * A consistent copy of the database file `from` (with what its WAL holds) at `to`, a new file of `mode` from its first
 * byte: SQLite's online copy (`VACUUM INTO`), which reads one snapshot while a running bot may go on writing, and
 * leaves out the free pages (nothing deleted travels into a backup).
 */
export async function copyDatabase(from: string, to: string, mode: number): Promise<void> {
  // An empty file of the right mode first: VACUUM INTO fills an empty file, and a umask could only narrow the mode.
  await writeFile(to, '', { flag: 'wx', mode });
  const db = new Database(from);
  try {
    db.pragma('busy_timeout = 5000');
    db.prepare('VACUUM INTO ?').run(to);
  } finally {
    db.close();
  }
}

/**
 * What is wrong with a database file, read without changing it (`npm run doctor`), or undefined when SQLite finds it
 * whole. A bot may be running on it meanwhile.
 */
export function checkDatabaseFile(file: string): string | undefined {
  let db: Connection | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const check = db.prepare('PRAGMA quick_check').pluck().all() as string[];
    return check.length === 1 && check[0] === 'ok' ? undefined : `the database is damaged (${check.slice(0, 3).join('; ')})`;
  } catch (err) {
    return `the database cannot be read (${(err as Error).message})`;
  } finally {
    db?.close();
  }
}
