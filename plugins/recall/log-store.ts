import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { Encoder, Index } from 'flexsearch';
import { appendToFile, safeFileName, writeFileAtomic } from '../../core/index.js';

/** One message kept in the recall log: what someone said in the chat, or what the bot answered. */
export interface LoggedMessage {
  /** The chat message id (absent for the bot's answers). */
  id?: string;
  role: 'user' | 'assistant';
  senderId?: string;
  senderName?: string;
  text: string;
  /** Unix ms. */
  at: number;
  /** Media kind when the message carried media (the text is then its caption or transcript). */
  media?: string;
}

/** One search result: the message and its neighbours in the chat (context). */
export interface RecallHit {
  message: LoggedMessage;
  before?: LoggedMessage;
  after?: LoggedMessage;
}

/** What the store reports to its owner (the plugin logs it and tells the owners). */
export interface RecallStoreEvents {
  /** A segment file whose header is not this chat's log was moved aside, its bytes kept. */
  setAside?(file: string, movedTo: string, reason: string): void;
  /** Lines of a segment that were not a valid entry (skipped when loading, their bytes left in the file). */
  badLines?(file: string, count: number): void;
  /** An append failed (kept in memory and retried with the next write and at stop). */
  writeFailed?(file: string, err: unknown): void;
  /** Appends to this file that had failed were written. */
  writeRecovered?(file: string): void;
}

const FORMAT = 1;
const SEGMENT = /^\d{4}-\d{2}\.jsonl$/;
/** Longest text kept per message: the log is for finding things, a pasted novel is clipped. */
export const MAX_TEXT_CHARS = 4000;
/** Per query word, how many of its best matches are fused (enough to hold every match of a rare word). */
const PER_TERM = 400;
const MAX_QUERY_TERMS = 8;

/**
 * The index splits text into words exactly as `queryTerms` does. FlexSearch's default encoder also cuts numbers into
 * groups of three ("coffee123" → "coffee", "123"), which turns a rare word into an intersection of huge lists (50 ms
 * at 100,000 messages); whole words keep every lookup under a millisecond.
 */
const newIndex = () => new Index({ tokenize: 'strict', resolution: 9, encoder: new Encoder({ split: /[^\p{L}\p{N}]+/u, numeric: false, normalize: true, dedupe: false }) });

const segmentOf = (at: number) => `${new Date(at).toISOString().slice(0, 7)}.jsonl`;
const headerLine = (chatId: string) => `${JSON.stringify({ recall: FORMAT, chat: chatId })}\n`;

/** The words of a query or message as the index sees them (letters and digits, lower case). */
export function queryTerms(text: string): string[] {
  return [...new Set(text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean))];
}

/** The entry when `value` is a valid log line's content, otherwise undefined. */
export function validEntry(value: unknown): LoggedMessage | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  if (v.role !== 'user' && v.role !== 'assistant') return undefined;
  if (typeof v.text !== 'string' || typeof v.at !== 'number' || !Number.isFinite(v.at)) return undefined;
  for (const key of ['id', 'senderId', 'senderName', 'media'] as const) if (v[key] !== undefined && typeof v[key] !== 'string') return undefined;
  return {
    ...(v.id ? { id: v.id as string } : {}),
    role: v.role,
    ...(v.senderId ? { senderId: v.senderId as string } : {}),
    ...(v.senderName ? { senderName: v.senderName as string } : {}),
    text: v.text.slice(0, MAX_TEXT_CHARS),
    at: v.at,
    ...(v.media ? { media: v.media as string } : {}),
  };
}

function parseLine(line: string): LoggedMessage | undefined {
  try {
    return validEntry(JSON.parse(line));
  } catch {
    return undefined;
  }
}

