import { appendFile, readdir, readFile, rename, rm, stat, truncate } from 'node:fs/promises';
import path from 'node:path';
import { appendToFile, enterWrite, leaveWrite, releaseAppendHandle, releaseAppendHandles } from './atomic.js';
import { safeFileName } from '../../api/file-name.js';
import { domainFor, healthFor } from './data-domain.js';
import { JsonFile, type OnCorrupt } from './json-file.js';
import { checkDocument, HISTORY_SCHEMA } from './schemas.js';

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
 * failing (the model down for long), so the files still cannot grow without end.
 */
export function storedMessages(history: { maxMessages: number; summarize: boolean }): number {
  return history.summarize ? 4 * history.maxMessages : history.maxMessages;
}

/** How many folded message ids a summary remembers (see `ChatSummary.recent`). */
export const SUMMARY_RECENT_IDS = 500;

/** How `HistoryStore.append` writes its line. */
export interface AppendOptions {
  /**
   * Write the line once the I/O this turn of the event loop started is under way (an upstream request already sent),
   * instead of before the caller goes on: the disk write then costs no time the caller waits for. The entry is in the
   * history for every read started after the call, at once; the promise still resolves only once the line is on disk,
   * and lines reach the file in the order they were appended.
   */
  writeAfterIo?: boolean;
}

/** Resolves in the event loop's next check phase: after the I/O that this turn started has been handed on. */
const afterIo = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Told of every entry appended to a chat's history (see `HistoryStore.onAppend`). */
export type HistoryAppendListener = (chatId: string, entry: HistoryEntry) => void;

interface HistoryDoc {
  messages: HistoryEntry[];
  summary?: ChatSummary;
  /** Sequence number of the last log line folded into the JSON file. */
  logSeq?: number;
}

export interface HistoryStoreOptions {
  onCorrupt?: OnCorrupt;
  /**
   * Log lines after which the chat's JSON file is rewritten and its log emptied; default 4 × `maxMessages` (a
   * rewrite costs a whole-file write and an fsync, so it is paid once per ~2 × maxMessages exchanges, not per message).
   */
  compactEvery?: number;
}

/**
 * One chat: the JSON file (the readable layout) plus its append-only log `<chat>.jsonl`. A new message costs one
 * appended line; every `compactEvery` lines (and at flush/stop) the JSON file is rewritten atomically and the log
 * emptied, so the bytes written per message do not grow with the history.
 *
 * Each log line carries a sequence number and the JSON file the number of the last line it contains, so a crash
 * between rewriting the JSON file and removing the folded lines replays nothing twice.
 *
 * A compaction never holds up a message: in the chat's disk queue it only renames the log to `<chat>.folding.jsonl`
 * (appends after it start a fresh log), then writes the JSON file (its fsync outside the queue) and removes the
 * folding file. A crash in between leaves both logs, which the next load replays in order.
 */
class ChatHistory {
  private readonly ready: Promise<HistoryDoc>;
  /** Appends and log renames of this chat, in order. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Compactions of this chat, one after another (the folding file is one at a time). */
  private compacting: Promise<unknown> = Promise.resolve();
  private unfolded = 0;
  /** An automatic fold was asked for and has not started yet (appends meanwhile do not ask again). */
  private foldAsked = false;
  /** Lines of the fold under way: set aside, but counted in `unfolded` until the JSON file holds them. */
  private folding = 0;
  /** A folding file is on disk whose JSON file was not written yet (a crash, or a write that failed): kept as it is. */
  private foldingLeft = false;
  private readonly flushNow = () => this.compact().catch(() => undefined);

  constructor(
    private readonly doc: JsonFile<HistoryDoc>,
    readonly logFile: string,
    readonly foldingFile: string,
    private readonly store: HistoryStore,
  ) {
    this.ready = this.load();
  }

  private async load(): Promise<HistoryDoc> {
    const value = await this.doc.get();
    // A compaction the bot did not finish left its folding file: its lines come before the log's.
    const folding = await this.replay(this.foldingFile, value);
    const log = await this.replay(this.logFile, value);
    this.foldingLeft = Boolean(folding.text);
    if (!folding.text && !log.text) return value;
    this.trim(value);
    // Fold the logs in now (nothing appends before the load is done): the next append then never follows a torn line.
    this.unfolded = 1;
    await this.foldAll(value).catch(async () => {
      // The JSON file cannot be written now (a full disk): it keeps the change, reports and retries it, and the chat
      // goes on. The torn line is cut off instead (shrinking needs no space), so the next append does not follow it.
      if (log.tornTail) await truncate(this.logFile, Buffer.byteLength(log.text) - Buffer.byteLength(log.tornTail)).catch(() => undefined);
    });
    return value;
  }

