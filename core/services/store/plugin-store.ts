import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { appendToFile, removeDataFile, safeFileName, writeFileAtomicSafe } from './atomic.js';
import { domainFor, type DataDomain } from './data-domain.js';
import { describeWriteError } from './data-health.js';
import { flushWithStores, JsonFile } from './json-file.js';
import { changeableBy, isPrivateChatOf, writtenBy, type PersonIds, type PrivacyParticipant } from './privacy.js';
import { checkValue } from './schemas.js';
import { dataSchemaOf, ownedFolderOf, storePathOf, titleOf, type ChatDocDeclaration, type ChatLogDeclaration, type CarriedMessage, type ChatSearchLogDeclaration, type DocDeclaration, type StoreDeclaration } from './store-declarations.js';
import { listFolder, removeFolder } from './owned-folder.js';
import { SearchLogs, type ChatSearchLog, type SearchHit, type SearchLogItem } from './search-log/chat-search-log.js';
import { CodedError, type PluginErrorCode } from '../coded-error.js';

/** A change that is not on disk. Its message is safe to tell the user ("could not save the reminders: the server's disk is full"). */
export class StoreWriteError extends CodedError {
  get code(): PluginErrorCode {
    return 'PLUGIN_STORE_WRITE_FAILED';
  }
  constructor(what: string, readonly reason: string, override readonly cause?: unknown) {
    super(`could not save the ${what}: ${reason}`);
    this.name = 'StoreWriteError';
  }
}

/** One stored document (`host.store.doc(decl)`, `host.store.chat(id).doc(decl)`). */
export interface StoredDoc<T> {
  /** The document: read from disk on first use (a file that does not parse or match was set aside: it starts new). */
  get(): Promise<T>;
  /** Changes it in place (or replaces it by returning a new value); written soon after, atomically. */
  update(change: (doc: T) => T | void): Promise<T>;
  /**
   * `update`, then waits until it is on disk. Rejects with a StoreWriteError when it cannot be written: the change
   * stays in memory and is retried, and the error's message is fit for the user whose action it was.
   */
  save(change: (doc: T) => T | void): Promise<T>;
  /**
   * Deletes the document's file once what is pending is written (a per-chat document that is gone as a whole); the
   * next `get` starts from `initial`. A document with `owner` takes along its folder, its copies set aside as unreadable
   * and the entries referring to it (`refersTo`). Rejects when the file cannot be removed.
   */
  remove(): Promise<void>;
}

/** One chat's append-only log (`host.store.chat(id).log(decl)`). */
export interface StoredLog<I> {
  /** Adds an item (checked against the schema: a bad one is refused with a TypeError); waits during a backup. */
  append(item: I): Promise<void>;
  /** Every item, oldest first (an unreadable line, such as a torn last one after a crash, is skipped and reported). */
  read(): Promise<I[]>;
  /** Removes the matching items (one atomic rewrite); resolves with how many went. */
  removeWhere(matches: (item: I) => boolean): Promise<number>;
}

/**
 * One chat's searchable log (`host.store.chat(id).searchLog(decl)`). Bound to that chat: nothing here reads or
 * names another chat's log.
 */
export interface StoredSearchLog<I extends SearchLogItem> {
  readonly chatId: string;
  /** Adds an item and resolves once it was handed to the file (an item that is not one, or has no text, is skipped). */
  add(item: I): Promise<void>;
  /** Adds several in order, written together (imports). */
  addMany(items: I[]): Promise<void>;
  /**
   * Adds a live item without waiting for the disk: searchable at once, written with the other items of the next
   * `delayMs` (one write, not one per message), and at once by a search, a privacy change, a flush or the stop. A crash
   * can lose those last lines: see `catchUp`. False when the item is not kept.
   */
  addSoon(item: I, delayMs: number): boolean;
  /** The best matches of `query` in this chat, each with the item before and after. `excludeId` leaves one message out; `notBefore` (epoch ms) hides older items. */
  search(query: string, options?: { limit?: number; excludeId?: string; notBefore?: number }): Promise<Array<SearchHit<I>>>;
  /** Every item (oldest first) that matches. */
  where(matches: (item: I) => boolean): Promise<I[]>;
  /** How many items the log holds. */
  size(): Promise<number>;
  /** Removes the matching items from disk, the index and its snapshots; resolves with how many went. */
  removeWhere(matches: (item: I) => boolean): Promise<number>;
  /**
   * Replaces the matching items by `change(item)` on disk, in the index and its snapshots; resolves with how many
   * changed. A file the item named before and no longer names (the declaration's `files`) is deleted first.
   */
  changeWhere(matches: (item: I) => boolean, change: (item: I) => I): Promise<number>;
  /** Writes a file that belongs to an item (the declaration's `files`), atomically; add the item after it. */
  putFile(rel: string, bytes: Buffer): Promise<void>;
  /** The absolute path of a file that belongs to an item of this chat (a path outside the chat's folder throws). */
  filePath(rel: string): string;
  /**
   * The chat's folder on disk (its attached files live under it): for a plugin converting files of its own earlier
   * layout there. Write items and files through the log, never here.
   */
  readonly folder: string;
  /** Resolves once every item of this chat is on disk; rejects (StoreWriteError) when some could not be written yet (they are retried). */
  flush(): Promise<void>;
  /**
   * After a crash: adds what `recent` (the chat's own recent items, oldest first) holds after the last item on disk;
   * with nothing on disk, those from `since` on. Resolves with how many were added.
   */
  catchUp(recent: () => Promise<I[]>, since: number): Promise<number>;
}