/**
 * The recall log of ONE chat, `data/recall/<chat>/<YYYY-MM>.jsonl`: append-only segments of one JSON line per message
 * (the first line names the chat), a full-text index (FlexSearch) built lazily in memory.
 *
 * Isolation: an instance is bound to one chat id when it is made (by the plugin, from the message or the tool call's
 * binding — never from what a model asked for), and every method reads that chat only. There is no call anywhere
 * that searches more than one chat. A segment whose first line names another chat is never read.
 */
export class ChatRecallLog {
  /** Loaded entries in chat order; a removed entry leaves a hole (its index key is its position). */
  private entries: Array<LoggedMessage | undefined> = [];
  private index: Index | undefined;
  private loaded: Promise<void> | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  /** Segments known to exist with their header, and whether their last line is complete. */
  private readonly ready = new Set<string>();
  /** Lines whose append failed, per segment, written before the next line. */
  private readonly unsaved = new Map<string, string[]>();
  private count = 0;

  constructor(
    readonly chatId: string,
    readonly dir: string,
    private readonly events: RecallStoreEvents,
  ) {}

  /** Runs file work of this chat one after another (appends never interleave with a rewrite). */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
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
   * Reads one segment: its raw lines and entries. A segment whose header is not this chat's (corrupt, another chat's,
   * an unknown format) is moved aside as `<name>.corrupt-<time>` with its bytes kept and read as empty.
   */
  private async readSegment(name: string): Promise<{ lines: string[]; entries: Array<LoggedMessage | undefined> } | undefined> {
    const file = path.join(this.dir, name);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    const lines = text.split('\n');
    if (lines.at(-1) === '') lines.pop();
    let header: unknown;
    try {
      header = JSON.parse(lines[0] ?? '');
    } catch {
      header = undefined;
    }
    const h = header as { recall?: unknown; chat?: unknown } | undefined;
    const reason = !h || typeof h !== 'object' ? 'its first line is not a recall-log header' : h.recall !== FORMAT ? `unknown format ${String(h.recall).slice(0, 20)}` : h.chat !== this.chatId ? 'it belongs to another chat' : undefined;
    if (reason) {
      const movedTo = `${file}.corrupt-${Date.now()}`;
      await rename(file, movedTo);
      this.ready.delete(name);
      this.events.setAside?.(file, movedTo, reason);
      return undefined;
    }
    const entries = lines.slice(1).map(parseLine);
    const bad = entries.filter((e) => !e).length;
    if (bad) this.events.badLines?.(file, bad);
    return { lines: lines.slice(1), entries };
  }

  private load(): Promise<void> {
    this.loaded ??= (async () => {
      // Behind the appends already queued, so the files hold them; appends asked for meanwhile wait for the load.
      const entries = await this.serial(async () => {
        const read: LoggedMessage[] = [];
        for (const name of await this.segments()) {
          const segment = await this.readSegment(name);
          for (const entry of segment?.entries ?? []) if (entry) read.push(entry);
        }
        return read;
      });
      this.entries = entries;
      this.count = entries.length;
    })().catch((err) => {
      this.loaded = undefined;
      throw err;
    });
    return this.loaded;
  }

  private searchIndex(): Index {
    if (!this.index) {
      this.index = newIndex();
      this.entries.forEach((entry, key) => entry && this.index!.add(key, entry.text));
    }
    return this.index;
  }

  /** Drops what is in memory; the next search reads the files again. */
  private unload(): void {
    this.loaded = undefined;
    this.entries = [];
    this.index = undefined;
    this.count = 0;
  }

  /** Appends one message (written to disk in order; visible to search at once when the chat is loaded). */
  add(input: LoggedMessage): Promise<void> {
    return this.addMany([input]);
  }

  /** Appends messages in order, one write per month segment (imports, the benchmark). Invalid or empty ones are skipped. */
  async addMany(inputs: LoggedMessage[]): Promise<void> {
    const entries = inputs.map(validEntry).filter((e): e is LoggedMessage => Boolean(e && e.text.trim()));
    if (!entries.length) return;
    if (this.loaded) {
      await this.loaded.catch(() => undefined);
      for (const entry of entries) {
        const key = this.entries.push(entry) - 1;
        this.count++;
        this.index?.add(key, entry.text);
      }
    }
    const bySegment = new Map<string, string>();
    for (const entry of entries) {
      const name = segmentOf(entry.at);
      bySegment.set(name, (bySegment.get(name) ?? '') + `${JSON.stringify(entry)}\n`);
    }
    await this.serial(async () => {
      for (const [name, lines] of bySegment) await this.write(name, lines);
    });
  }

  private async write(name: string, line: string): Promise<void> {
    const file = path.join(this.dir, name);
    const lines = [...(this.unsaved.get(name) ?? []), line];
    try {
      if (!this.ready.has(name)) await this.prepareSegment(name);
      await appendToFile(file, lines.join(''));
      if (this.unsaved.delete(name)) this.events.writeRecovered?.(file);
    } catch (err) {
      this.unsaved.set(name, lines);
      this.ready.delete(name);
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
      await writeFileAtomic(file, headerLine(this.chatId));
      this.ready.add(name);
      return;
    }
    try {
      const { size } = await handle.stat();
      const last = Buffer.alloc(1);
      if (size > 0) await handle.read(last, 0, 1, size - 1);
      if (size > 0 && last[0] !== 0x0a) await appendToFile(file, '\n');
    } finally {
      await handle.close();
    }
    this.ready.add(name);
  }

  /**
   * The best matches of `query` in this chat, with the message before and after each. `excludeId` leaves out one
   * message (the question being asked). Only entries at or after `notBefore` (the retention cutoff) are returned.
   */
  async search(query: string, options: { limit?: number; excludeId?: string; notBefore?: number } = {}): Promise<RecallHit[]> {
    const terms = queryTerms(String(query ?? '')).slice(0, MAX_QUERY_TERMS);
    if (!terms.length) return [];
    await this.load();
    if (!this.count) return [];
    const limit = Math.max(1, Math.min(20, Math.floor(options.limit ?? 5) || 5));
    const index = this.searchIndex();
    const keep = (key: number) => {
      const entry = this.entries[key];
      return Boolean(entry) && !(options.excludeId && entry!.id === options.excludeId) && entry!.at >= (options.notBefore ?? 0);
    };
    let keys: number[];
    if (terms.length === 1) {
      keys = (index.search(terms[0], { limit: PER_TERM }) as number[]).filter(keep).sort((a, b) => b - a);
    } else {
      // Each word looked up on its own and the lists fused, a word weighing more the fewer messages it is in (idf):
      // intersecting huge lists of common words in one FlexSearch call is what makes multi-word queries slow.
      const scores = new Map<number, number>();
      for (const term of terms) {
        const ids = index.search(term, { limit: PER_TERM }) as number[];
        if (!ids.length) continue;
        const idf = Math.log(1 + this.count / ids.length);
        for (const id of ids) scores.set(id, (scores.get(id) ?? 0) + idf);
      }
      // Equal scores: the newer message first.
      keys = [...scores].filter(([key]) => keep(key)).sort((a, b) => b[1] - a[1] || b[0] - a[0]).map(([key]) => key);
    }
    return keys.slice(0, limit).map((key) => ({ message: this.entries[key]!, before: this.neighbour(key, -1), after: this.neighbour(key, 1) }));
  }

  private neighbour(key: number, step: 1 | -1): LoggedMessage | undefined {
    for (let k = key + step; k >= 0 && k < this.entries.length; k += step) if (this.entries[k]) return this.entries[k];
    return undefined;
  }

  /** How many messages the chat's log holds. */
  async size(): Promise<number> {
    await this.load();
    return this.count;
  }

  /** Every message of this chat's log (oldest first) that `matches`; for the privacy export. */
  async where(matches: (entry: LoggedMessage) => boolean): Promise<LoggedMessage[]> {
    await this.load();
    return this.entries.filter((e): e is LoggedMessage => Boolean(e) && matches(e!));
  }

  /**
   * Removes the messages that match from disk (each touched segment rewritten atomically, lines that are not valid
   * entries kept as they were) and from memory. Returns how many went.
   */
  async removeWhere(matches: (entry: LoggedMessage) => boolean): Promise<number> {
    await this.load().catch(() => undefined);
    const removed = await this.serial(async () => {
      let count = 0;
      for (const name of await this.segments()) count += await this.rewrite(name, matches);
      return count;
    });
    if (removed && this.loaded) {
      this.entries.forEach((entry, key) => {
        if (entry && matches(entry)) {
          this.entries[key] = undefined;
          this.index?.remove(key);
          this.count--;
        }
      });
    }
    return removed;
  }

  /** Drops every message older than `cutoff` (whole segments of older months are deleted). Returns how many went. */
  async prune(cutoff: number): Promise<number> {
    const oldMonth = segmentOf(cutoff);
    const removed = await this.serial(async () => {
      let count = 0;
      for (const name of await this.segments()) {
        if (name > oldMonth) break;
        if (name < oldMonth) {
          const segment = await this.readSegment(name);
          count += segment?.entries.filter(Boolean).length ?? 0;
          await rm(path.join(this.dir, name), { force: true });
          this.ready.delete(name);
        } else count += await this.rewrite(name, (e) => e.at < cutoff);
      }
      return count;
    });
    if (removed) this.unload();
    return removed;
  }

  private async rewrite(name: string, matches: (entry: LoggedMessage) => boolean): Promise<number> {
    const segment = await this.readSegment(name);
    if (!segment) return 0;
    const kept = segment.lines.filter((_, i) => !(segment.entries[i] && matches(segment.entries[i]!)));
    const removed = segment.lines.length - kept.length;
    if (!removed) return 0;
    await writeFileAtomic(path.join(this.dir, name), headerLine(this.chatId) + kept.map((l) => `${l}\n`).join(''));
    this.ready.add(name);
    return removed;
  }

  /** Waits for the appends under way and retries those that had failed. */
  async flush(): Promise<void> {
    await this.serial(async () => {
      for (const name of [...this.unsaved.keys()]) {
        const lines = this.unsaved.get(name)!;
        this.unsaved.delete(name);
        const last = lines.pop()!;
        if (lines.length) this.unsaved.set(name, lines);
        await this.write(name, last);
      }
    });
  }

  /** Messages whose append has not reached the disk (reported at stop). */
  unsavedCount(): number {
    return [...this.unsaved.values()].reduce((n, lines) => n + lines.length, 0);
  }
}