  /** Adds the lines of one log file that the JSON file does not hold yet; returns its text and a torn last line. */
  private async replay(file: string, value: HistoryDoc): Promise<{ text: string; tornTail: string }> {
    let text = '';
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') healthFor(file).skippedLines(file, 0, `cannot be read: ${(err as Error).message}`);
    }
    if (!text) return { text, tornTail: '' };
    const lines = text.split('\n');
    // A last line without its newline is an append the crash cut short.
    const tornTail = lines.pop()!;
    const torn = tornTail !== '' ? 1 : 0;
    let bad = 0;
    for (const line of lines) {
      const entry = parseLine(line);
      if (!entry) bad++;
      else if (entry.seq > (value.logSeq ?? 0)) {
        value.logSeq = entry.seq;
        value.messages.push(entry.entry);
      }
    }
    if (torn || bad) healthFor(file).skippedLines(file, torn + bad, torn ? 'the bot stopped in the middle of writing the last one' : 'not a valid history line');
    return { text, tornTail };
  }

  private trim(value: HistoryDoc): void {
    const over = value.messages.length - this.store.maxMessages;
    // One over (every message of a full chat): shift, which allocates nothing; splice returns the removed ones.
    if (over === 1) value.messages.shift();
    else if (over > 1) value.messages.splice(0, over);
  }

  get(): Promise<HistoryDoc> {
    return this.ready;
  }

  /** Appends one message: resolves once its line was handed to the file system (it survives a crash of the bot). */
  async append(entry: HistoryEntry, options?: AppendOptions): Promise<void> {
    const value = await this.ready;
    value.messages.push(entry);
    this.trim(value);
    const seq = (value.logSeq ?? 0) + 1;
    value.logSeq = seq;
    this.unfolded++;
    domainFor(this.logFile).flushers.add(this.flushNow);
    // The entry's own JSON after its sequence number (no copy of the entry per message; an entry always has a role),
    // made when it is written (entries never change once appended).
    const write = () => this.appendLine(`{"seq":${seq},${JSON.stringify(entry).slice(1)}\n`);
    // The line takes its place in the chat's disk queue now, so a later append never overtakes it.
    const written = this.run(options?.writeAfterIo ? () => afterIo().then(write) : write);
    // A fold is asked for once, and the lines a fold under way took do not count toward the next one (every append
    // during a fold's JSON write used to ask for another fold: ~7 times as many folds as meant).
    if (!this.foldAsked && this.unfolded - this.folding >= this.store.compactEvery) {
      this.foldAsked = true;
      void this.compact().catch(() => undefined);
    }
    await written;
  }

  private async appendLine(line: string): Promise<void> {
    try {
      await appendToFile(this.logFile, line);
    } catch (err) {
      // The line is not on disk: the JSON file (with its retries and failure reports) must carry the change instead.
      await this.doc.update(() => undefined);
      healthFor(this.logFile).writeFailed(this.logFile, err);
    }
  }

  private run<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Resolves once this chat's queued appends, the compactions they started and the JSON file's writes are done. */
  async whenIdle(): Promise<void> {
    await this.ready.catch(() => undefined);
    for (;;) {
      const queue = this.queue;
      const compacting = this.compacting;
      await Promise.all([queue, compacting, this.doc.whenIdle()]);
      if (queue === this.queue && compacting === this.compacting) return;
    }
  }

  /** Rewrites the JSON file with everything and removes the folded lines; rejects when the JSON file cannot be written. */
  async compact(changed = false): Promise<void> {
    const value = await this.ready;
    const run = this.compacting.then(
      () => this.compactLocked(value, changed),
      () => this.compactLocked(value, changed),
    );
    this.compacting = run.catch(() => undefined);
    await run;
  }

  private async compactLocked(value: HistoryDoc, changed = false): Promise<void> {
    if (this.unfolded === 0 && !changed) {
      this.foldAsked = false;
      return this.doc.flush();
    }
    // A folding file whose JSON file could not be written is never replaced: everything is folded in the disk queue.
    if (this.foldingLeft) return this.foldInQueue(value);
    // In the disk queue, after the lines appended so far: they move aside with the log; later ones start a new log.
    // A log that cannot be set aside (its folder is gone) is folded as a whole: the JSON file's write then reports it.
    const folded = await this.run(() => this.setLogAside()).catch(() => undefined);
    if (folded === undefined) return this.foldInQueue(value);
    // From here on, only lines appended after these count toward the next fold (which they may ask for at once).
    this.folding = folded;
    this.foldAsked = false;
    try {
      await this.writeFolded(value, folded, false);
    } finally {
      this.folding = 0;
    }
  }

  /** Folds everything while appends wait; lines appended meanwhile may ask for the next fold once it is done. */
  private async foldInQueue(value: HistoryDoc): Promise<void> {
    try {
      await this.run(() => this.foldAll(value));
    } finally {
      this.foldAsked = false;
    }
  }

  /** Writes the JSON file, then removes the folding file and empties the log: only where nothing appends meanwhile. */
  private foldAll(value: HistoryDoc): Promise<void> {
    return this.writeFolded(value, this.unfolded, true);
  }

  /**
   * Writes the JSON file — made when written, from everything in memory: every folded line and any line appended
   * meanwhile (its logSeq says up to which, so a log's copies of those are not replayed twice) — then removes the
   * folding file and, when `emptyLog`, empties the log; `folded` lines are then counted as folded.
   */
  private async writeFolded(value: HistoryDoc, folded: number, emptyLog: boolean): Promise<void> {
    await this.doc.update(() => value);
    await this.doc.flush();
    await rm(this.foldingFile, { force: true });
    this.foldingLeft = false;
    if (emptyLog) {
      await truncate(this.logFile, 0).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
    }
    this.unfolded -= folded;
    this.store.foldsWritten++;
    if (this.unfolded === 0) domainFor(this.logFile).flushers.delete(this.flushNow);
  }

  /** Renames the log to the folding file (a backup never sees it half done); returns how many lines it held. */
  private async setLogAside(): Promise<number> {
    const folded = this.unfolded;
    await enterWrite(this.logFile);
    try {
      releaseAppendHandle(this.logFile);
      await rename(this.logFile, this.foldingFile).then(
        () => (this.foldingLeft = true),
        (err: NodeJS.ErrnoException) => {
          if (err.code !== 'ENOENT') throw err;
        },
      );
      // The log is there, empty, as after every fold (the data layout); the next line opens it by its name.
      await appendFile(this.logFile, '');
    } finally {
      leaveWrite(this.logFile);
    }
    return folded;
  }
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

