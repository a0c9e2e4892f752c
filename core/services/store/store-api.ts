import type { ChatDocDeclaration, ChatLogDeclaration, ChatRecordDeclaration, ChatSearchLogDeclaration, DocDeclaration, RecordEntry, SearchHit, SearchLogItem, StoreDeclaration } from './store-declarations.js';
import { StoreWriteError } from '../../api/errors.js';

/*
 * What a plugin holds of its stores (`host.store`): the documents, logs and search logs its declarations open, and the
 * error a change that is not on disk rejects with. Made by `PluginStores` (plugin-store.ts).
 */

/** One stored document (`host.store.doc(decl)`, `host.store.chat(id).doc(decl)`). */
export interface StoredDoc<T> {
  /** The document: read from the store database on first use (one that does not parse or match was set aside: it starts new). */
  get(): Promise<T>;
  /** Changes it in place (or replaces it by returning a new value); written soon after, in one transaction. */
  update(change: (doc: T) => T | void): Promise<T>;
  /**
   * `update`, then waits until it is on disk. Rejects with a StoreWriteError when it cannot be written: the change
   * stays in memory and is retried, and the error's message is fit for the user whose action it was.
   */
  save(change: (doc: T) => T | void): Promise<T>;
  /**
   * Deletes the document once what is pending is written (a per-chat document that is gone as a whole); the
   * next `get` starts from `initial`. A document with `owner` takes along its folder, its copies set aside as unreadable
   * and the entries referring to it (`refersTo`). Rejects when it cannot be removed.
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
/** A `Store.chatRecord`, opened: every change is in the store database when its promise resolves. */
export interface StoredRecord<I extends RecordEntry> {
  /** Notes entries (a later note of the same chat and id replaces the earlier one), then applies the bounds. */
  add(entries: I[]): Promise<void>;
  /** The entry noted for `id` in `chatId`, while it is kept. */
  get(chatId: string, id: string): Promise<I | undefined>;
  /** Every entry kept, oldest first. */
  entries(): Promise<I[]>;
}

export interface PluginStore {
  doc<T>(decl: DocDeclaration<T>): StoredDoc<T>;
  record<I extends RecordEntry>(decl: ChatRecordDeclaration<I>): StoredRecord<I>;
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
   * A listener may return a promise for work it starts (removing files nothing refers to any more): the bot's idle
   * wait (and a test's) includes it. Returns the function that removes the listener.
   */
  onChange(decl: StoreDeclaration, listener: (chatId: string | undefined, removed?: boolean) => void | Promise<unknown>): () => void;
  /** Resolves once everything is on disk; rejects (StoreWriteError) naming what could not be written. */
  flush(): Promise<void>;
}