/** What a plugin may set at run time for one of its search logs (`host.store.tune`). */
export interface SearchLogTuning<I extends SearchLogItem> {
  /** Days an item is kept (read at each daily sweep); overrides the declaration's `keepDays`. */
  keepDays?: () => number;
  /** Items kept in memory across its chats; beyond it the least recently searched chats are unloaded (default 200,000). */
  maxLoadedMessages?: () => number;
  /** Told of each chat's log when this run first uses it (to `catchUp` after a crash). */
  onFirstUse?: (log: StoredSearchLog<I>) => void;
  /** Called before the core reads or changes the log itself (privacy, flush): a plugin holding items back hands them in. */
  settle?: () => void;
}

/** What one chat keeps of one plugin. */
export interface ChatStore {
  doc<T>(decl: ChatDocDeclaration<T, any>): StoredDoc<T>;
  log<I>(decl: ChatLogDeclaration<I>): StoredLog<I>;
  searchLog<I extends SearchLogItem>(decl: ChatSearchLogDeclaration<I>): StoredSearchLog<I>;
}

/**
 * `host.store`: what the plugin keeps, scoped to it (and to a chat), from its declarations (`definePlugin({ stores })`,
 * made with `Store.chatDoc`, `Store.doc`, `Store.chatLog`). No call reaches another plugin's data or mixes chats.
 *
 * @example
 * const doc = host.store.chat(ctx.chatId).doc(notes);
 * await doc.save((d) => void d.items.push({ text: ctx.args, by: ctx.senderId }));
 * const { items } = await doc.get();
 */
