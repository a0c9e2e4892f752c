import { describeWriteError, StoreWriteError } from '../../api/errors.js';
import path from 'node:path';
import { domainFor, type DataDomain } from './data-domain.js';
import { BoundedRecord } from './bounded-record.js';
import { SqlDocs, type SqlDoc } from './sql-docs.js';
import { SqlChatLog, type ChatLogEngine, type ChatLogView } from './sql-chat-log.js';
import type { PrivacyParticipant } from '../../kernel/port/privacy-participant.js';
import { checkValue } from './schemas.js';
import { SqlSearchLog, type SearchLogChat, type SearchLogItem } from './sql-search-log.js';
import { type ChatStore, type PluginStore, type SearchLogTuning, type StoredDoc, type StoredSearchLog } from './store-api.js';
import { dataSchemaOf, storePathOf, titleOf, type ChatDocDeclaration, type ChatLogDeclaration, type ChatRecordDeclaration, type ChatSearchLogDeclaration, type DocDeclaration, type RecordEntry, type StoreDeclaration } from './store-declarations.js';
import { StorePrivacy, type StoresForPrivacy } from './store-privacy.js';
import type { DocEngine, DocView } from './doc-view.js';

export type { ChatStore, PluginStore, SearchLogTuning, StoredDoc, StoredLog, StoredSearchLog } from './store-api.js';
export type { ChatLogEngine } from './sql-chat-log.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The stores of one plugin in one app: opens its declared documents and logs under DATA_DIR, and takes part in the
 * privacy controls for them (one participant per `.mydata` section). Made by the bot for each plugin's host.
 */
export class PluginStores implements PluginStore, StoresForPrivacy {
  private readonly docTables = new Map<StoreDeclaration, SqlDocs<unknown>>();
  private readonly logs = new Map<StoreDeclaration, SqlChatLog<unknown>>();
  private readonly searchLogs = new Map<StoreDeclaration, SqlSearchLog<any>>();
  private readonly tunings = new Map<StoreDeclaration, SearchLogTuning<any>>();
  private stopFlushing: (() => void) | undefined;
  private readonly listeners = new Map<StoreDeclaration, Set<(chatId: string | undefined, removed?: boolean) => void>>();
  /** @internal store-privacy.ts */
  readonly domain: DataDomain;
  /** The retention sweep running now or last (see whenSwept). */
  private sweeping: Promise<void> = Promise.resolve();
  private readonly privacy = new StorePrivacy(this);

  constructor(
    readonly plugin: string,
    readonly dataDir: string,
    readonly declarations: readonly StoreDeclaration[],
    readonly log?: { info(obj: object, msg: string): void; warn?(obj: object, msg: string): void; error(obj: object, msg: string): void },
    /**
     * How long a document's changes are gathered before one write (default: one tick); a number, or one per
     * declaration (a `perMessage` document gathers for longer).
     */
    private readonly writeDelayMs?: number | ((decl: StoreDeclaration) => number | undefined),
    /** The clock of the records' age bounds (tests move it). */
    private readonly now: () => number = Date.now,
  ) {
    this.domain = domainFor(dataDir);
  }

  private where(decl: StoreDeclaration): string {
    return path.join(this.dataDir, storePathOf(decl, this.plugin));
  }

  /** Declarations whose rows an engine of their owner keeps (see `serve`). */
  private readonly served = new Map<StoreDeclaration, ChatLogEngine<any> | DocEngine<any>>();

  /**
   * The rows of a declaration are kept by an engine of its own (the core's chat history, whose write-behind cache
   * must see every change): the privacy controls, moves and retention still follow from the declaration, and go
   * through the engine. Call before first use.
   */
  serve<I>(decl: ChatLogDeclaration<I>, engine: ChatLogEngine<I>): void;
  serve<T>(decl: ChatDocDeclaration<T, any>, engine: DocEngine<T>): void;
  serve(decl: ChatLogDeclaration<any> | ChatDocDeclaration<any, any>, engine: ChatLogEngine<any> | DocEngine<any>): void {
    this.served.set(this.declared(decl), engine);
  }

  private declared<D extends StoreDeclaration>(decl: D): D {
    if (!this.declarations.includes(decl)) {
      throw new Error(`plugin ${this.plugin} opens the store "${decl?.name}" it does not declare: list it in definePlugin({ stores: [...] }) so backups, .mydata and deletes know it`);
    }
    return decl;
  }

