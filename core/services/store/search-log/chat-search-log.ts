import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { appendToFile, releaseAppendHandle, TEMP_MARKER, writeFileAtomicSafe as writeFileAtomic } from '../atomic.js';
import { safeFileName } from '../../../api/file-name.js';
import { Month } from './month.js';
import { checkSnapshot, coverageOf, importSnapshot, newIndex, snapshotText, type UsableSnapshot } from './month-index.js';
import type { SearchHit, SearchLogItem } from '../store-declarations.js';

export type { SearchHit, SearchLogItem };

/** What a search log's lines are: the name in each month file's first line and how a stored value becomes an item. */
export interface SearchLogFormat<I extends SearchLogItem> {
  /** Names the kind in each month file's first line, `{"<header>":1,"chat":"<chat id>"}` (recall's files say "recall"). */
  header: string;
  /** The item a stored value is (checked, normalised: e.g. a long text clipped), or undefined when it is not one. */
  item(value: unknown): I | undefined;
  /**
   * Items without words are kept too (default: skipped). The voice archive keeps an erased note as such an item, so
   * its number and message id still say it was there and was erased.
   */
  keepsEmpty?: boolean;
  /**
   * Files that belong to an item (paths inside the chat's folder, e.g. `audio/<id>.ogg` of a voice note): deleted
   * when the item is removed (privacy, a message deleted for everyone, retention), moved with the chat.
   */
  files?(item: I): string[];
}

/** Whether `rel` may name a file attached to an item: a plain relative path inside the chat's folder, not one of the log's own files. */
export function isAttachedPath(rel: unknown): rel is string {
  if (typeof rel !== 'string' || !rel || rel.length > 200 || rel.startsWith('/') || rel.includes('\\') || rel.includes('\0')) return false;
  const parts = rel.split('/');
  if (parts.length < 2 || parts.some((p) => !p || p === '.' || p === '..' || p.startsWith('.'))) return false;
  return !rel.includes(TEMP_MARKER) && !rel.includes('.corrupt-');
}

/** What the store reports to its owner (the plugin logs it and tells the owners). */
export interface SearchLogEvents<I = SearchLogItem> {
  /** A segment file whose header is not this chat's log was moved aside, its bytes kept. */
  setAside?(file: string, movedTo: string, reason: string): void;
  /** Lines of a segment that were not a valid entry (skipped when loading, their bytes left in the file). */
  badLines?(file: string, count: number): void;
  /** An append failed (kept in memory and retried with the next write and at stop). */
  writeFailed?(file: string, err: unknown): void;
  /** Appends to this file that had failed were written. */
  writeRecovered?(file: string): void;
  /** A month's index was built from its log (`messages` of them) because its snapshot could not be used: `reason`. */
  indexRebuilt?(file: string, messages: number, reason: string): void;
  /** Writing an index snapshot failed (the index in memory is fine; the next start rebuilds that month). */
  snapshotFailed?(dir: string, err: unknown): void;
  /** A chat's loaded months were dropped from memory (`messages` of them) to stay within the store's bound. */
  unloaded?(chatId: string, messages: number): void;
  /** Only to keep `I` in the type (events never carry items). */
  readonly __item?: I;
}

const FORMAT = 1;
const SEGMENT = /^\d{4}-\d{2}\.jsonl$/;
/** Per query word, how many of its best matches are fused (enough to hold every match of a rare word). */
const PER_TERM = 400;
/** Messages kept loaded across a store's chats unless told otherwise (~140 MB). */
export const DEFAULT_MAX_LOADED_MESSAGES = 200_000;
const MAX_QUERY_TERMS = 8;
/** Months with at least this many lines keep a snapshot of their index (smaller ones index in a few milliseconds). */
export const SNAPSHOT_MIN_LINES = 1000;
/** A month's snapshot is refreshed once this many lines were added since the last one (and at stop). */
const SNAPSHOT_EVERY = 500;
/** Bytes read from the end of a month to find its last message (a line holds at most ~4,000 characters of text). */
const TAIL_BYTES = 64 * 1024;
/** More removals than this in one month rebuild its index: FlexSearch scans the whole month per removed id. */
const REMOVE_ONE_BY_ONE = 50;

let lastSegment = { from: 0, to: 0, name: '' };

/** The month file of a time (`2026-11.jsonl`); the last month is remembered, since nearly every message falls in it. */
function segmentOf(at: number): string {
  if (at >= lastSegment.from && at < lastSegment.to) return lastSegment.name;
  const d = new Date(at);
  const from = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const to = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  lastSegment = { from, to, name: `${d.toISOString().slice(0, 7)}.jsonl` };
  return lastSegment.name;
}
const indexFileOf = (segment: string) => segment.replace(/\.jsonl$/, '.index');
/** Read to check a segment's header before appending (a header is one short line: the format and the chat id). */
const HEADER_MAX_BYTES = 4096;


/** Every line of a month that holds `term`, oldest first. */
const matchesOf = (month: Month<unknown>, term: string) => Uint32Array.from(month.index!.search(term, { limit: month.length }) as number[]).sort();

/** The words of a query or message as the index sees them (letters and digits, lower case). */
export function queryTerms(text: string): string[] {
  return [...new Set(text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean))];
}

/**
 * The search log of ONE chat, `<root>/<chat>/<YYYY-MM>.jsonl` (recall's: `data/recall/…`): append-only month files of one JSON line per
 * message (the first line names the chat; a removed message leaves an empty line, so line numbers never change) and a
 * full-text index (FlexSearch) per month, its ids the line numbers, built when the chat is first needed — from the
 * month's snapshot (`<YYYY-MM>.index`) when it still matches the file, otherwise from the log (and said in the log).
 *
 * Isolation: an instance is bound to one chat id when it is made (by the plugin, from the message or the tool call's
 * binding — never from what a model asked for), and every method reads that chat only. There is no call anywhere
 * that searches more than one chat. A file whose first line names another chat is never read, nor is a snapshot that
 * names another chat.
 */