export interface PluginStore {
  doc<T>(decl: DocDeclaration<T>): StoredDoc<T>;
  chat(chatId: string): ChatStore;
  /** The chats that have a document or log of this kind. */
  chats(decl: ChatDocDeclaration<any, any> | ChatLogDeclaration<any> | ChatSearchLogDeclaration<any>): Promise<string[]>;
  /**
   * Settings of a search log only known at run time (from the plugin's options). With `keepDays`, the items past it
   * are dropped now (resolved once done) and daily.
   */
  tune<I extends SearchLogItem>(decl: ChatSearchLogDeclaration<I>, tuning: SearchLogTuning<I>): Promise<void>;
  /**
   * Calls `listener` after the core itself changed this kind of data (a `.mydata` delete, a message deleted for
   * everyone, a chat moving to a new id), with the chat it changed (undefined for a plugin-wide doc), so a plugin can
   * follow (cancel a timer). `removed` is true when that chat's document is gone as a whole (moved to a new id, or an
   * `owner` document deleted): a plugin holding it in memory drops it then, before anything can write it back.
   * Returns the function that removes the listener.
   */
  onChange(decl: StoreDeclaration, listener: (chatId: string | undefined, removed?: boolean) => void): () => void;
  /** Resolves once everything is on disk; rejects (StoreWriteError) naming what could not be written. */
  flush(): Promise<void>;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** File bytes (a search log's attached files) put into one `.mydata` export at most, base64 in the JSON. */
const MAX_EXPORT_FILE_BYTES = 16 * 1024 * 1024;
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const chatOfFile = (name: string, ext: string) => (name.endsWith(ext) ? decodeURIComponent(name.slice(0, -ext.length)) : undefined);

/** An append-only JSON-lines file; every operation on it runs in order (an append never lands inside a rewrite). */
class LogFile<I> {
  private queue: Promise<unknown> = Promise.resolve();
  constructor(readonly file: string, private readonly decl: ChatLogDeclaration<I>, private readonly domain: DataDomain, private readonly title: string) {}

  private run<R>(work: () => Promise<R>): Promise<R> {
    const next = this.queue.then(work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  append(item: I): Promise<void> {
    const problem = checkValue(this.decl.schema, item);
    if (problem !== undefined) return Promise.reject(new TypeError(`${this.title}: the item does not match its schema (${problem})`));
    return this.run(() => appendToFile(this.file, JSON.stringify(item) + '\n'));
  }

  read(): Promise<I[]> {
    return this.run(() => this.readNow());
  }

  private async readNow(): Promise<I[]> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.domain.health.skippedLines(this.file, 0, `cannot be read: ${(err as Error).message}`);
      return [];
    }
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
    if (bad) this.domain.health.skippedLines(this.file, bad, `not a valid ${this.title} line`);
    return items;
  }

  /** Keeps the items `keep` returns (one atomic rewrite when something changes); resolves with how many went. */
  rewrite(keep: (items: I[]) => I[]): Promise<number> {
    return this.run(async () => {
      const items = await this.readNow();
      const kept = keep(items);
      if (kept.length === items.length && kept.every((item, i) => item === items[i])) return 0;
      if (kept.length === 0) {
        await removeDataFile(this.file);
      } else {
        await writeFileAtomicSafe(this.file, kept.map((item) => JSON.stringify(item) + '\n').join(''));
      }
      return items.length - kept.length;
    });
  }

  removeWhere(matches: (item: I) => boolean): Promise<number> {
    return this.rewrite((items) => items.filter((item) => !matches(item)));
  }

  flush(): Promise<void> {
    return this.run(async () => undefined);
  }
}

/**
 * The stores of one plugin in one app: opens its declared documents and logs under DATA_DIR, and takes part in the
 * privacy controls for them (one participant per `.mydata` section). Made by the bot for each plugin's host.
 */
export class PluginStores implements PluginStore {
  private readonly docs = new Map<string, JsonFile<unknown>>();
  private readonly logs = new Map<string, LogFile<unknown>>();
  private readonly searchLogs = new Map<StoreDeclaration, SearchLogs<any>>();
  private readonly tunings = new Map<StoreDeclaration, SearchLogTuning<any>>();
  private readonly tunedSweeps: NodeJS.Timeout[] = [];
  private stopFlushing: (() => void) | undefined;
  private readonly listeners = new Map<StoreDeclaration, Set<(chatId: string | undefined, removed?: boolean) => void>>();
  private readonly domain: DataDomain;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    readonly plugin: string,
    private readonly dataDir: string,
    private readonly declarations: readonly StoreDeclaration[],
    private readonly log?: { info(obj: object, msg: string): void; warn?(obj: object, msg: string): void; error(obj: object, msg: string): void },
  ) {
    this.domain = domainFor(dataDir);
  }

  private where(decl: StoreDeclaration): string {
    return path.join(this.dataDir, storePathOf(decl, this.plugin));
  }

  private declared<D extends StoreDeclaration>(decl: D): D {
    if (!this.declarations.includes(decl)) {
      throw new Error(`plugin ${this.plugin} opens the store "${decl?.name}" it does not declare: list it in definePlugin({ stores: [...] }) so backups, .mydata and deletes know it`);
    }
    return decl;
  }

  private jsonFile<T>(decl: ChatDocDeclaration<T, any> | DocDeclaration<T>, chatId?: string): JsonFile<T> {
    const file = chatId === undefined ? this.where(decl) : path.join(this.where(decl), `${safeFileName(chatId)}.json`);
    let doc = this.docs.get(file);
    if (!doc) {
      const check = decl.options.check;
      doc = new JsonFile<unknown>(file, () => (decl.kind === 'doc' ? decl.initial() : decl.initial(chatId!)), {
        schema: dataSchemaOf(decl, this.plugin),
        domain: this.domain,
        check: check ? (value) => check(value as T, chatId) : undefined,
      });
      this.docs.set(file, doc);
    }
    return doc as JsonFile<T>;
  }

  private stored<T>(decl: ChatDocDeclaration<T, any> | DocDeclaration<T>, chatId?: string): StoredDoc<T> {
    // Looked up at each call: a chat's file removed by a move is opened anew.
    const file = () => this.jsonFile(decl, chatId);
    return {
      get: () => file().get(),
      update: (change) => file().update(change),
      save: async (change) => {
        const value = await file().update(change);
        await this.saved(decl, file());
        return value;
      },
      remove: async () => {
        if (decl.kind === 'chat-doc' && decl.options.owner) return this.removeOwned(decl, chatId!);
        const doc = file();
        await doc.flush().catch(() => undefined);
        this.docs.delete(doc.file);
        await removeDataFile(doc.file);
      },
    };
  }

  private async saved(decl: StoreDeclaration, file: JsonFile<unknown>): Promise<void> {
    try {
      await file.flush();
    } catch (err) {
      const cause = (err as { cause?: unknown }).cause ?? err;
      throw new StoreWriteError(titleOf(decl, this.plugin), describeWriteError(cause), cause);
    }
  }

  private logFile<I>(decl: ChatLogDeclaration<I>, chatId: string): LogFile<I> {
    const file = path.join(this.where(decl), `${safeFileName(chatId)}.jsonl`);
    let log = this.logs.get(file);
    if (!log) {
      log = new LogFile<unknown>(file, decl as ChatLogDeclaration<unknown>, this.domain, titleOf(decl, this.plugin));
      this.logs.set(file, log);
    }
    return log as LogFile<I>;
  }

  /** The engine of a search log (one per declaration): its files under the declaration's path, its problems told to the data health. */
  private engine<I extends SearchLogItem>(decl: ChatSearchLogDeclaration<I>): SearchLogs<I> {
    let logs = this.searchLogs.get(decl) as SearchLogs<I> | undefined;
    if (logs) return logs;
    const title = titleOf(decl, this.plugin);
    const item = decl.options.item ?? ((value: unknown) => (checkValue(decl.schema, value) === undefined ? (value as I) : undefined));
    const health = this.domain.health;
    const tuning = () => (this.tunings.get(decl) ?? {}) as SearchLogTuning<I>;
    logs = new SearchLogs<I>(
      this.where(decl),
      { header: decl.name, item, ...(decl.options.files ? { files: decl.options.files } : {}), keepsEmpty: Boolean(decl.options.erased) },
      {
        setAside: (file, movedTo, reason) => health.corrupt(file, movedTo, `${title}: ${reason}`),
        badLines: (file, count) => (this.log?.warn ?? this.log?.info)?.call(this.log, { file, count }, `${title} ${path.basename(file)}: skipped ${count} line(s) that are not valid entries`),
        writeFailed: (file, err) => health.writeFailed(file, err),
        writeRecovered: (file) => health.writeRecovered(file),
        indexRebuilt: (file, messages, reason) => this.log?.info({ file, messages, reason }, `${decl.name} index of ${path.basename(file)} rebuilt from the log (${messages} messages): ${reason}`),
        snapshotFailed: (dir, err) => (this.log?.warn ?? this.log?.info)?.call(this.log, { err, dir }, `${title}: could not write a search-index snapshot (the next start indexes that month from the log)`),
        unloaded: (chat, messages) => this.log?.info({ chat, messages }, `${title}: a chat's ${messages} items left memory (over maxLoadedMessages); its next search loads them again`),
      },
      {
        snapshotMinLines: decl.options.snapshotMinLines,
        maxLoadedMessages: () => tuning().maxLoadedMessages?.() ?? 200_000,
        onFirstUse: (log) => tuning().onFirstUse?.(this.searchLogOf(decl, log)),
      },
    );
    this.searchLogs.set(decl, logs);
    // Lines batched in memory are written before a backup copies the folder.
    if (!this.stopFlushing) this.stopFlushing = flushWithStores(() => this.flushSearchLogs(), this.dataDir);
    return logs;
  }

  /** A chat's search log as a plugin sees it: that chat's calls only (no move, no other chat, no unload). */
  private searchLogOf<I extends SearchLogItem>(decl: ChatSearchLogDeclaration<I>, log: ChatSearchLog<I>): StoredSearchLog<I> {
    return {
      chatId: log.chatId,
      add: (item) => log.add(item),
      addMany: (items) => log.addMany(items),
      addSoon: (item, delayMs) => log.addSoon(item, delayMs),
      search: (query, options) => log.search(query, options),
      where: (matches) => log.where(matches),
      size: () => log.size(),
      removeWhere: (matches) => log.removeWhere(matches),
      changeWhere: (matches, change) => log.changeWhere(matches, change),
      putFile: (rel, bytes) => log.putFile(rel, bytes),
      filePath: (rel) => log.filePath(rel),
      folder: log.dir,
      flush: async () => {
        await log.flush();
        const unsaved = log.unsavedCount();
        if (unsaved) throw new StoreWriteError(titleOf(decl, this.plugin), `${unsaved} item(s) are not on disk yet`);
      },
      catchUp: (recent, since) => log.catchUp(recent, since),
    };
  }

  /** Lets the plugin hand in what it holds back before the core reads or changes a search log. */
  private settle(decl: StoreDeclaration): void {
    try {
      this.tunings.get(decl)?.settle?.();
    } catch (err) {
      this.log?.error({ err, plugin: this.plugin }, `${this.plugin}: handing in held items failed`);
    }
  }

  /** Writes every search log's pending lines; rejects naming how many items could not be written. */
  private async flushSearchLogs(): Promise<void> {
    let unsaved = 0;
    for (const [decl, logs] of this.searchLogs) {
      this.settle(decl);
      unsaved += await logs.flush();
    }
    if (unsaved) throw new StoreWriteError(`${this.plugin} data`, `${unsaved} item(s) are not on disk yet`);
  }

  async tune<I extends SearchLogItem>(decl: ChatSearchLogDeclaration<I>, tuning: SearchLogTuning<I>): Promise<void> {
    this.declared(decl);
    this.tunings.set(decl, { ...this.tunings.get(decl), ...tuning });
    const keepDays = tuning.keepDays;
    if (!keepDays) return;
    const sweep = () => this.pruneSearchLog(decl, keepDays());
    const timer = setInterval(() => void sweep().catch((err) => this.log?.error({ err, plugin: this.plugin }, `${this.plugin}: the retention sweep failed (tried again tomorrow)`)), DAY_MS);
    timer.unref();
    this.tunedSweeps.push(timer);
    await sweep().catch((err) => this.log?.error({ err, plugin: this.plugin }, `${this.plugin}: the retention sweep failed (tried again tomorrow)`));
  }

  /** Drops a search log's items older than `keepDays` in every chat. */
  private async pruneSearchLog(decl: ChatSearchLogDeclaration<any>, keepDays: number): Promise<void> {
    const removed = await this.engine(decl).prune(Date.now() - keepDays * DAY_MS);
    if (removed) this.log?.info({ plugin: this.plugin, store: decl.name, removed, keepDays }, `${titleOf(decl, this.plugin)}: dropped messages past retention (${removed} older than ${keepDays} days)`);
  }

  doc<T>(decl: DocDeclaration<T>): StoredDoc<T> {
    return this.stored(this.declared(decl));
  }

  chat(chatId: string): ChatStore {
    if (typeof chatId !== 'string' || !chatId) throw new TypeError('host.store.chat(chatId) needs the chat id, e.g. ctx.chatId');
    return {
      doc: (decl) => this.stored(this.declared(decl), chatId),
      log: <I>(decl: ChatLogDeclaration<I>) => {
        const file = () => this.logFile(this.declared(decl), chatId);
        return {
          append: (item: I) => file().append(item),
          read: () => file().read(),
          removeWhere: (matches: (item: I) => boolean) => file().removeWhere(matches),
        };
      },
      searchLog: <I extends SearchLogItem>(decl: ChatSearchLogDeclaration<I>) => this.searchLogOf(decl, this.engine(this.declared(decl)).chat(chatId)),
    };
  }

  async chats(decl: ChatDocDeclaration<any, any> | ChatLogDeclaration<any> | ChatSearchLogDeclaration<any>): Promise<string[]> {
    this.declared(decl);
    if (decl.kind === 'chat-search-log') return this.engine(decl).chatIds();
    const ext = decl.kind === 'chat-log' ? '.jsonl' : '.json';
    const folder = this.where(decl);
    // Documents of this plugin that share the folder (a doc declared at `<folder>/x.json`) are not chats.
    const others = new Set(this.declarations.filter((d) => d.kind === 'doc').map((d) => this.where(d)));
    // Pending first documents of a chat count too (not on disk yet).
    const pending = [...this.docs.keys()].filter((file) => path.dirname(file) === folder && file.endsWith(ext));
    const names = await readdir(folder).catch(() => [] as string[]);
    const files = new Set([...names.map((n) => path.join(folder, n)), ...pending]);
    return [...files].filter((file) => !others.has(file)).flatMap((file) => chatOfFile(path.basename(file), ext) ?? []);
  }

  onChange(decl: StoreDeclaration, listener: (chatId: string | undefined, removed?: boolean) => void): () => void {
    this.declared(decl);
    let set = this.listeners.get(decl);
    if (!set) this.listeners.set(decl, (set = new Set()));
    set.add(listener);
    return () => void set.delete(listener);
  }

  private changed(decl: StoreDeclaration, chatId: string | undefined, removed?: boolean): void {
    for (const listener of this.listeners.get(decl) ?? []) {
      try {
        listener(chatId, removed);
      } catch (err) {
        this.log?.error({ err, plugin: this.plugin }, `${this.plugin}: a store change listener failed`);
      }
    }
  }

  async flush(): Promise<void> {
    const results = await Promise.allSettled([...[...this.docs.values()].map((d) => d.flush()), ...[...this.logs.values()].map((l) => l.flush()), this.flushSearchLogs()]);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      const cause = (failed.reason as { cause?: unknown }).cause ?? failed.reason;
      throw new StoreWriteError(`${this.plugin} data`, describeWriteError(cause), cause);
    }
  }

