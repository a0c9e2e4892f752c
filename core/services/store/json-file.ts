import { DataWriteError } from '../../api/errors.js';
import { readFile, rename } from 'node:fs/promises';
import { writeFileAtomicSafe } from './atomic.js';
import { domainFor, type DataDomain } from './data-domain.js';
import { type DataHealth } from './data-health.js';
import { checkDocument, fileVersionKey, type DataSchema } from './schemas.js';

export type OnCorrupt = (file: string, movedTo: string, error: Error) => void;

export interface JsonFileOptions {
  /** The document's schema and version (see schemas.ts); without one any JSON object is accepted. */
  schema?: DataSchema;
  onCorrupt?: OnCorrupt;
  /** How long changes are gathered before one write (counters use the data flush interval, ~1 s). */
  coalesceMs?: number;
  /** Where problems are reported; default: the health of the file's data domain. */
  health?: DataHealth;
  /** What the schema cannot say: a problem in words sets the file aside like a schema mismatch. */
  check?: (value: unknown) => string | undefined;
  /** The app's data folder this file belongs to (its write gate, health, pending writes); default: found by path. */
  domain?: DataDomain;
}

/** Time between retries of a failed write. */
const RETRY_MS = 5000;

/**
 * One JSON document on disk with an in-memory copy. Reads once; a change schedules an atomic write after a pause
 * (`coalesceMs`), and every change made meanwhile, or during that write, goes into it or the next one after another
 * pause: a burst costs one or two writes, and a steady stream one write per pause, not one per change.
 *
 * On load the document is checked against its schema and version: a file that does not parse or does not match is
 * moved aside (`<file>.corrupt-<time>`, bytes kept), reported, and the document starts empty; an older version is
 * migrated. A write that fails keeps the change in memory, is reported once and retried; `flush()` rejects with the
 * file's name while it still cannot be written.
 *
 * @example
 * const doc = new JsonFile('data/memory/1.json', () => ({ facts: [] as string[] }));
 * await doc.update((m) => { m.facts.push('likes tea'); });
 */
export class JsonFile<T> {
  private value: T | undefined;
  private loading: Promise<T> | undefined;
  private writing: Promise<void> | undefined;
  private dirty = false;
  private timer: NodeJS.Timeout | undefined;
  private failure: unknown;
  /** True when the file could not be read nor moved aside: never overwrite what we could not keep. */
  private blocked = false;
  private pendingUpdate: Promise<void> | undefined;
  /** flush() calls waiting: while any waits, a change made during a write is written at once, not after a pause. */
  private flushWaiters = 0;
  /** How long changes are gathered before one atomic write. */
  static coalesceMs = 25;
  private readonly coalesceMs: number;
  private readonly options: JsonFileOptions;
  /** whenIdle() callers, woken each time a write ends or a scheduled one turns out to have nothing to do. */
  private idleWaiters: Array<() => void> = [];

  constructor(readonly file: string, private readonly initial: () => T, options?: JsonFileOptions | OnCorrupt) {
    this.options = typeof options === 'function' ? { onCorrupt: options } : (options ?? {});
    this.coalesceMs = this.options.coalesceMs ?? JsonFile.coalesceMs;
  }

  private get domain(): DataDomain {
    return this.options.domain ?? domainFor(this.file);
  }

  private get health(): DataHealth {
    return this.options.health ?? this.domain.health;
  }

  /** The current value (loaded from disk on first use). Never rejects: a bad file starts the document empty. */
  async get(): Promise<T> {
    if (this.value !== undefined) return this.value;
    this.loading ??= this.load();
    return this.loading;
  }