/**
 * The recall logs of every chat under `root` (`data/recall/`). It hands out one `ChatRecallLog` per chat and lists the
 * chats that have a log; it has no search of its own, so nothing can search across chats.
 *
 * @example
 * const logs = new RecallStore('data/recall');
 * await logs.chat(ctx.chatId).add({ role: 'user', text: 'the address is Jl. Merdeka 5', at: Date.now() });
 * const hits = await logs.chat(ctx.chatId).search('address');
 */
export class RecallStore {
  private readonly chats = new Map<string, ChatRecallLog>();

  constructor(
    readonly root: string,
    private readonly events: RecallStoreEvents = {},
  ) {}

  /** The log of one chat (the id comes from the message being handled or the tool call's binding). */
  chat(chatId: string): ChatRecallLog {
    if (typeof chatId !== 'string' || !chatId.trim()) throw new TypeError('RecallStore: a chat id is required');
    let chat = this.chats.get(chatId);
    if (!chat) {
      chat = new ChatRecallLog(chatId, path.join(this.root, safeFileName(chatId)), this.events);
      this.chats.set(chatId, chat);
    }
    return chat;
  }

  /** The chats that have a log folder (for retention and the privacy controls). */
  async chatIds(): Promise<string[]> {
    const names = await readdir(this.root).catch(() => [] as string[]);
    const ids: string[] = [];
    for (const name of names) {
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