  /** Drops log items past their declaration's `keepDays`: now, then daily (the timer never keeps the process up). */
  startRetention(now: () => number = Date.now): void {
    const sweep = async () => {
      for (const decl of this.declarations) {
        if (decl.kind === 'chat-search-log' && decl.options.keepDays !== undefined && !this.tunings.get(decl)?.keepDays) await this.pruneSearchLog(decl, decl.options.keepDays);
        if (decl.kind !== 'chat-log' || decl.options.keepDays === undefined) continue;
        const cutoff = now() - decl.options.keepDays * DAY_MS;
        const at = decl.options.at!;
        let removed = 0;
        for (const chatId of await this.chats(decl)) removed += await this.logFile(decl, chatId).removeWhere((item) => at(item) < cutoff);
        if (removed) this.log?.info({ plugin: this.plugin, store: decl.name, removed }, `${this.plugin}: dropped ${removed} ${titleOf(decl, this.plugin)} item(s) older than ${decl.options.keepDays} days`);
      }
    };
    const run = () => void sweep().catch((err) => this.log?.error({ err, plugin: this.plugin }, `${this.plugin}: the retention sweep failed (tried again tomorrow)`));
    if (!this.declarations.some((d) => (d.kind === 'chat-log' || d.kind === 'chat-search-log') && d.options.keepDays !== undefined)) return;
    run();
    this.sweeper = setInterval(run, DAY_MS);
    this.sweeper.unref();
  }