export class ChatSearchLog<I extends SearchLogItem = SearchLogItem> {
  /** Loaded months, oldest first. */
  private months: Array<Month<I>> = [];
  private loaded: Promise<void> | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private snapshotQueued = false;
  /** Segments known to exist with their header, and whether their last line is complete. */
  private readonly ready = new Set<string>();
  /** Lines whose append failed, per segment, written before the next line. */
  private readonly unsaved = new Map<string, string[]>();
  /**
   * Lines added but not yet handed to their file, per segment, in the order they were added (their line numbers in
   * memory): written together by the next file work of this chat, at the latest `delayMs` after the first of them.
   */
  private readonly pending = new Map<string, string[]>();
  private pendingTimer: NodeJS.Timeout | undefined;
  /** True once the loaded months are in memory (`loaded` is set while a load is still reading). */
  private loadedReady = false;
  private count = 0;
  /** Searches and exports reading the loaded months right now: the chat is not unloaded under them. */
  private readers = 0;

  constructor(
    readonly chatId: string,
    readonly dir: string,
    private readonly format: SearchLogFormat<I>,
    private readonly events: SearchLogEvents,
    private readonly snapshotMinLines = SNAPSHOT_MIN_LINES,
    /** Told each time the loaded months are read (the store keeps the loaded chats within its memory bound). */
    private readonly onRead: (log: ChatSearchLog<I>) => void = () => undefined,
  ) {}

  /** The item a line holds, or undefined (not JSON, not an item). */
  private readonly parse = (line: string): I | undefined => {
    try {
      return this.format.item(JSON.parse(line));
    } catch {
      return undefined;
    }
  };

  /** Whether an item is kept: a valid one with words (or without, when the format keeps those). */
  private worthKeeping(entry: I | undefined): entry is I {
    return Boolean(entry && (this.format.keepsEmpty || entry.text.trim()));
  }

  /** The first line of each of this chat's month files: the kind and the chat it belongs to. */
  private headerLine(): string {
    return `${JSON.stringify({ [this.format.header]: FORMAT, chat: this.chatId })}\n`;
  }

  /** Where a file attached to an item of this chat lives (see `SearchLogFormat.files`); throws for a path outside the chat's folder. */
  filePath(rel: string): string {
    if (!isAttachedPath(rel)) throw new TypeError(`"${String(rel).slice(0, 80)}" is not a file path inside a chat's folder (e.g. audio/m1.ogg)`);
    return path.join(this.dir, rel);
  }

  /** Writes a file to attach to an item (atomically): add the item once it is written, so no item names a missing file. */
  async putFile(rel: string, bytes: Buffer): Promise<void> {
    await writeFileAtomic(this.filePath(rel), bytes);
  }

  /**
   * Deletes the attached files of items that left the log, or that an item no longer names after a change (`next`):
   * an erased item's audio goes with its words. A path that is not an attached file's is never touched.
   */
  private async removeFiles(entries: Array<I | undefined | [I, I]>): Promise<void> {
    const files = this.format.files;
    if (!files) return;
    for (const item of entries) {
      if (!item) continue;
      const [entry, next] = Array.isArray(item) ? item : [item, undefined];
      const kept = new Set(next ? files(next) : []);
      for (const rel of files(entry)) if (isAttachedPath(rel) && !kept.has(rel)) await rm(path.join(this.dir, rel), { force: true });
    }
  }

  /** Messages held in memory (0 while not loaded). */
  get loadedMessages(): number {
    return this.loaded ? this.count : 0;
  }

  /**
   * Drops the loaded months (their index snapshots brought up to date first, so the next search loads quickly), once
   * no search or export is reading them. Appends go on to the files meanwhile; the next search loads them again.
   */
  unload(): Promise<void> {
    return this.serial(async () => {
      if (!this.loaded || this.readers > 0) return;
      await this.writeSnapshots(true).catch((err) => this.events.snapshotFailed?.(this.dir, err));
      if (this.readers > 0) return;
      const messages = this.count;
      this.loaded = undefined;
      this.loadedReady = false;
      this.months = [];
      this.count = 0;
      this.events.unloaded?.(this.chatId, messages);
    });
  }

  /** Runs `read` on the loaded months, never interleaved with an unload. */
  private async reading<T>(read: () => T): Promise<T> {
    this.readers++;
    try {
      await this.load();
      this.onRead(this);
      return read();
    } finally {
      this.readers--;
    }
  }

  /** Runs file work of this chat one after another (appends never interleave with a rewrite or a snapshot). */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    // Lines still pending go first: every rewrite, removal, snapshot and load sees the file with all lines added.
    const run = this.queue.then(async () => {
      await this.writePending();
      return work();
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Hands the pending lines to their files, one append per segment (a failure keeps them as unsaved, see `write`). */
  private async writePending(): Promise<void> {
    if (this.pendingTimer) clearTimeout(this.pendingTimer);
    this.pendingTimer = undefined;
    if (!this.pending.size) return;
    const batches = [...this.pending];
    this.pending.clear();
    for (const [name, lines] of batches) await this.write(name, lines.length === 1 ? lines[0] : lines.join(''));
  }

  /** Adds a line to its segment's pending lines (in memory first when loaded), the write due within `delayMs`. */
  private queueLine(entry: I, delayMs: number): void {
    const name = segmentOf(entry.at);
    if (this.loadedReady) {
      const month = this.month(name);
      month.index!.add(month.append(entry), entry.text);
      this.count++;
    }
    const lines = this.pending.get(name);
    const line = `${JSON.stringify(entry)}\n`;
    if (lines) lines.push(line);
    else this.pending.set(name, [line]);
    // Not unref'd: a process that ends on its own still writes what it was told.
    this.pendingTimer ??= setTimeout(() => void this.serial(async () => undefined).catch(() => undefined), delayMs);
  }

  private segments(): Promise<string[]> {
    return readdir(this.dir)
      .then((names) => names.filter((n) => SEGMENT.test(n)).sort())
      .catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return [] as string[];
        throw err;
      });
  }