  /** A document declaration's table (every chat's or key's documents); the files of the earlier layout are taken in on first use. */
  private docTable<T>(decl: ChatDocDeclaration<T, any> | DocDeclaration<T>): SqlDocs<T> {
    let docs = this.docTables.get(decl);
    if (!docs) {
      const check = decl.options.check;
      // Documents of this plugin that share the folder (a doc declared at `<folder>/x.json`) are not chats.
      const notMine = new Set(this.declarations.filter((d) => d.kind === 'doc').map((d) => this.where(d)));
      docs = new SqlDocs<unknown>({
        dataDir: this.dataDir,
        namespace: this.plugin,
        name: decl.name,
        perKey: decl.kind === 'chat-doc',
        where: this.where(decl),
        notMine,
        schema: dataSchemaOf(decl, this.plugin),
        initial: (key) => (decl.kind === 'doc' ? decl.initial() : decl.initial(key)),
        check: check ? (value, key) => check(value as T, key || undefined) : undefined,
        domain: this.domain,
        coalesceMs: typeof this.writeDelayMs === 'function' ? this.writeDelayMs(decl) : this.writeDelayMs,
      });
      this.docTables.set(decl, docs);
    }
    return docs as SqlDocs<T>;
  }

  /**
   * A `Store.chatRecord`'s entries (one table of the store database; its earlier file taken in on first use). Every
   * change is in the database when its promise resolves.
   */
  record<I extends RecordEntry>(decl: ChatRecordDeclaration<I>): BoundedRecord<I> {
    this.declared(decl);
    let record = this.records.get(decl);
    if (!record) {
      const o = decl.options;
      record = new BoundedRecord<any>({
        dataDir: this.dataDir,
        namespace: this.plugin,
        file: this.where(decl),
        field: decl.name,
        schema: dataSchemaOf(decl, this.plugin),
        chatOf: o.chatOf,
        withChat: o.withChat,
        keepMs: o.keepMs,
        keepCount: o.keepCount,
        now: this.now,
      });
      this.records.set(decl, record);
    }
    return record as BoundedRecord<I>;
  }
  private readonly records = new Map<StoreDeclaration, BoundedRecord<any>>();

  /** @internal store-privacy.ts */
  document<T>(decl: ChatDocDeclaration<T, any> | DocDeclaration<T>, chatId?: string): SqlDoc<T> {
    return this.docTable(decl).doc(chatId);
  }

  /** A document as the privacy controls change it: the store's own, or a served engine's (see `serve`). @internal store-privacy.ts */
  docView<T>(decl: ChatDocDeclaration<T, any> | DocDeclaration<T>, chatId?: string): DocView<T> {
    const served = this.served.get(decl) as DocEngine<T> | undefined;
    return served ? served.doc(chatId ?? '') : this.document(decl, chatId);
  }

  /** What a person's delete or a chat move took from a declaration's documents leaves every file. @internal store-privacy.ts */
  erased(decl: ChatDocDeclaration<any, any> | DocDeclaration<any>): void {
    // A served engine erases what it removes itself.
    if (!this.served.has(decl)) this.docTable(decl).erased();
  }

  private stored<T>(decl: ChatDocDeclaration<T, any> | DocDeclaration<T>, chatId?: string): StoredDoc<T> {
    // Looked up at each call: a chat's document removed by a move is opened anew.
    const doc = () => this.document(decl, chatId);
    return {
      get: () => doc().get(),
      update: (change) => doc().update(change),
      save: async (change) => {
        const value = await doc().update(change);
        await this.saved(decl, doc());
        return value;
      },
      remove: async () => {
        if (decl.kind === 'chat-doc' && decl.options.owner) return this.privacy.removeOwned(decl, chatId!);
        await doc().remove();
      },
    };
  }

  /** @internal store-privacy.ts */
  async saved(decl: StoreDeclaration, doc: DocView<unknown>): Promise<void> {
    try {
      await doc.flush();
    } catch (err) {
      const cause = (err as { cause?: unknown }).cause ?? err;
      throw new StoreWriteError(titleOf(decl, this.plugin), describeWriteError(cause), cause);
    }
  }