/** A log line: the entry plus its sequence number, checked with the history schema. */
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

/**
 * The history of every chat: `data/history/<chat>.json`, one file per chat, bounded to the last `maxMessages`
 * entries, written atomically; new messages go first to `data/history/<chat>.jsonl` (one line each), which is folded
 * into the JSON file every 4 × `maxMessages` lines, at flush and at the next start.
 *
 * @example
 * await histories.append(chatId, { role: 'user', text: 'hi', at: Date.now() });
 * const recent = await histories.recent(chatId, 20);
 */
export class HistoryStore {
  private readonly chats = new Map<string, ChatHistory>();
  private readonly appendListeners = new Set<HistoryAppendListener>();
  private readonly options: HistoryStoreOptions;
  constructor(readonly dataDir: string, public maxMessages = 50, options?: HistoryStoreOptions | OnCorrupt) {
    this.options = typeof options === 'function' ? { onCorrupt: options } : (options ?? {});
  }

  get compactEvery(): number {
    return Math.max(1, this.options.compactEvery ?? 4 * this.maxMessages);
  }

  /** Folds that wrote a chat's JSON file since this store was made, every chat together (what the disk pays for). */
  foldsWritten = 0;

  /** `data/history/<chat>`: the chat's files are this plus `.json`, `.jsonl` and, while a compaction runs, `.folding.jsonl`. */
  private base(chatId: string): string {
    return path.join(this.dataDir, 'history', safeFileName(chatId));
  }

  private chat(chatId: string): ChatHistory {
    let chat = this.chats.get(chatId);
    if (!chat) {
      const base = this.base(chatId);
      const doc = new JsonFile<HistoryDoc>(`${base}.json`, () => ({ messages: [] }), { schema: HISTORY_SCHEMA, onCorrupt: this.options.onCorrupt });
      chat = new ChatHistory(doc, `${base}.jsonl`, `${base}.folding.jsonl`, this);
      this.chats.set(chatId, chat);
    }
    return chat;
  }