  /**
   * Reads one segment's bytes. A segment whose header is not this chat's (corrupt, another chat's, an unknown format)
   * is moved aside as `<name>.corrupt-<time>` with its bytes kept and read as missing.
   */
  private async readSegmentBytes(name: string): Promise<Buffer | undefined> {
    const file = path.join(this.dir, name);
    let bytes: Buffer;
    try {
      bytes = await readFile(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    const end = bytes.indexOf(10);
    const reason = this.headerProblem(bytes.subarray(0, end < 0 ? bytes.length : end));
    if (!reason) return bytes;
    await this.setAside(name, reason);
    return undefined;
  }

  /** Why a segment's first line is not this chat's header, or undefined when it is. */
  private headerProblem(firstLine: Buffer): string | undefined {
    let header: unknown;
    try {
      header = JSON.parse(firstLine.toString('utf8'));
    } catch {
      header = undefined;
    }
    const h = header as Record<string, unknown> | undefined;
    const kind = this.format.header;
    return !h || typeof h !== 'object' ? `its first line is not a ${kind}-log header` : h[kind] !== FORMAT ? `unknown format ${String(h[kind]).slice(0, 20)}` : h.chat !== this.chatId ? 'it belongs to another chat' : undefined;
  }

  /** Moves a segment aside as `<name>.corrupt-<time>`, its bytes kept, with its index snapshot gone (it is reported). */
  private async setAside(name: string, reason: string): Promise<void> {
    const file = path.join(this.dir, name);
    const movedTo = `${file}.corrupt-${Date.now()}`;
    releaseAppendHandle(file);
    await rename(file, movedTo);
    // Its index snapshot describes a file that is no longer there.
    await rm(path.join(this.dir, indexFileOf(name)), { force: true });
    this.ready.delete(name);
    this.events.setAside?.(file, movedTo, reason);
  }

  /** Reads one segment whole: its raw lines after the header and their entries (removals and retention). */
  private async readSegment(name: string): Promise<{ lines: string[]; entries: Array<I | undefined> } | undefined> {
    const bytes = await this.readSegmentBytes(name);
    if (!bytes) return undefined;
    const lines = bytes.toString('utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    return { lines: lines.slice(1), entries: lines.slice(1).map((line) => (line ? this.parse(line) : undefined)) };
  }

  /** The snapshot of a month when it matches the month's file as read, otherwise why not. */
  private async readSnapshot(name: string, bytes: Buffer): Promise<UsableSnapshot | string> {
    let text: string;
    try {
      text = await readFile(path.join(this.dir, indexFileOf(name)), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'no snapshot';
      return `its snapshot could not be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
    }
    const checked = checkSnapshot(text, this.chatId, name, bytes);
    if ('stale' in checked) return `its snapshot is stale: ${checked.stale}`;
    if ('corrupt' in checked) return `its snapshot is corrupt: ${checked.corrupt}`;
    return checked;
  }

  /**
   * Loads the chat's months and their indexes: a month with a snapshot that matches its file imports it and parses
   * only the lines added since; the others parse every line and index it (said in the log for large months).
   */
  private load(): Promise<void> {
    this.loaded ??= (async () => {
      // Behind the appends already queued, so the files hold them; appends asked for meanwhile wait for the load.
      await this.serial(async () => {
        const months: Array<Month<I>> = [];
        let rebuilt = false;
        // Temporary files of a write a crash cut short (another process's: this chat's writes all run in `serial`).
        for (const name of await readdir(this.dir).catch(() => [] as string[])) {
          const pid = /\.tmp-(\d+)-\d+$/.exec(name)?.[1];
          if (pid && pid !== String(process.pid)) await rm(path.join(this.dir, name), { force: true });
        }
        for (const name of await this.segments()) {
          const bytes = await this.readSegmentBytes(name);
          if (!bytes) continue;
          const month = new Month<I>(name, this.parse, bytes);
          rebuilt = this.indexMonth(month, await this.readSnapshot(name, bytes)) || rebuilt;
          months.push(month);
        }
        this.months = months;
        this.count = months.reduce((n, m) => n + m.entries, 0);
        this.loadedReady = true;
        if (rebuilt) this.queueSnapshots();
      });
    })().catch((err) => {
      this.loaded = undefined;
      this.loadedReady = false;
      throw err;
    });
    return this.loaded;
  }

  /** Builds a loaded month's index; true when a large month was indexed from its log (a snapshot is then due). */
  private indexMonth(month: Month<I>, snapshot: UsableSnapshot | string): boolean {
    let from = 1;
    let reason = typeof snapshot === 'string' ? snapshot : undefined;
    if (typeof snapshot !== 'string') {
      try {
        month.index = importSnapshot(snapshot);
        month.entries = snapshot.entries;
        month.snapshotLines = from = snapshot.lines;
      } catch (err) {
        reason = `its snapshot is corrupt: ${(err as Error).message}`;
      }
    }
    if (reason) month.index = newIndex();
    let bad = 0;
    for (let line = from; line < month.length; line++) {
      const text = month.lineText(line);
      const entry = text ? this.parse(text) : undefined;
      if (!entry) {
        month.clear(line);
        if (text) bad++;
        continue;
      }
      month.entries++;
      month.index!.add(line, entry.text);
    }
    const file = path.join(this.dir, month.name);
    if (bad) this.events.badLines?.(file, bad);
    const large = month.length >= this.snapshotMinLines;
    // A small month never has a snapshot; a missing, stale or corrupt one of a large month is worth saying.
    if (reason && (large || reason !== 'no snapshot')) this.events.indexRebuilt?.(file, month.entries, reason);
    return Boolean(reason) && large;
  }

  /** Writes the snapshots of changed large months soon, behind the file work already queued. */
  private queueSnapshots(): void {
    if (this.snapshotQueued) return;
    this.snapshotQueued = true;
    void this.serial(async () => {
      this.snapshotQueued = false;
      await this.writeSnapshots(false);
    }).catch((err) => this.events.snapshotFailed?.(this.dir, err));
  }

  /**
   * Writes the snapshot of each large month whose file holds exactly the lines in memory (appends still queued wait
   * for the next one). Runs inside `serial`, so no append or rewrite happens meanwhile. `all`: every change, not only
   * months SNAPSHOT_EVERY lines ahead (at stop).
   */
  private async writeSnapshots(all: boolean): Promise<void> {
    for (const month of this.months) {
      if (!month.snapshotDue(this.snapshotMinLines, all ? 0 : SNAPSHOT_EVERY) || this.unsaved.has(month.name) || (!all && month.snapshotTried === month.length)) continue;
      const bytes = await readFile(path.join(this.dir, month.name)).catch(() => undefined);
      const coverage = bytes && coverageOf(bytes);
      if (!coverage || coverage.lines !== month.length) {
        month.snapshotTried = month.length;
        continue;
      }
      await writeFileAtomic(path.join(this.dir, indexFileOf(month.name)), snapshotText(month.index!, this.chatId, month.name, { ...coverage, entries: month.entries }));
      month.snapshotLines = coverage.lines;
    }
  }

  /** Appends one message (written to disk in order; visible to search at once when the chat is loaded). */
  add(input: I): Promise<void> {
    return this.addMany([input]);
  }

  /**
   * Adds one live message without waiting for the disk: visible to search at once when the chat is loaded, handed to
   * its file together with the other lines of the next `delayMs` (one write instead of one per message), and at once
   * by any other file work of this chat, `flush()` and the stop. A crash can lose those last lines of the log; the
   * plugin catches up on them from the chat's history at the next start. False when the entry is not kept (no text).
   */
  addSoon(input: I, delayMs: number): boolean {
    const entry = this.format.item(input);
    if (!this.worthKeeping(entry)) return false;
    // A load still reading the files would miss the line in memory: the waiting path puts it in after the load.
    if (this.loaded && !this.loadedReady) {
      void this.addMany([entry]).catch(() => undefined);
      return true;
    }
    this.queueLine(entry, delayMs);
    if (this.loadedReady && this.months.some((m) => m.snapshotDue(this.snapshotMinLines, SNAPSHOT_EVERY))) this.queueSnapshots();
    return true;
  }

  /** Appends messages in order, resolving once their lines were handed to the file (imports, the benchmark). Invalid or empty ones are skipped. */
  async addMany(inputs: I[]): Promise<void> {
    const entries = inputs.map((e) => this.format.item(e)).filter((e): e is I => this.worthKeeping(e));
    if (!entries.length) return;
    if (this.loaded) await this.loaded.catch(() => undefined);
    // Unloaded meanwhile: the files get the lines, the next load reads them. In memory now (when loaded), with the
    // line number the append gives it: lines are queued, and written, in this order.
    for (const entry of entries) this.queueLine(entry, 0);
    await this.serial(async () => undefined);
    if (this.months.some((m) => m.snapshotDue(this.snapshotMinLines, SNAPSHOT_EVERY))) this.queueSnapshots();
  }

  /** The loaded month of `name`, added (empty, in order, with an index) when it is new. */
  private month(name: string): Month<I> {
    let at = this.months.length;
    while (at > 0 && this.months[at - 1].name > name) at--;
    if (this.months[at - 1]?.name === name) return this.months[at - 1];
    const month = new Month<I>(name, this.parse);
    month.index = newIndex();
    this.months.splice(at, 0, month);
    return month;
  }

  private async write(name: string, line: string): Promise<void> {
    const file = path.join(this.dir, name);
    const earlier = this.unsaved.get(name);
    const lines = earlier ? [...earlier, line] : [line];
    try {
      if (!this.ready.has(name)) await this.prepareSegment(name);
      await appendToFile(file, earlier ? lines.join('') : line);
      if (this.unsaved.delete(name)) this.events.writeRecovered?.(file);
    } catch (err) {
      this.unsaved.set(name, lines);
      this.ready.delete(name);
      // Part of the lines may have reached the file: its line numbers are no longer certain until the next load.
      const month = this.months.find((m) => m.name === name);
      if (month) month.suspect = true;
      this.events.writeFailed?.(file, err);
    }
  }

  /** Makes sure the segment exists with its header and ends with a complete line (a crash may have cut one). */
  private async prepareSegment(name: string): Promise<void> {
    const file = path.join(this.dir, name);
    await mkdir(this.dir, { recursive: true });
    let handle;
    try {
      handle = await open(file, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      await writeFileAtomic(file, this.headerLine());
      this.ready.add(name);
      return;
    }
    let problem: string | undefined;
    try {
      const { size } = await handle.stat();
      // A file that is not this chat's log (another chat's, a damaged first line) is set aside before anything is
      // added: a message appended to it would go aside with it at the next load.
      const head = Buffer.alloc(Math.min(size, HEADER_MAX_BYTES));
      await handle.read(head, 0, head.length, 0);
      const end = head.indexOf(10);
      problem = this.headerProblem(head.subarray(0, end < 0 ? head.length : end));
      const last = Buffer.alloc(1);
      if (!problem && size > 0) await handle.read(last, 0, 1, size - 1);
      if (!problem && size > 0 && last[0] !== 0x0a) await appendToFile(file, '\n');
    } finally {
      await handle.close();
    }
    if (problem) {
      await this.setAside(name, problem);
      await writeFileAtomic(file, this.headerLine());
    }
    this.ready.add(name);
  }

  /**
   * The best matches of `query` in this chat, with the message before and after each. `excludeId` leaves out one
   * message (the question being asked). Only entries at or after `notBefore` (the retention cutoff) are returned.
   */
  async search(query: string, options: { limit?: number; excludeId?: string; notBefore?: number } = {}): Promise<SearchHit<I>[]> {
    const terms = queryTerms(String(query ?? '')).slice(0, MAX_QUERY_TERMS);
    if (!terms.length) return [];
    return this.reading(() => this.searchLoaded(terms, options));
  }

  private searchLoaded(terms: string[], options: { limit?: number; excludeId?: string; notBefore?: number }): SearchHit<I>[] {
    if (!this.count) return [];
    const limit = Math.max(1, Math.min(20, Math.floor(options.limit ?? 5) || 5));
    const notBefore = options.notBefore ?? 0;
    // Months wholly before the cutoff are not searched; newest month first.
    const firstMonth = segmentOf(notBefore);
    const months = this.months.filter((m) => m.name >= firstMonth).reverse();
    const hits: SearchHit<I>[] = [];
    // Candidates are ranked from the index's ids alone; entries are read only for the few shown (reading one per
    // candidate, hundreds of scattered objects, was most of a search's time at 100,000 messages).
    const take = (month: Month<I>, line: number) => {
      const entry = month.at(line);
      if (!entry || entry.at < notBefore || (options.excludeId && entry.id === options.excludeId)) return false;
      hits.push({ message: entry, ...this.neighbours(month, line) });
      return hits.length === limit;
    };
    if (terms.length === 1) {
      // One word: the newest matches first, month by month (all of a month's matches: FlexSearch's own order puts
      // messages that start with the word first, not the newest).
      for (const month of months) {
        const lines = matchesOf(month, terms[0]);
        for (let i = lines.length - 1; i >= 0; i--) if (take(month, lines[i])) return hits;
      }
      return hits;
    }
    // Each word looked up on its own and the lists fused, a word weighing more the fewer messages it is in (idf):
    // intersecting huge lists of common words in one FlexSearch call is what makes multi-word queries slow. Scores
    // are kept per month, keyed by line (small integers: fast map keys).
    const scores = months.map(() => new Map<number, number>());
    for (const term of terms) {
      const found: Uint32Array[] = [];
      let total = 0;
      // A word's newest PER_TERM matches are its candidates.
      for (let m = 0; m < months.length && total < PER_TERM; m++) {
        const all = matchesOf(months[m], term);
        const lines = all.subarray(Math.max(0, all.length - (PER_TERM - total)));
        found.push(lines);
        total += lines.length;
      }
      if (!total) continue;
      const idf = Math.log(1 + this.count / total);
      found.forEach((lines, m) => {
        for (const line of lines) scores[m].set(line, (scores[m].get(line) ?? 0) + idf);
      });
    }
    const ranked: Array<{ m: number; line: number; score: number }> = [];
    scores.forEach((byLine, m) => byLine.forEach((score, line) => ranked.push({ m, line, score })));
    // Equal scores: the newer message first (months are newest first).
    ranked.sort((a, b) => b.score - a.score || a.m - b.m || b.line - a.line);
    for (const { m, line } of ranked) if (take(months[m], line)) break;
    return hits;
  }

  /** The messages just before and after a line, across month boundaries. */
  private neighbours(month: Month<I>, line: number): { before?: I; after?: I } {
    const at = this.months.indexOf(month);
    let before: I | undefined;
    let after: I | undefined;
    for (let m = at, l = line - 1; m >= 0 && !before; m--, l = (this.months[m]?.length ?? 0) - 1) {
      for (; l > 0 && !before; l--) before = this.months[m].at(l);
    }
    for (let m = at, l = line + 1; m < this.months.length && !after; m++, l = 1) {
      for (; l < this.months[m].length && !after; l++) after = this.months[m].at(l);
    }
    return { ...(before ? { before } : {}), ...(after ? { after } : {}) };
  }

  /** How many messages the chat's log holds. */
  async size(): Promise<number> {
    return this.reading(() => this.count);
  }

  /** Every message of this chat's log (oldest first) that `matches`; for the privacy export. */
  async where(matches: (entry: I) => boolean): Promise<I[]> {
    return this.reading(() => {
      const found: I[] = [];
      for (const month of this.months) {
        for (let line = 1; line < month.length; line++) {
          const entry = month.peek(line);
          if (entry && matches(entry)) found.push(entry);
        }
      }
      return found;
    });
  }

  /**
   * Removes the messages that match from disk (each touched segment rewritten atomically with an empty line in place
   * of each removed one, lines that are not valid entries kept as they were; the month's index snapshot deleted, as
   * it holds the removed words), from appends waiting for a retry, from memory and from the search index. Returns
   * how many went.
   */
  async removeWhere(matches: (entry: I) => boolean): Promise<number> {
    await this.load().catch(() => undefined);
    return this.serial(async () => {
      let count = 0;
      for (const name of await this.segments()) count += await this.rewrite(name, matches);
      count += this.removeUnsaved(matches);
      await this.removeFiles(this.filesToRemove.splice(0));
      this.forget(matches, this.months);
      return count;
    });
  }

  /**
   * Changes the messages that match (an edited message: `change` gives the new entry) on disk (each touched segment
   * rewritten atomically, every line in its place; the month's index snapshot deleted, as it holds the old words),
   * in appends waiting for a retry, in memory and in the search index. Returns how many changed.
   */
  async changeWhere(matches: (entry: I) => boolean, change: (entry: I) => I): Promise<number> {
    await this.load().catch(() => undefined);
    const changed = (entry: I) => this.format.item(change(entry)) ?? entry;
    return this.serial(async () => {
      let count = 0;
      for (const name of await this.segments()) count += await this.rewrite(name, matches, changed);
      count += this.changeUnsaved(matches, changed);
      await this.removeFiles(this.filesDropped.splice(0));
      if (!this.loaded) return count;
      for (const month of this.months) {
        let touched = false;
        for (let line = 1; line < month.length; line++) {
          const entry = month.peek(line);
          if (!entry || !matches(entry)) continue;
          const next = changed(entry);
          month.replace(line, next);
          month.index?.remove(line);
          month.index?.add(line, next.text);
          touched = true;
        }
        if (touched) month.snapshotLines = 0;
      }
      this.queueSnapshots();
      return count;
    });
  }

  /** Drops every message older than `cutoff` (whole segments of older months are deleted). Returns how many went. */
  async prune(cutoff: number): Promise<number> {
    const oldMonth = segmentOf(cutoff);
    const old = (entry: I) => entry.at < cutoff;
    return this.serial(async () => {
      let count = 0;
      for (const name of await this.segments()) {
        if (name > oldMonth) break;
        if (name < oldMonth) {
          const segment = await this.readSegment(name);
          count += segment?.entries.filter(Boolean).length ?? 0;
          await this.removeFiles(segment?.entries ?? []);
          await rm(path.join(this.dir, indexFileOf(name)), { force: true });
          releaseAppendHandle(path.join(this.dir, name));
          await rm(path.join(this.dir, name), { force: true });
          this.ready.delete(name);
          // A later message of that month starts a new file at line 1: the month leaves memory with it.
          const month = this.months.find((m) => m.name === name);
          if (month) {
            this.count -= month.entries;
            this.months.splice(this.months.indexOf(month), 1);
          }
        } else count += await this.rewrite(name, old);
      }
      count += this.removeUnsaved(old);
      await this.removeFiles(this.filesToRemove.splice(0));
      // Only the boundary month can hold old messages now (a message's month is the one of its time).
      this.forget(old, this.months.filter((m) => m.name <= oldMonth));
      return count;
    });
  }

  /**
   * Rewrites one segment without the entries that match, or with `change` made to them (inside `serial`); returns how
   * many went or changed.
   */
  private async rewrite(name: string, matches: (entry: I) => boolean, change?: (entry: I) => I): Promise<number> {
    const segment = await this.readSegment(name);
    if (!segment) return 0;
    const gone = segment.entries.map((entry) => Boolean(entry && matches(entry)));
    const count = gone.filter(Boolean).length;
    if (!count) return 0;
    const next = segment.entries.map((entry, i) => (gone[i] && change ? change(entry!) : undefined));
    // A removed item's files (or those a change drops) go first: a rewrite that then fails leaves an item without its
    // file, never a file of a removed item.
    await this.removeFiles(segment.entries.flatMap((entry, i): Array<I | [I, I]> => (!gone[i] || !entry ? [] : next[i] ? [[entry, next[i]!]] : [entry])));
    await rm(path.join(this.dir, indexFileOf(name)), { force: true });
    const line = (l: string, i: number) => (!gone[i] ? `${l}\n` : next[i] ? `${JSON.stringify(next[i])}\n` : '\n');
    await writeFileAtomic(path.join(this.dir, name), this.headerLine() + segment.lines.map(line).join(''));
    this.ready.add(name);
    const month = this.months.find((m) => m.name === name);
    if (month) month.snapshotLines = 0;
    return count;
  }

  /** Appends waiting for a retry lose the lines that match (an empty line keeps the numbering); returns how many. */
  private removeUnsaved(matches: (entry: I) => boolean): number {
    const gone: I[] = [];
    const count = this.rewriteUnsaved(matches, (entry) => (gone.push(entry), ''));
    // Not awaited inside the rewrite of lines; the files go before the caller's work ends.
    this.filesToRemove.push(...gone);
    return count;
  }

  /** Files of removed unsaved lines, deleted by `removeWhere` and `prune` before they return. */
  private filesToRemove: I[] = [];

  /** Appends waiting for a retry get `change` made to the lines that match; returns how many. */
  private changeUnsaved(matches: (entry: I) => boolean, change: (entry: I) => I): number {
    return this.rewriteUnsaved(matches, (entry) => {
      const next = change(entry);
      this.filesDropped.push([entry, next]);
      return JSON.stringify(next);
    });
  }

  /** Unsaved lines changed so that they name fewer files: those files are deleted by `changeWhere` before it returns. */
  private filesDropped: Array<[I, I]> = [];

  /** The lines of appends waiting for a retry that match are replaced by `line(entry)`; returns how many. */
  private rewriteUnsaved(matches: (entry: I) => boolean, line: (entry: I) => string): number {
    let count = 0;
    for (const [name, chunks] of this.unsaved) {
      const rewritten = chunks.map((chunk) =>
        chunk
          .split('\n')
          .map((text) => {
            const entry = text ? this.parse(text) : undefined;
            if (!entry || !matches(entry)) return text;
            count++;
            return line(entry);
          })
          .join('\n'),
      );
      this.unsaved.set(name, rewritten);
    }
    return count;
  }

  /** Memory follows the files: matching entries of `months` leave them and their indexes; new snapshots are queued. */
  private forget(matches: (entry: I) => boolean, months: Array<Month<I>>): void {
    if (!this.loaded) return;
    for (const month of months) {
      const gone: number[] = [];
      for (let line = 1; line < month.length; line++) {
        const entry = month.peek(line);
        if (entry && matches(entry) && month.remove(line)) gone.push(line);
      }
      if (!gone.length) continue;
      this.count -= gone.length;
      month.snapshotLines = 0;
      if (gone.length <= REMOVE_ONE_BY_ONE) for (const line of gone) month.index?.remove(line);
      else {
        month.index = newIndex();
        for (let line = 1; line < month.length; line++) {
          const entry = month.peek(line);
          if (entry) month.index.add(line, entry.text);
        }
      }
      this.queueSnapshots();
    }
  }

  /** Waits for the appends under way, retries those that had failed and brings the index snapshots up to date. */
  async flush(): Promise<void> {
    await this.serial(async () => {
      for (const name of [...this.unsaved.keys()]) {
        const lines = this.unsaved.get(name)!;
        this.unsaved.delete(name);
        const last = lines.pop()!;
        if (lines.length) this.unsaved.set(name, lines);
        await this.write(name, last);
      }
      await this.writeSnapshots(true).catch((err) => this.events.snapshotFailed?.(this.dir, err));
    });
  }

  /**
   * After a crash: appends what the chat's history (`recent`, oldest first) holds after the last message on disk —
   * lines the crash caught before they were written. With no message on disk, entries from `since` on are added.
   * Returns how many were added.
   */
  catchUp(recent: () => Promise<I[]>, since: number): Promise<number> {
    return this.serial(async () => {
      const last = await this.lastOnDisk();
      const entries = (await recent()).map((e) => this.format.item(e)).filter((e): e is I => this.worthKeeping(e));
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
      for (const entry of missing) this.queueLine(entry, 0);
      await this.writePending();
      return missing.length;
    });
  }

  /** The newest message on disk (read from the end of the newest month that has one), if any. */
  private async lastOnDisk(): Promise<I | undefined> {
    const names = await this.segments();
    for (let i = names.length - 1; i >= 0; i--) {
      let tail: string;
      try {
        const handle = await open(path.join(this.dir, names[i]), 'r');
        try {
          const { size } = await handle.stat();
          const length = Math.min(size, TAIL_BYTES);
          const bytes = Buffer.alloc(length);
          await handle.read(bytes, 0, length, size - length);
          tail = bytes.toString('utf8');
        } finally {
          await handle.close();
        }
      } catch {
        continue;
      }
      const lines = tail.split('\n');
      for (let j = lines.length - 1; j >= 0; j--) {
        const entry = lines[j] ? this.parse(lines[j]) : undefined;
        if (entry) return entry;
      }
    }
    return undefined;
  }

  /**
   * Takes in the whole log of `source` (the same chat under its former id: a private chat WhatsApp moved from its LID
   * to the phone number). Month by month, the two files become one, every message in time order (equal times: this
   * chat's first), written atomically with this chat's header; only then is the source's month file removed. A
   * line of the source that this chat already holds byte for byte is not taken twice, so a move cut short by a crash
   * is finished by the next one without duplicates, and nothing is ever only in memory. Lines that are not valid
   * entries move with the message before them; files set aside as corrupt move along, bytes kept. Afterwards the
   * source's folder is gone and both logs are out of memory (the next search loads the merged files). Rejects, moving
   * nothing, while the source has lines it could not write.
   */
  async absorb(source: ChatSearchLog<I>): Promise<void> {
    await source.flush();
    await source.serial(() =>
      this.serial(async () => {
        const unsaved = source.unsavedCount();
        if (unsaved) throw new Error(`${unsaved} message(s) of ${source.chatId} are not on disk yet, so its log stays where it is`);
        // Attached files (and anything else in the folder: files set aside as corrupt) first, then the months that
        // name them; then what reading the months set aside.
        const others = (name: string) => !SEGMENT.test(name) && !name.endsWith('.index') && !name.includes(TEMP_MARKER);
        await moveFolderContents(source.dir, this.dir, others);
        for (const name of await source.segments()) await this.takeMonth(source, name);
        await moveFolderContents(source.dir, this.dir, others);
        await rm(source.dir, { recursive: true, force: true });
        source.forgetMemory();
        this.forgetMemory();
      }),
    );
  }

  /** One month of `source` merged into this chat's month file (inside both chats' `serial`), then removed from the source. */
  private async takeMonth(source: ChatSearchLog<I>, name: string): Promise<void> {
    const incoming = await source.readSegment(name);
    if (incoming) {
      const file = path.join(this.dir, name);
      const existing = (await this.readSegment(name))?.lines ?? [];
      await mkdir(this.dir, { recursive: true });
      // The index snapshot goes first: it describes the file about to change.
      await rm(path.join(this.dir, indexFileOf(name)), { force: true });
      await writeFileAtomic(file, this.headerLine() + mergeLines(existing, incoming.lines, this.parse).map((line) => `${line}\n`).join(''));
      this.ready.add(name);
    }
    const from = path.join(source.dir, name);
    releaseAppendHandle(from);
    await rm(path.join(source.dir, indexFileOf(name)), { force: true });
    await rm(from, { force: true });
    source.ready.delete(name);
  }

  /** Removes this chat's folder (see `SearchLogs.dropChat`); the instance is not used afterwards. */
  async drop(): Promise<void> {
    await this.flush();
    await this.serial(async () => {
      const unsaved = this.unsavedCount();
      if (unsaved) throw new Error(`${unsaved} item(s) of ${this.chatId} are not on disk yet, so its log stays where it is`);
      for (const name of await this.segments()) releaseAppendHandle(path.join(this.dir, name));
      await rm(this.dir, { recursive: true, force: true });
    });
  }

  /** Drops the loaded months (files changed under them): the next search loads them again. Inside `serial`. */
  private forgetMemory(): void {
    this.loaded = undefined;
    this.loadedReady = false;
    this.months = [];
    this.count = 0;
  }

  /** Messages whose append has not reached the disk (reported at stop). */
  unsavedCount(): number {
    return [...this.unsaved.values()].reduce((n, lines) => n + lines.length, 0);
  }
}

/**
 * Moves the entries of `from` that `take` accepts into `to`, folders merged file by file (each a rename, so a crash
 * leaves every file in one place or the other). A file `to` has already is the same one (attached files are named by
 * their message; a move cut short left it there): when its bytes are the same the source's copy goes, otherwise the
 * source's copy is kept beside it as `<name>.moved-<time>` — nothing is lost.
 */
async function moveFolderContents(from: string, to: string, take: (name: string) => boolean): Promise<void> {
  let entries;
  try {
    entries = await readdir(from, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  for (const entry of entries) {
    if (!take(entry.name)) continue;
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) {
      await moveFolderContents(source, target, () => true);
      await rm(source, { recursive: true, force: true });
      continue;
    }
    await mkdir(to, { recursive: true });
    const there = await stat(target).catch(() => undefined);
    if (!there) {
      await rename(source, target);
      continue;
    }
    const [a, b] = await Promise.all([readFile(source), readFile(target)]);
    if (a.equals(b)) await rm(source, { force: true });
    else await rename(source, `${target}.moved-${Date.now()}`);
  }
}

/**
 * Two months' lines (without headers) as one, in time order, stable (equal times: `ours` first). Removed lines (empty)
 * are dropped; a line that is not a valid entry keeps its place after the message before it. A line of `theirs` that
 * `ours` holds byte for byte is left out (once per copy in `ours`): merging again after a crash adds nothing.
 */
export function mergeLines(ours: string[], theirs: string[], parse: (line: string) => { at: number } | undefined): string[] {
  const held = new Map<string, number>();
  for (const line of ours) if (line) held.set(line, (held.get(line) ?? 0) + 1);
  const keyed: Array<{ line: string; at: number }> = [];
  const add = (lines: string[], skipHeld: boolean) => {
    let at = 0;
    for (const line of lines) {
      if (!line) continue;
      if (skipHeld) {
        const copies = held.get(line) ?? 0;
        if (copies) {
          held.set(line, copies - 1);
          continue;
        }
      }
      at = parse(line)?.at ?? at;
      keyed.push({ line, at });
    }
  };
  add(ours, false);
  add(theirs, true);
  return keyed.sort((a, b) => a.at - b.at).map((k) => k.line);
}

/**
 * The search logs of every chat under `root` (recall's: `data/recall/`), the engine behind `Store.chatSearchLog`. It
 * hands out one `ChatSearchLog` per chat and lists the chats that have a log; it has no search of its own, so nothing
 * can search across chats.
 *
 * @example
 * const logs = new SearchLogs('data/recall', { header: 'recall', item: validEntry });
 * await logs.chat(ctx.chatId).add({ role: 'user', text: 'the address is Jl. Merdeka 5', at: Date.now() });
 * const hits = await logs.chat(ctx.chatId).search('address');
 */
export class SearchLogs<I extends SearchLogItem = SearchLogItem> {
  private readonly chats = new Map<string, ChatSearchLog<I>>();
  /** Loaded chats, least recently read first (a Map keeps insertion order). */
  private readonly recentlyRead = new Map<ChatSearchLog<I>, true>();

  constructor(
    readonly root: string,
    private readonly format: SearchLogFormat<I>,
    private readonly events: SearchLogEvents = {},
    private readonly options: {
      /** Months with at least this many lines keep an index snapshot (tests make it small). */
      snapshotMinLines?: number;
      /**
       * Messages kept loaded across all chats (a loaded chat costs ~0.7 KB per message): beyond it the least recently
       * searched chats are unloaded, and load again from their snapshots at their next search. Default 200,000.
       */
      maxLoadedMessages?: () => number;
      /** Told of each chat's log when it is first used in this run (the plugin catches up after a crash). */
      onFirstUse?: (log: ChatSearchLog<I>) => void;
    } = {},
  ) {}

  /** The log of one chat (the id comes from the message being handled or the tool call's binding). */
  chat(chatId: string): ChatSearchLog<I> {
    if (typeof chatId !== 'string' || !chatId.trim()) throw new TypeError('a search log needs the chat id');
    let chat = this.chats.get(chatId);
    if (!chat) {
      chat = new ChatSearchLog<I>(chatId, path.join(this.root, safeFileName(chatId)), this.format, this.events, this.options.snapshotMinLines, (log) => this.wasRead(log));
      this.chats.set(chatId, chat);
      this.options.onFirstUse?.(chat);
    }
    return chat;
  }

  /**
   * A private chat is known as `to` from now on (WhatsApp moved it from its LID to the phone number): its log under
   * `from` joins the log of `to` (see `ChatSearchLog<I>.absorb`), so a search under `to` finds both and nothing stays
   * under `from`.
   */
  async moveChat(from: string, to: string): Promise<void> {
    if (from === to) return;
    const source = this.chats.get(from) ?? new ChatSearchLog<I>(from, path.join(this.root, safeFileName(from)), this.format, this.events, this.options.snapshotMinLines);
    await this.chat(to).absorb(source);
    this.chats.delete(from);
    this.recentlyRead.delete(source);
  }

  /**
   * Removes a chat's whole log folder (its items were copied elsewhere by the owner first, e.g. a chat moved to a new
   * id with items renumbered) and forgets its log: its next use starts empty. Rejects, removing nothing, while the
   * chat has lines it could not write.
   */
  async dropChat(chatId: string): Promise<void> {
    const log = this.chats.get(chatId) ?? new ChatSearchLog<I>(chatId, path.join(this.root, safeFileName(chatId)), this.format, this.events, this.options.snapshotMinLines);
    await log.drop();
    this.chats.delete(chatId);
    this.recentlyRead.delete(log);
  }

  /** Messages held in memory across all chats. */
  loadedMessages(): number {
    let total = 0;
    for (const log of this.chats.values()) total += log.loadedMessages;
    return total;
  }

  /** A chat's loaded months were read: it becomes the most recent; the oldest others go while over the bound. */
  private wasRead(log: ChatSearchLog<I>): void {
    this.recentlyRead.delete(log);
    this.recentlyRead.set(log, true);
    const max = this.options.maxLoadedMessages?.() ?? DEFAULT_MAX_LOADED_MESSAGES;
    let total = this.loadedMessages();
    for (const other of this.recentlyRead.keys()) {
      if (total <= max) break;
      if (other === log) continue;
      this.recentlyRead.delete(other);
      total -= other.loadedMessages;
      void other.unload();
    }
  }

  /**
   * The chats that have a log folder or were used in this run (lines still pending may not have made the folder
   * yet): for retention and the privacy controls, which must see every line.
   */
  async chatIds(): Promise<string[]> {
    const names = await readdir(this.root).catch(() => [] as string[]);
    const ids: string[] = [...this.chats.keys()].filter((id) => !names.includes(safeFileName(id)));
    for (const name of names) {
      // `.running` and the like are the plugin's own files; no chat's folder name starts with a dot.
      if (name.startsWith('.')) continue;
      let id: string;
      try {
        id = decodeURIComponent(name);
      } catch {
        continue;
      }
      // A folder whose name is not exactly what the chat id gives (clipped long ids, stray folders) is left alone.
      if (safeFileName(id) === name) ids.push(id);
    }
    return ids;
  }

  /** Drops messages older than `cutoff` in every chat; returns how many went. */
  async prune(cutoff: number): Promise<number> {
    let removed = 0;
    for (const id of await this.chatIds()) removed += await this.chat(id).prune(cutoff);
    return removed;
  }

  /** Waits for every chat's appends (and retries failed ones); returns how many messages are still not on disk. */
  async flush(): Promise<number> {
    await Promise.all([...this.chats.values()].map((c) => c.flush()));
    return [...this.chats.values()].reduce((n, c) => n + c.unsavedCount(), 0);
  }
}