  /** A chat log declaration's table (every chat's items); the files of the earlier layout are imported on first use. */
  /** @internal store-privacy.ts */
  chatLog<I>(decl: ChatLogDeclaration<I>): ChatLogEngine<I> {
    const served = this.served.get(decl) as ChatLogEngine<I> | undefined;
    if (served) return served;
    let log = this.logs.get(decl);
    if (!log) {
      log = new SqlChatLog<unknown>(this.dataDir, this.plugin, decl as ChatLogDeclaration<unknown>, this.where(decl), this.domain, titleOf(decl, this.plugin));
      this.logs.set(decl, log);
    }
    return log as SqlChatLog<I>;
  }

  /** @internal store-privacy.ts */
  logFile<I>(decl: ChatLogDeclaration<I>, chatId: string): ChatLogView<I> {
    return this.chatLog(decl).chat(chatId);
  }

  /** The table of a search log (every chat's items, one per declaration); month files of the earlier layout are taken in on first use. */
  /** @internal store-privacy.ts */
  engine<I extends SearchLogItem>(decl: ChatSearchLogDeclaration<I>): SqlSearchLog<I> {
    let logs = this.searchLogs.get(decl) as SqlSearchLog<I> | undefined;
    if (logs) return logs;
    const title = titleOf(decl, this.plugin);
    const item = decl.options.item ?? ((value: unknown) => (checkValue(decl.schema, value) === undefined ? (value as I) : undefined));
    const tuning = () => (this.tunings.get(decl) ?? {}) as SearchLogTuning<I>;
    logs = new SqlSearchLog<I>({
      dataDir: this.dataDir,
      namespace: this.plugin,
      name: decl.name,
      folder: this.where(decl),
      domain: this.domain,
      title,
      item,
      keepsEmpty: Boolean(decl.options.erased),
      ...(decl.options.files ? { files: decl.options.files } : {}),
      badLines: (file, count) => (this.log?.warn ?? this.log?.info)?.call(this.log, { file, count }, `${title} ${path.basename(file)}: skipped ${count} line(s) that are not valid entries`),
      onFirstUse: (log) => tuning().onFirstUse?.(this.searchLogOf(decl, log)),
    });
    this.searchLogs.set(decl, logs);
    this.followDomain();
    return logs;
  }

  /**
   * Items added without waiting (or held by the plugin) are written before a backup copies the database, and a
   * test's wait for the data folder to be idle waits for them.
   */
  private followDomain(): void {
    if (this.stopFlushing) return;
    const flush = () => this.flushSearchLogs();
    const idle = () => this.searchLogsIdle();
    this.domain.flushers.add(flush);
    this.domain.idlers.add(idle);
    this.stopFlushing = () => {
      this.domain.flushers.delete(flush);
      this.domain.idlers.delete(idle);
    };
  }