  /** Stops the retention timer and writes everything pending (at the bot's stop). */
  async close(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    for (const timer of this.tunedSweeps.splice(0)) clearInterval(timer);
    this.stopFlushing?.();
    await this.flush();
  }

  /** The privacy participants of these stores: one per `.mydata` section. */
  participants(): PrivacyParticipant[] {
    const sections = new Map<string, StoreDeclaration[]>();
    for (const decl of this.declarations) {
      const section = decl.options.section ?? this.plugin;
      sections.set(section, [...(sections.get(section) ?? []), decl]);
    }
    // What an `owner` document names widens the person for the plugin's other sections (each participant widens at
    // its start, before it deletes anything): the sections holding owner documents go last.
    const owned = (decls: StoreDeclaration[]) => Number(decls.some(isOwned));
    return [...sections.entries()].sort(([, a], [, b]) => owned(a) - owned(b)).map(([name, decls]) => this.participant(name, decls));
  }

  private participant(name: string, decls: StoreDeclaration[]): PrivacyParticipant {
    return {
      name,
      exportFor: async (named) => {
        const person = await this.widened(named);
        const out: Record<string, unknown> = {};
        for (const decl of decls) {
          // exportAs '' (the only declaration of its section): the section is its data.
          if (decl.options.exportAs === '' && decls.length === 1) return this.exportOne(decl, person);
          out[decl.options.exportAs ?? decl.name] = await this.exportOne(decl, person);
        }
        return out;
      },
      deleteFor: async (named) => {
        const person = await this.widened(named);
        let removed = 0;
        let failure: unknown;
        for (const decl of decls) {
          // The others still go when one cannot be written; the change stays in memory and is retried.
          try {
            removed += await this.deleteOne(decl, person);
          } catch (err) {
            failure ??= err;
          }
        }
        if (failure) throw failure;
        return removed;
      },
      revoke: async (chatId, messageId, author) => {
        let removed = 0;
        for (const decl of decls) removed += await this.revokeOne(decl, chatId, messageId, author);
        return removed;
      },
      edit: async (chatId, messageId, text, author) => {
        let changed = 0;
        for (const decl of decls) changed += await this.editOne(decl, chatId, messageId, text, author);
        return changed;
      },
      moveChat: async (from, to) => {
        const failures: string[] = [];
        for (const decl of decls) {
          try {
            await this.moveOne(decl, from, to);
          } catch (err) {
            failures.push((err as Error).message);
          }
        }
        if (failures.length) throw new Error(failures.join('; '));
      },
    };
  }

  /** Which items of a chat are the person's: all of their private chat, in groups those they wrote. */
  private ofPerson<I>(chatId: string, person: PersonIds, author: (item: I) => string | undefined): (item: I) => boolean {
    const whole = isPrivateChatOf(chatId, person);
    return (item) => whole || writtenBy(author(item), person);
  }

  /** The items of a chat's search log that are the person's (see `ofPerson`; without `people`, a private chat's whole log). */
  private personsItems(decl: ChatSearchLogDeclaration<any>, chatId: string, person: PersonIds): (item: SearchLogItem) => boolean {
    const author = decl.options.people?.author;
    const theirs = author ? this.ofPerson(chatId, person, author) : () => isPrivateChatOf(chatId, person);
    const marker = decl.options.erased?.is;
    return marker ? (item) => !marker(item) && theirs(item) : theirs;
  }

  /** Whether an item came from `messageId` and `author` (who deletes or edits it) may change it. */
  private fromMessage(decl: ChatSearchLogDeclaration<any> | ChatLogDeclaration<any> | ChatDocDeclaration<any, any>, messageId: string, author: PersonIds | undefined): ((item: unknown) => boolean) | undefined {
    const people = decl.options.people;
    const idOf = people?.messageId;
    if (!people || !idOf) return undefined;
    return (item) => idOf(item) === messageId && changeableBy(people.author(item), author);
  }

  /**
   * Takes the matching items of a chat's search log away: their lines go, or with `erased` a marker stays in their
   * place (their files go either way). Resolves with how many items were taken.
   */
  private async takeItems(decl: ChatSearchLogDeclaration<any>, log: ChatSearchLog<any>, matches: (item: SearchLogItem) => boolean): Promise<number> {
    const erased = decl.options.erased;
    if (!erased) return log.removeWhere(matches);
    const files = decl.options.files;
    const author = decl.options.people?.author;
    const markerOf = (item: SearchLogItem) => {
      const marker = erased.marker(item);
      // A marker must keep nothing of the person: no words, no author, no files; otherwise the line goes.
      const clean = !marker.text.trim() && !author?.(marker) && !(files?.(marker).length ?? 0);
      return clean ? marker : undefined;
    };
    const taking = (item: SearchLogItem) => !erased.is(item) && matches(item);
    let taken = await log.removeWhere((item) => taking(item) && !markerOf(item));
    taken += await log.changeWhere(taking, (item) => markerOf(item)!);
    return taken;
  }