  private async load(): Promise<T> {
    let text: string | undefined;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') await this.setAside(`cannot be read: ${(err as Error).message}`);
    }
    let value: T = this.initial();
    if (text !== undefined) {
      let parsed: unknown;
      let ok = true;
      try {
        parsed = JSON.parse(text);
      } catch (err) {
        ok = false;
        await this.setAside(`not valid JSON: ${(err as Error).message}`);
      }
      if (ok) {
        const checked = checkDocument(this.options.schema, parsed);
        const problem = checked.ok ? this.options.check?.(checked.value) : undefined;
        if (checked.ok && problem !== undefined) await this.setAside(problem);
        else if (checked.ok) {
          value = checked.value as T;
          if (checked.migratedFrom !== undefined) {
            this.health.migrated(this.file, checked.migratedFrom, this.options.schema?.version ?? 1);
            this.dirty = true;
          }
        } else await this.setAside(checked.reason);
      }
    }
    this.value = value;
    if (this.dirty) this.scheduleWrite();
    return value;
  }

  private async setAside(reason: string): Promise<void> {
    const movedTo = `${this.file}.corrupt-${Date.now()}`;
    try {
      await rename(this.file, movedTo);
    } catch (err) {
      this.blocked = true;
      this.health.corrupt(this.file, this.file, `${reason}; could not move it aside (${(err as Error).message}), so it is left untouched and not written`);
      return;
    }
    this.health.corrupt(this.file, movedTo, reason);
    this.options.onCorrupt?.(this.file, movedTo, new Error(reason));
  }

  /** Changes the value in place (or replaces it by returning a new one) and schedules a write. */
  update(change: (value: T) => T | void): Promise<T> {
    const applied = this.get().then((current) => {
      const next = change(current);
      if (next !== undefined) this.value = next;
      this.scheduleWrite();
      return this.value as T;
    });
    // flush() waits for changes still waiting for the first load (an update nobody awaited is not lost at stop).
    this.pendingUpdate = applied.then(
      () => undefined,
      () => undefined,
    );
    return applied;
  }

  private scheduleWrite(): void {
    this.dirty = true;
    // The data folder's pending set: an online backup of this app flushes it first (DataDomain.holdWrites).
    this.domain.unsaved.add(this);
    if (this.writing || this.timer) return;
    // A short pause first: the burst of changes one message makes becomes one write, and the write lands after the
    // reply instead of competing with it. flush() skips the pause.
    // Not unref'd: a process that ends on its own still writes what it changed.
    this.timer = setTimeout(() => this.startWriting(), this.coalesceMs);
  }

  private serialize(): string {
    const schema = this.options.schema;
    // The file's version goes first, under a key the document itself does not use (see fileVersionKey): the document
    // comes back exactly as stored, whatever keys it has.
    const doc = schema ? { [fileVersionKey(schema, this.value)]: schema.version, ...(this.value as object) } : this.value;
    return JSON.stringify(doc, null, 2) + '\n';
  }

  private startWriting(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.writing || !this.dirty || this.blocked) return this.wakeIdle();
    this.writing = (async () => {
      try {
        while (this.dirty) {
          this.dirty = false;
          try {
            await writeFileAtomicSafe(this.file, this.serialize());
          } catch (err) {
            // Kept dirty: the change stays in memory, is retried, and flush() reports it.
            this.dirty = true;
            this.failure = err;
            this.health.writeFailed(this.file, err);
            this.timer = setTimeout(() => this.startWriting(), RETRY_MS);
            this.timer.unref();
            return;
          }
          if (this.failure !== undefined) {
            this.failure = undefined;
            this.health.writeRecovered(this.file);
          }
          // Changed during the write: the next write waits its pause too. Writing again at once would make a steady
          // stream of changes (a counter per message) a write after write after write, never "once per interval".
          if (this.dirty && this.flushWaiters === 0) {
            this.timer = setTimeout(() => this.startWriting(), this.coalesceMs);
            return;
          }
        }
        this.domain.unsaved.delete(this);
      } finally {
        this.writing = undefined;
        this.wakeIdle();
      }
    })();
  }

  /** A write is scheduled or under way (a failed one waiting for its retry is not: health reports it). */
  private get busy(): boolean {
    return this.writing !== undefined || (this.timer !== undefined && this.failure === undefined);
  }

  private wakeIdle(): void {
    for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /**
   * Resolves once the writes scheduled so far have happened on their own, after their pause (unlike flush(), which
   * writes at once): what a test awaits to see the background write, instead of sleeping for it.
   */
  async whenIdle(): Promise<void> {
    await this.pendingUpdate;
    while (this.busy) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /** Resolves once no write is under way (one scheduled for later is not waited for, nor started). */
  async whenNotWriting(): Promise<void> {
    while (this.writing) await this.writing;
  }

  /** Resolves when everything changed so far is on disk; rejects (DataWriteError) when it cannot be written. */
  async flush(): Promise<void> {
    this.flushWaiters++;
    try {
      await this.pendingUpdate;
      if (this.timer || (this.dirty && !this.writing)) this.startWriting();
      while (this.writing) await this.writing;
    } finally {
      this.flushWaiters--;
    }
    if (this.dirty && this.failure !== undefined) throw new DataWriteError([this.file], this.failure);
    if (this.dirty && this.blocked) throw new DataWriteError([this.file], new Error('the file could not be read nor moved aside, so it is not overwritten'));
  }

  /** Removes the in-memory copy's content (privacy deletes) and writes the empty document. */
  async reset(): Promise<void> {
    await this.get();
    this.value = this.initial();
    this.scheduleWrite();
  }
}

/**
 * Registers the flush of a store that keeps writes in memory for a while (a plugin's batched log) with the data
 * folder `dataDir` belongs to: `npm run backup` and every flush of that folder run it, so what it holds is in the copy.
 * Returns the function that unregisters it.
 *
 * @example const off = flushWithStores(() => log.flush(), dataDir);
 */
export function flushWithStores(flush: () => Promise<unknown>, dataDir: string): () => void {
  const run = async () => {
    await flush();
  };
  const domain = domainFor(dataDir);
  domain.flushers.add(run);
  return () => void domain.flushers.delete(run);
}