  /**
   * Appends one entry to a chat's history: in memory at once (reads started after this call see it), on disk when the
   * promise resolves (see `AppendOptions` for writing it while the caller waits on other I/O).
   */
  async append(chatId: string, entry: HistoryEntry, options?: AppendOptions): Promise<void> {
    await this.chat(chatId).append(entry, options);
    for (const listener of this.appendListeners) {
      try {
        listener(chatId, entry);
      } catch {
        // A listener's failure is its own (it logs); the history write already happened.
      }
    }
  }

  /**
   * Whether the chat's history was written at or after `time` (Unix ms), read from its files' times without loading
   * the chat (a store catching up after a crash skips the chats the crashed run never touched).
   */
  async changedSince(chatId: string, time: number): Promise<boolean> {
    const base = this.base(chatId);
    const times = await Promise.all([`${base}.json`, `${base}.jsonl`, `${base}.folding.jsonl`].map((file) => stat(file).then((s) => s.mtimeMs, () => -Infinity)));
    return times.some((t) => t >= time);
  }

  /** The last `limit` entries, oldest first. */
  async recent(chatId: string, limit = this.maxMessages): Promise<HistoryEntry[]> {
    const doc = await this.chat(chatId).get();
    return doc.messages.slice(-limit);
  }

  /** Removes one message (deleted for everyone on WhatsApp) from memory, the JSON file and the log. True when it was there. */
  async remove(chatId: string, messageId: string): Promise<boolean> {
    return (await this.removeWhere(chatId, (m) => m.id === messageId)) > 0;
  }

  /** Removes the entries of one chat that match (privacy delete) and waits until that is on disk. Returns how many. */
  async removeWhere(chatId: string, matches: (entry: HistoryEntry) => boolean): Promise<number> {
    const chat = this.chat(chatId);
    const doc = await chat.get();
    const kept = doc.messages.filter((m) => !matches(m));
    const removed = doc.messages.length - kept.length;
    if (removed === 0) return 0;
    doc.messages = kept;
    // Compacting rewrites the JSON file and empties the log, so the removed text is nowhere on disk.
    await chat.compact(true);
    return removed;
  }

  /**
   * Changes the entries of one chat that match (an edited message: `change` gives the new entry) and waits until
   * that is on disk, the old text nowhere (the JSON file rewritten, the log emptied). Returns how many changed.
   */
  async updateWhere(chatId: string, matches: (entry: HistoryEntry) => boolean, change: (entry: HistoryEntry) => HistoryEntry): Promise<number> {
    const chat = this.chat(chatId);
    const doc = await chat.get();
    let changed = 0;
    const messages = doc.messages.map((m) => {
      if (!matches(m)) return m;
      changed++;
      return change(m);
    });
    if (changed === 0) return 0;
    doc.messages = messages;
    await chat.compact(true);
    return changed;
  }

  /**
   * Clears the chat's prompt history and its summary (`.reset`): the next answer starts a fresh conversation. Returns
   * how many messages went.
   */
  async clear(chatId: string): Promise<number> {
    const chat = this.chat(chatId);
    const doc = await chat.get();
    const removed = doc.messages.length;
    doc.messages = [];
    delete doc.summary;
    await chat.compact(true);
    return removed;
  }

  /** The chat's running summary of its folded turns, if it has one. */
  async summary(chatId: string): Promise<ChatSummary | undefined> {
    return (await this.chat(chatId).get()).summary;
  }