  /**
   * The messages carried inside a chat's items (`people.carried`) that `which` picks are removed (`change` gives
   * undefined) or changed; resolves with how many items changed.
   */
  private async changeCarried(decl: ChatSearchLogDeclaration<any>, log: ChatSearchLog<any>, which: (m: CarriedMessage) => boolean, change: (m: CarriedMessage) => CarriedMessage | undefined): Promise<number> {
    const carried = decl.options.people?.carried;
    if (!carried) return 0;
    return log.changeWhere(
      (item) => carried.messages(item).some(which),
      (item) => carried.withMessages(item, carried.messages(item).map((m) => (which(m) ? change(m) : m))),
    );
  }

  private async exportOne(decl: StoreDeclaration, person: PersonIds): Promise<unknown> {
    if (decl.kind === 'chat-search-log') {
      this.settle(decl);
      const logs = this.engine(decl);
      const out: Record<string, unknown> = {};
      const files = decl.options.files;
      let fileBytes = 0;
      for (const chatId of await logs.chatIds()) {
        const log = logs.chat(chatId);
        const mine = await log.where(this.personsItems(decl, chatId, person));
        if (!mine.length) continue;
        if (!files) {
          out[chatId] = mine;
          continue;
        }
        // An item's files come along (base64), as far as the export's size allows; the transcript-like text always does.
        const withFiles = [];
        for (const item of mine) {
          const attached: Record<string, string> = {};
          const omitted: string[] = [];
          for (const rel of files(item)) {
            const bytes = await readFile(log.filePath(rel)).catch(() => undefined);
            if (!bytes) continue;
            if (fileBytes + bytes.length > MAX_EXPORT_FILE_BYTES) omitted.push(rel);
            else {
              fileBytes += bytes.length;
              attached[rel] = bytes.toString('base64');
            }
          }
          withFiles.push({ ...item, ...(Object.keys(attached).length ? { filesBase64: attached } : {}), ...(omitted.length ? { filesOmitted: { files: omitted, why: 'over the export size limit; ask the owner' } } : {}) });
        }
        out[chatId] = withFiles;
      }
      return out;
    }
    if (decl.kind === 'doc') {
      const byId = decl.options.people?.byId;
      const referring = await this.referringTo(decl, person);
      if (!byId) return Object.fromEntries(referring);
      return { ...Object.fromEntries(Object.entries(byId(await this.jsonFile(decl).get())).filter(([id]) => writtenBy(id, person))), ...Object.fromEntries(referring) };
    }
    if (decl.kind === 'chat-doc' && decl.options.owner) return this.exportOwned(decl, person);
    const out: Record<string, unknown> = {};
    for (const chatId of await this.chats(decl)) {
      if (decl.kind === 'chat-doc') {
        const doc = await this.jsonFile(decl, chatId).get();
        const people = decl.options.people;
        if (!people) {
          if (isPrivateChatOf(chatId, person)) out[chatId] = doc;
          continue;
        }
        const mine = people.items(doc).filter(this.ofPerson(chatId, person, people.author));
        if (mine.length) out[chatId] = mine;
      } else {
        const author = decl.options.people?.author;
        const items = await this.logFile(decl, chatId).read();
        const mine = author ? items.filter(this.ofPerson(chatId, person, author)) : isPrivateChatOf(chatId, person) ? items : [];
        if (mine.length) out[chatId] = mine;
      }
    }
    return out;
  }

  private async deleteOne(decl: StoreDeclaration, person: PersonIds): Promise<number> {
    if (decl.kind === 'chat-search-log') {
      this.settle(decl);
      const logs = this.engine(decl);
      let removed = 0;
      for (const chatId of await logs.chatIds()) {
        let n = await this.takeItems(decl, logs.chat(chatId), this.personsItems(decl, chatId, person));
        // Their messages carried inside other people's items go too.
        n += await this.changeCarried(decl, logs.chat(chatId), (m) => writtenBy(m.senderId, person), () => undefined);
        if (n) this.changed(decl, chatId);
        removed += n;
      }
      return removed;
    }
    if (decl.kind === 'chat-doc' && decl.options.owner) {
      const keys = await this.ownedKeys(decl, person);
      // One at a time, each whole: a failure leaves the rest for the next delete.
      for (const key of keys) await this.removeOwned(decl, key);
      return keys.length;
    }
    if (decl.kind === 'doc') {
      const byId = decl.options.people?.byId;
      // A `refersTo` entry goes with the document it names (removeOwned).
      if (!byId) return 0;
      const file = this.jsonFile(decl);
      const gone = Object.keys(byId(await file.get())).filter((id) => writtenBy(id, person));
      if (!gone.length) return 0;
      await file.update((doc) => void gone.forEach((id) => delete byId(doc)[id]));
      this.changed(decl, undefined);
      await this.saved(decl, file);
      return gone.length;
    }
    let removed = 0;
    let failure: unknown;
    for (const chatId of await this.chats(decl)) {
      try {
        if (decl.kind === 'chat-doc') removed += await this.removeFromDoc(decl, chatId, (doc, people) => (people ? this.ofPerson(chatId, person, people.author) : isPrivateChatOf(chatId, person) ? 'whole' : undefined));
        else {
          const author = decl.options.people?.author;
          const n = await this.logFile(decl, chatId).removeWhere(author ? this.ofPerson(chatId, person, author) : () => isPrivateChatOf(chatId, person));
          if (n) this.changed(decl, chatId);
          removed += n;
        }
      } catch (err) {
        failure ??= err;
      }
    }
    if (failure) throw failure;
    return removed;
  }

