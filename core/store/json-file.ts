import { readFile, rename } from 'node:fs/promises';
import { writeJsonAtomic } from './atomic.js';

/**
 * One JSON document on disk with an in-memory copy. Reads once; every change schedules an atomic write, and
 * changes made while a write is under way are coalesced into one more write, so a burst costs two writes, not N.
 * A file that does not parse is moved aside (`<file>.corrupt-<time>`) and reported, never silently overwritten.
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
  /** How long changes are gathered before one atomic write. */
  static coalesceMs = 25;
  private readonly coalesceMs = JsonFile.coalesceMs;

  constructor(
    readonly file: string,
    private readonly initial: () => T,
    private readonly onCorrupt?: (file: string, movedTo: string, error: Error) => void,
  ) {}

  /** The current value (loaded from disk on first use). */
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
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    let value: T;
    if (text === undefined) value = this.initial();
    else {
      try {
        value = JSON.parse(text) as T;
      } catch (err) {
        const movedTo = `${this.file}.corrupt-${Date.now()}`;
        await rename(this.file, movedTo);
        this.onCorrupt?.(this.file, movedTo, err as Error);
        value = this.initial();
      }
    }
    this.value = value;
    return value;
  }

  /** Changes the value in place (or replaces it by returning a new one) and schedules a write. */
  async update(change: (value: T) => T | void): Promise<T> {
    const current = await this.get();
    const next = change(current);
    if (next !== undefined) this.value = next;
    this.scheduleWrite();
    return this.value as T;
  }

  private scheduleWrite(): void {
    this.dirty = true;
    if (this.writing || this.timer) return;
    // A short pause first: the burst of changes one message makes (history, usage, budget) becomes one write, and
    // the write lands after the reply instead of competing with it. flush() skips the pause.
    // Not unref'd: a process that ends on its own still writes what it changed.
    this.timer = setTimeout(() => this.startWriting(), this.coalesceMs);
  }

  private startWriting(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.writing || !this.dirty) return;
    this.writing = (async () => {
      try {
        while (this.dirty) {
          this.dirty = false;
          await writeJsonAtomic(this.file, this.value);
        }
      } catch (err) {
        // Not written: stays dirty, so flush() tries again and rejects when it still cannot (the stop reports it).
        this.dirty = true;
        throw err;
      } finally {
        this.writing = undefined;
      }
    })();
    // Errors surface through flush(); an unobserved rejection must not crash the process.
    this.writing.catch(() => undefined);
  }

  /** Resolves when everything changed so far is on disk. */
  async flush(): Promise<void> {
    if (this.timer || (this.dirty && !this.writing)) this.startWriting();
    while (this.writing) await this.writing;
  }
}

/**
 * A cache of JsonFile documents by key (chat id), so each file is read once and written atomically.
 */
export class JsonFileCollection<T> {
  private readonly files = new Map<string, JsonFile<T>>();
  constructor(private readonly fileFor: (key: string) => string, private readonly initial: () => T, private readonly onCorrupt?: (file: string, movedTo: string, error: Error) => void) {}

  doc(key: string): JsonFile<T> {
    let doc = this.files.get(key);
    if (!doc) {
      doc = new JsonFile(this.fileFor(key), this.initial, this.onCorrupt);
      this.files.set(key, doc);
    }
    return doc;
  }

  async flush(): Promise<void> {
    await Promise.all([...this.files.values()].map((d) => d.flush()));
  }
}