  /**
   * Folds the chat's oldest messages into its summary: `folded` must still be the first messages of the history and
   * `base` still the chat's summary (the same objects the summary was made from). Then both change in one atomic
   * write — the messages leave the history, `text` becomes the summary — and this resolves true once that is on disk.
   * When anything changed meanwhile (a message deleted or edited, `.reset`, the summary removed), nothing changes and
   * this resolves false: the new text may hold words that must be gone, and the turns are still there to fold later.
   */
  async fold(chatId: string, folded: HistoryEntry[], base: ChatSummary | undefined, text: string, now = Date.now()): Promise<boolean> {
    const chat = this.chat(chatId);
    const doc = await chat.get();
    if (!folded.length || doc.summary !== base || folded.length > doc.messages.length) return false;
    for (let i = 0; i < folded.length; i++) if (doc.messages[i] !== folded[i]) return false;
    const people = new Set(base?.people ?? []);
    const recent = [...(base?.recent ?? [])];
    for (const entry of folded) {
      if (entry.senderId) people.add(entry.senderId);
      if (entry.answers) people.add(entry.answers);
      if (entry.id) recent.push({ id: entry.id, role: entry.role, ...(entry.senderId ? { senderId: entry.senderId } : {}) });
    }
    doc.summary = { text, at: now, folded: (base?.folded ?? 0) + folded.length, people: [...people], recent: recent.slice(-SUMMARY_RECENT_IDS) };
    doc.messages = doc.messages.slice(folded.length);
    // One JSON file write holds both: a crash leaves either the old history or the new summary without those turns.
    await chat.compact(true);
    return true;
  }

  /** Removes the chat's summary when it matches (a privacy delete, a message deleted for everyone); true when it went. */
  async removeSummaryWhere(chatId: string, matches: (summary: ChatSummary) => boolean): Promise<boolean> {
    const chat = this.chat(chatId);
    const doc = await chat.get();
    if (!doc.summary || !matches(doc.summary)) return false;
    delete doc.summary;
    await chat.compact(true);
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

  /**
   * Folds a chat's log into its JSON file (loading it first, so a log left by a crash is folded too), closes the log
   * and forgets the chat, so nothing of this store writes its files any more: they may be moved (a private chat that
   * WhatsApp names by phone number instead of LID from now on). Rejects when the JSON file cannot be written.
   */
  async release(chatId: string): Promise<void> {
    const chat = this.chat(chatId);
    await chat.get();
    await chat.compact();
    this.chats.delete(chatId);
    releaseAppendHandle(chat.logFile);
  }

  /**
   * A private chat is known as `to` from now on (WhatsApp moved it from its LID to the phone number): the history of
   * `from` joins the history of `to`, both in time order (equal times: `to`'s first), bounded to `maxMessages` as
   * always; an entry `to` already holds is not taken twice (a move a crash cut short is finished without duplicates).
   * `to`'s JSON file is written (and its log emptied) before `from`'s files are removed, and `from` is forgotten in
   * memory, so no later write of this store brings its files back. Rejects when `to` cannot be written (`from` stays).
   */
  async moveChat(from: string, to: string): Promise<void> {
    if (from === to) return;
    const { messages: moving, summary } = await this.chat(from).get();
    if (moving.length || summary) {
      const target = this.chat(to);
      const doc = await target.get();
      doc.messages = mergeEntries(doc.messages, moving).slice(-this.maxMessages);
      // The summary goes along; with one on both sides both texts are kept (the next fold makes one of them).
      if (summary) doc.summary = doc.summary ? mergeSummaries(summary, doc.summary) : summary;
      await target.compact(true);
    }
    await this.release(from);
    const base = this.base(from);
    for (const file of [`${base}.json`, `${base}.jsonl`, `${base}.folding.jsonl`]) await rm(file, { force: true });
  }

  /**
   * Resolves once the background work started so far is done (queued appends, the compactions they asked for, the
   * JSON files' writes), without forcing any: a test awaits it to see what the bot does behind a reply.
   */
  async whenIdle(): Promise<void> {
    await Promise.all([...this.chats.values()].map((c) => c.whenIdle()));
  }

  /** Folds every chat's log into its JSON file; rejects naming the files that could not be written. */
  /**
   * The chats with a history: those on disk (`data/history/<chat>.json[l]`, names decoded) and those opened in this
   * run, each once, sorted. For the local API's chat list.
   */
  async chatIds(): Promise<string[]> {
    const names = await readdir(path.join(this.dataDir, 'history')).catch(() => [] as string[]);
    const ids = new Set(this.chats.keys());
    for (const name of names) {
      const base = /^(.+?)(\.folding)?\.jsonl?$/.exec(name)?.[1];
      if (!base) continue;
      try {
        ids.add(decodeURIComponent(base));
      } catch {
        // Not a name this store wrote.
      }
    }
    return [...ids].sort();
  }

  async flush(): Promise<void> {
    const results = await Promise.allSettled([...this.chats.values()].map((c) => c.compact()));
    // Stop and backups end here: no handle stays open on a file a restore may replace.
    releaseAppendHandles();
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
}