  /**
   * Removes items of one chat's document (or the whole document: `'whole'`), waits until on disk, and tells the
   * listeners. `pick` says which, from the declaration's `people`; undefined removes nothing. `wait` false: a write
   * that fails is logged instead of rejecting (it is retried, and the data health reports it).
   */
  private async removeFromDoc<T, I>(
    decl: ChatDocDeclaration<T, I>,
    chatId: string,
    pick: (doc: T, people: ChatDocDeclaration<T, I>['options']['people']) => ((item: I) => boolean) | 'whole' | undefined,
    wait = true,
  ): Promise<number> {
    const file = this.jsonFile(decl, chatId);
    const doc = await file.get();
    const people = decl.options.people;
    const which = pick(doc, people);
    if (which === undefined) return 0;
    let removed = 0;
    if (which === 'whole') {
      if (same(doc, decl.initial(chatId))) return 0;
      await file.update(() => decl.initial(chatId));
      removed = 1;
    } else {
      const items = people!.items;
      removed = items(doc).filter(which).length;
      if (!removed) return 0;
      await file.update((d) => {
        const list = items(d);
        const kept = list.filter((item) => !which(item));
        list.splice(0, list.length, ...kept);
      });
    }
    this.changed(decl, chatId);
    if (wait) await this.saved(decl, file);
    else {
      // A message deleted for everyone is gone from memory at once; a failed write is retried and reported by the
      // data health, and must not keep the other stores from removing the message.
      await this.saved(decl, file).catch((err: unknown) => this.log?.error({ err, plugin: this.plugin, chat: chatId }, `${this.plugin}: removed ${titleOf(decl, this.plugin)} of a message deleted for everyone, but could not save it yet`));
    }
    return removed;
  }

  private async revokeOne(decl: StoreDeclaration, chatId: string, messageId: string, author: PersonIds | undefined): Promise<number> {
    if (decl.kind === 'doc') return 0;
    if (decl.kind === 'chat-search-log') {
      const matches = this.fromMessage(decl, messageId, author);
      if (!matches) return 0;
      this.settle(decl);
      const log = this.engine(decl).chat(chatId);
      let n = await this.takeItems(decl, log, matches);
      n += await this.changeCarried(decl, log, (m) => m.id === messageId && changeableBy(m.senderId, author), () => undefined);
      if (n) this.changed(decl, chatId);
      return n;
    }
    const people = decl.options.people;
    const idOf = people?.messageId;
    if (!people || !idOf) return 0;
    const matches = (item: unknown) => idOf(item) === messageId && changeableBy(people.author(item), author);
    if (decl.kind === 'chat-doc') {
      if (!(await this.chats(decl)).includes(chatId)) return 0;
      return this.removeFromDoc(decl, chatId, () => matches, false);
    }
    const n = await this.logFile(decl, chatId).removeWhere(matches);
    if (n) this.changed(decl, chatId);
    return n;
  }

  /** An edited message: the items it made get its new text (see `ItemPeople.edited`). */
  private async editOne(decl: StoreDeclaration, chatId: string, messageId: string, text: string, author: PersonIds | undefined): Promise<number> {
    if (decl.kind === 'doc') return 0;
    if (decl.kind === 'chat-search-log') {
      const matches = this.fromMessage(decl, messageId, author);
      const edited = decl.options.people?.edited;
      this.settle(decl);
      const log = this.engine(decl).chat(chatId);
      let n = matches && edited ? await log.changeWhere(matches, (item) => edited(item, text)) : 0;
      n += await this.changeCarried(decl, log, (m) => m.id === messageId && changeableBy(m.senderId, author), (m) => ({ ...m, text }));
      if (n) this.changed(decl, chatId);
      return n;
    }
    const people = decl.options.people;
    const idOf = people?.messageId;
    const edited = people?.edited;
    if (!people || !idOf || !edited) return 0;
    const matches = (item: unknown) => idOf(item) === messageId && changeableBy(people.author(item), author);
    if (!(await this.chats(decl)).includes(chatId)) return 0;
    let changed = 0;
    if (decl.kind === 'chat-log') {
      await this.logFile(decl, chatId).rewrite((items) => items.map((item) => (matches(item) ? (changed++, edited(item, text)) : item)));
    } else {
      const items = decl.options.people?.items;
      if (!items) return 0;
      const file = this.jsonFile(decl, chatId);
      await file.update((doc) => {
        const list = items(doc) as unknown[];
        for (const [i, item] of list.entries()) if (matches(item)) (changed++, (list[i] = edited(item, text)));
      });
      if (changed) await this.saved(decl, file);
    }
    if (changed) this.changed(decl, chatId);
    return changed;
  }

  private async moveOne(decl: StoreDeclaration, from: string, to: string): Promise<void> {
    if (decl.kind === 'chat-search-log') {
      this.settle(decl);
      const logs = this.engine(decl);
      if (!(await logs.chatIds()).includes(from)) return;
      await logs.moveChat(from, to);
      this.changed(decl, from);
      this.changed(decl, to);
      return;
    }
    if (decl.kind === 'doc') {
      const byId = decl.options.people?.byId;
      if (!byId) return;
      const file = this.jsonFile(decl);
      if (!Object.prototype.hasOwnProperty.call(byId(await file.get()), from)) return;
      await file.update((doc) => {
        const map = byId(doc);
        // The newer id's own entry wins; the old id keeps nothing.
        if (!Object.prototype.hasOwnProperty.call(map, to)) map[to] = map[from];
        delete map[from];
      });
      this.changed(decl, undefined);
      await this.saved(decl, file);
      return;
    }
    if (decl.kind === 'chat-doc' && decl.options.byChat) await this.moveChatKeys(decl, decl.options.byChat, from, to);
    // An owned document's key is no chat: it stays where it is.
    if (decl.kind === 'chat-doc' && decl.options.owner) return;
    if (!(await this.chats(decl)).includes(from)) return;
    if (decl.kind === 'chat-log') {
      const moving = await this.logFile(decl, from).read();
      await this.logFile(decl, to).rewrite((there) => [...moving, ...there]);
      await this.logFile(decl, from).rewrite(() => []);
      this.changed(decl, from);
      this.changed(decl, to);
      return;
    }
    const source = this.jsonFile(decl, from);
    const target = this.jsonFile(decl, to);
    const moving = await source.get();
    const existing = await target.get();
    const people = decl.options.people;
    if (people) {
      const isSame = people.same ?? same;
      const items = people.items(moving);
      if (!items.length) return;
      await target.update((d) => {
        const list = people.items(d);
        list.push(...items.filter((item) => !list.some((x) => isSame(x, item))));
      });
    } else {
      if (same(moving, decl.initial(from))) return;
      if (!same(existing, decl.initial(to))) throw new Error(`the ${titleOf(decl, this.plugin)} of ${from} were kept (${to} has its own)`);
      await target.update(() => moving);
    }
    await this.saved(decl, target);
    // The old id keeps nothing: its file goes once the new one is on disk.
    await source.flush().catch(() => undefined);
    this.docs.delete(source.file);
    await removeDataFile(source.file);
    this.changed(decl, from, true);
    this.changed(decl, to);
  }