  /** A chat's search log as a plugin sees it: that chat's calls only (no move, no other chat, no unload). */
  private searchLogOf<I extends SearchLogItem>(decl: ChatSearchLogDeclaration<I>, log: SearchLogChat<I>): StoredSearchLog<I> {
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
        const unsaved = await this.engine(decl).flush();
        if (unsaved) throw new StoreWriteError(titleOf(decl, this.plugin), `${unsaved} item(s) are not on disk yet`);
      },
      catchUp: (recent, since) => log.catchUp(recent, since),
    };
  }

  /** Lets the plugin hand in what it holds back before the core reads or changes a search log. */
  /** @internal store-privacy.ts */
  settle(decl: StoreDeclaration): void {
    try {
      this.tunings.get(decl)?.settle?.();
    } catch (err) {
      this.log?.error({ err, plugin: this.plugin }, `${this.plugin}: handing in held items failed`);
    }
  }

  /** Resolves once every search log's items added without waiting (held ones handed in first) were written on their own. */
  private async searchLogsIdle(): Promise<void> {
    for (const decl of this.tunings.keys()) this.settle(decl);
    for (const logs of this.searchLogs.values()) await logs.whenIdle();
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
    if (tuning.settle) this.followDomain();
    const keepDays = tuning.keepDays;
    if (!keepDays) return;
    // The plugin's days apply now; later passes are the daily `sweep()` (the app's one retention timer runs it).
    const pruned = Promise.resolve().then(() => this.pruneSearchLog(decl, keepDays()));
    this.sweeping = pruned.catch(() => undefined);
    await pruned.catch((err) => this.log?.error({ err, plugin: this.plugin }, `${this.plugin}: the retention sweep failed (tried again tomorrow)`));
  }

  /** Drops a search log's items older than `keepDays` in every chat. */
  private async pruneSearchLog(decl: ChatSearchLogDeclaration<any>, keepDays: number, now: () => number = Date.now): Promise<void> {
    const removed = await this.engine(decl).prune(now() - keepDays * DAY_MS);
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
    if (decl.kind === 'chat-log') return this.chatLog(decl).chats();
    const served = this.served.get(decl) as DocEngine<unknown> | undefined;
    return served ? served.keys() : this.docTable(decl).keys();
  }

  onChange(decl: StoreDeclaration, listener: (chatId: string | undefined, removed?: boolean) => void | Promise<unknown>): () => void {
    this.declared(decl);
    let set = this.listeners.get(decl);
    if (!set) this.listeners.set(decl, (set = new Set()));
    set.add(listener);
    return () => void set.delete(listener);
  }

  /** @internal store-privacy.ts */
  changed(decl: StoreDeclaration, chatId: string | undefined, removed?: boolean): void {
    for (const listener of this.listeners.get(decl) ?? []) {
      try {
        // A listener may start work of its own (removing files a delete left unreferenced): it is waited for by
        // whenSwept, so what a delete sets off is over when the bot's stores are idle.
        const work: unknown = listener(chatId, removed);
        if (work && typeof (work as Promise<unknown>).then === 'function') {
          const tracked = Promise.resolve(work)
            .catch((err: unknown) => this.log?.error({ err, plugin: this.plugin }, `${this.plugin}: a store change listener failed`))
            .finally(() => this.listening.delete(tracked));
          this.listening.add(tracked);
        }
      } catch (err) {
        this.log?.error({ err, plugin: this.plugin }, `${this.plugin}: a store change listener failed`);
      }
    }
  }
  private readonly listening = new Set<Promise<unknown>>();

  async flush(): Promise<void> {
    const docs = [...this.docTables.values()].flatMap((t) => t.opened());
    const results = await Promise.allSettled([...docs.map((d) => d.flush()), this.flushSearchLogs()]);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      const cause = (failed.reason as { cause?: unknown }).cause ?? failed.reason;
      throw new StoreWriteError(`${this.plugin} data`, describeWriteError(cause), cause);
    }
  }

  /**
   * Drops log and search-log items past their `keepDays` (a plugin's tuned days first, else the declaration's), once.
   * It has no timer of its own: the bot sweeps at start and hands this to the app's one daily retention sweeper
   * (retention.ts). Rejects when a prune fails; whenSwept waits for it either way.
   */
  sweep(now: () => number = Date.now): Promise<void> {
    const work = (async () => {
      for (const decl of this.declarations) {
        if (decl.kind === 'chat-search-log') {
          const keepDays = this.tunings.get(decl)?.keepDays?.() ?? decl.options.keepDays;
          if (keepDays !== undefined) await this.pruneSearchLog(decl, keepDays, now);
          continue;
        }
        if (decl.kind !== 'chat-log' || decl.options.keepDays === undefined) continue;
        const removed = await this.chatLog(decl).prune(now() - decl.options.keepDays * DAY_MS);
        if (removed) this.log?.info({ plugin: this.plugin, store: decl.name, removed }, `${this.plugin}: dropped ${removed} ${titleOf(decl, this.plugin)} item(s) older than ${decl.options.keepDays} days`);
      }
    })();
    this.sweeping = work.catch(() => undefined);
    return work;
  }

  /** Sweeps now, logging a failure instead of rejecting (the sweep at start; tomorrow's pass tries again). */
  sweepLogged(now?: () => number): void {
    this.sweep(now).catch((err) => this.log?.error({ err, plugin: this.plugin }, `${this.plugin}: the retention sweep failed (tried again tomorrow)`));
  }

  /** Resolves once the retention sweep started last (the one at start, then daily, or a tuned one) is done. */
  async whenSwept(): Promise<void> {
    await this.sweeping;
    while (this.listening.size) await Promise.all([...this.listening]);
  }

  /** Writes everything pending (at the bot's stop). */
  async close(): Promise<void> {
    this.stopFlushing?.();
    await this.flush();
  }

  /** The privacy participants of these stores: one per `.mydata` section (see store-privacy.ts). */
  participants(): PrivacyParticipant[] {
    return this.privacy.participants();
  }
}