  /** The person with every id the plugin's `owner` documents of them name (a LID they did not write from this time). */
  private async widened(person: PersonIds): Promise<PersonIds> {
    const ids = new Set(person);
    for (const decl of this.declarations) {
      if (decl.kind !== 'chat-doc' || !decl.options.owner) continue;
      for (const key of await this.ownedKeys(decl, person)) for (const id of decl.options.owner.ids(await this.jsonFile(decl, key).get())) ids.add(id);
    }
    return [...ids];
  }

  /** The keys of the `owner` documents that name one of the person's ids. */
  private async ownedKeys(decl: ChatDocDeclaration<any, any>, person: PersonIds): Promise<string[]> {
    const keys: string[] = [];
    for (const key of await this.chats(decl)) {
      const ids = decl.options.owner!.ids(await this.jsonFile(decl, key).get());
      if (Array.isArray(ids) && ids.some((id) => typeof id === 'string' && writtenBy(id, person))) keys.push(key);
    }
    return keys;
  }

  /** The person's `owner` documents, each under its key, with its folder's files listed in `files`. */
  private async exportOwned(decl: ChatDocDeclaration<any, any>, person: PersonIds): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    for (const key of await this.ownedKeys(decl, person)) {
      const doc = await this.jsonFile(decl, key).get();
      const folder = ownedFolderOf(decl, key);
      out[key] = folder === undefined ? doc : { ...doc, files: await listFolder(path.join(this.dataDir, folder)) };
    }
    return out;
  }

  /**
   * Removes an `owner` document whole: its folder first (so a folder that cannot go leaves the document naming it, for
   * the next try), then its file, its copies set aside as unreadable, and the entries of `refersTo` maps naming it.
   */
  private async removeOwned(decl: ChatDocDeclaration<any, any>, key: string): Promise<void> {
    const folder = ownedFolderOf(decl, key);
    if (folder !== undefined) await removeFolder(path.join(this.dataDir, folder), this.domain);
    const file = this.jsonFile(decl, key);
    await file.flush().catch(() => undefined);
    this.docs.delete(file.file);
    await removeDataFile(file.file);
    const setAside = `${path.basename(file.file)}.corrupt-`;
    for (const name of await readdir(path.dirname(file.file)).catch(() => [] as string[])) if (name.startsWith(setAside)) await removeDataFile(path.join(path.dirname(file.file), name));
    this.changed(decl, key, true);
    for (const other of this.declarations) {
      if (other.kind !== 'doc') continue;
      const refers = other.options.refersTo;
      if (!refers || refers.decl !== decl) continue;
      const map = refers.map(await this.jsonFile(other).get());
      const naming = Object.keys(map).filter((k) => map[k] === key);
      if (naming.length) await this.dropEntries(other, refers.map, naming);
    }
  }

  /** The entries of a doc's `refersTo` map that name one of the person's `owner` documents. */
  private async referringTo(decl: DocDeclaration<any>, person: PersonIds): Promise<Array<[string, unknown]>> {
    const refers = decl.options.refersTo;
    if (!refers) return [];
    const keys = new Set(await this.ownedKeys(refers.decl, person));
    return Object.entries(refers.map(await this.jsonFile(decl).get())).filter(([, value]) => typeof value === 'string' && keys.has(value));
  }

  /** Deletes entries of a doc's map, waits until on disk and tells the listeners. */
  private async dropEntries(decl: DocDeclaration<any>, map: (doc: any) => Record<string, unknown>, keys: string[]): Promise<void> {
    const file = this.jsonFile(decl);
    await file.update((doc) => void keys.forEach((key) => delete map(doc)[key]));
    this.changed(decl, undefined);
    await this.saved(decl, file);
  }

  /** A chat moved: in every document of the kind, the `byChat` map's entry follows it (the new id's own entry kept). */
  private async moveChatKeys(decl: ChatDocDeclaration<any, any>, byChat: (doc: any) => Record<string, unknown> | undefined, from: string, to: string): Promise<void> {
    const has = (map: Record<string, unknown> | undefined, id: string) => map !== undefined && Object.prototype.hasOwnProperty.call(map, id);
    for (const key of await this.chats(decl)) {
      const file = this.jsonFile(decl, key);
      if (!has(byChat(await file.get()), from)) continue;
      await file.update((doc) => {
        const map = byChat(doc)!;
        if (!has(map, to)) map[to] = map[from];
        delete map[from];
      });
      await this.saved(decl, file);
      this.changed(decl, key);
    }
  }
}

/** Whether a declaration is a `Store.chatDoc` with `owner`. */
const isOwned = (decl: StoreDeclaration) => decl.kind === 'chat-doc' && decl.options.owner !== undefined;
