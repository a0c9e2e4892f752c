import type { Static, TSchema } from '#typebox';
import type { DataSchema } from './schemas.js';

/*
 * What a plugin declares it keeps (`definePlugin({ stores: [...] })`), made with `Store.chatDoc`, `Store.doc` and
 * `Store.chatLog`, `Store.chatSearchLog`. From these alone the core writes, checks and sets aside the files, holds them during a backup,
 * flushes them at stop, names them in the backup manifest, and answers `.mydata`, deletes, messages deleted for
 * everyone and chat id moves (LID → phone) for them; a plugin wires none of it.
 */

/** What every item of a search log has: the words searched, the time (epoch ms; retention and the `notBefore` of a search read it), and the chat message it came from. */
export interface SearchLogItem {
  text: string;
  at: number;
  id?: string;
}

/** One search result: the item and its neighbours in the chat (context). */
export interface SearchHit<I = SearchLogItem> {
  message: I;
  before?: I;
  after?: I;
}

/** Options every kind of store declaration takes. */
export interface StoreOptions<T> {
  /** The schema version this build writes (default 1); a file of an older one goes through `migrate` first. */
  version?: number;
  /** Turns a document of an older version into the current one (it is checked against the schema afterwards). */
  migrate?: (value: Record<string, unknown>, fromVersion: number) => Record<string, unknown>;
  /**
   * Where it lived, relative to DATA_DIR: a folder for per-chat kinds, a file for `Store.doc`. Default
   * `<plugin>/<name>` (`<plugin>/<name>.json` for a doc). Documents and logs live in the store database now: files
   * found there are taken in once (then kept aside under `data/migrated/`), and a document set aside as unreadable is
   * written there as `<file>.corrupt-<time>`. Give it to keep a layout that exists on disk already.
   */
  path?: string;
  /** What the schema cannot say: a problem in words sets the file aside like a schema mismatch, or undefined. */
  check?(value: T, chatId?: string): string | undefined;
  /**
   * Files of a layout earlier versions kept this data in, which the plugin converts itself on first use (`path`
   * relative to DATA_DIR, `<name>` for a part that varies): the backup manifest names their schema's version, so a
   * restore of a backup still holding some compares it, and `npm run doctor` checks them.
   */
  earlierFiles?: ReadonlyArray<{ path: string; schema: DataSchema }>;
  /**
   * What it is, in words, for messages ("could not save the reminders") and the backup manifest, where it names the
   * schema version (keep it once released: a restore compares versions by it). Default `<plugin> <name>`.
   */
  title?: string;
  /**
   * A document that changes with nearly every message (a tally, a record of each answer): its changes gather for
   * `data.flushIntervalMs` (config.json, default 1 s) before one write, as the core's counters do, instead of 25 ms.
   * A crash loses at most that much of it; a stop, a backup and a person's delete still write it first.
   */
  perMessage?: boolean;
  /** The `.mydata` section it is exported in (default the plugin's name); declarations may share one. */
  section?: string;
  /** Its key inside that section (default its name). */
  exportAs?: string;
  /**
   * The key the file keeps its schema version under (default `version`), for a layout on disk already: a document that
   * is a plain map keyed by user input (e.g. usernames) keeps it under `$version`, a key no entry can take.
   */
  versionKey?: string;
}

/** How items of a per-chat document or log belong to people (for `.mydata`, deletes and messages deleted for everyone). */
export interface ItemPeople<I> {
  /** Who wrote the item (a jid or LID): in groups, a person's `.mydata` holds and deletes the items they wrote. */
  author(item: I): string | undefined;
  /** The chat message the item came from: when it is deleted for everyone, the item goes too. */
  messageId?(item: I): string | undefined;
  /**
   * The chat message an item answers (the bot's reply to it) and that message's writer: the item may repeat its words,
   * so it goes when that message is deleted for everyone or edited by its writer (or the account), and it is the
   * writer's in their `.mydata` export and delete.
   */
  answers?(item: I): { messageId?: string; person?: string } | undefined;
  /**
   * The item with the new text of its message, when its writer edits that message on WhatsApp (needs `messageId`):
   * the old words are nowhere on disk afterwards; undefined when the item cannot be changed and goes (it quotes the old
   * words); the item itself when the edit leaves it as it is. Without it, an edit leaves the item as it is.
   */
  edited?(item: I, text: string): I | undefined;
  /**
   * Other people an item names besides its author (whom it answers, mentions or quotes): a person's `.mydata` export
   * and delete take the items naming them too.
   */
  names?(item: I): Array<string | null | undefined>;
}

/** `Store.chatDoc`: one document per chat, e.g. a chat's reminders. */
export interface ChatDocDeclaration<T = unknown, I = unknown> {
  readonly kind: 'chat-doc';
  readonly name: string;
  readonly schema: TSchema;
  readonly initial: (chatId: string) => T;
  readonly options: StoreOptions<T> & {
    /**
     * The document's list of items about people. Without it, the document is the chat's as a whole: exported and
     * deleted for the person of a private chat only, moved whole when the chat changes id.
     */
    people?: ItemPeople<I> & {
      items(doc: T): I[];
      /** Whether two items are the same one (a chat moved onto an id that has items: duplicates are dropped). */
      same?(a: I, b: I): boolean;
    };
    /**
     * For a document that cannot be cut apart by who said what (a chat's running summary), the people and the chat
     * messages it is made from: it goes whole with the `.mydata` delete of one of those people (and of the private
     * chat's person), and when one of those messages is deleted for everyone by its writer, or edited when it is
     * `editable`; it is in those people's export. Not with `people` nor `owner`.
     */
    covers?: {
      people(doc: T): string[];
      messages(doc: T): Array<{ id: string; senderId?: string; editable?: boolean }>;
    };
    /**
     * For documents keyed by something other than a chat (a workspace id, an account number) that belong to one
     * person as a whole (not with `people`). See `DocOwner`.
     */
    owner?: DocOwner<T>;
    /**
     * A map in the document keyed by chat id (the chats a workspace is open in): when a chat moves to a new id, its
     * entry follows in every document of this kind (an entry the new id has already is kept).
     */
    byChat?(doc: T): Record<string, unknown> | undefined;
  };
}

/**
 * Who a `Store.chatDoc` keyed by something other than a chat belongs to. Such a document is the person's as a whole:
 * `.mydata` exports it (under its key, with its folder's files listed in `files`), `.mydata delete` removes its file,
 * its folder, its earlier copies set aside as unreadable and the entries that refer to it (`Store.doc`'s `refersTo`);
 * a chat moving to a new id does not move it (its key is no chat; see `byChat`). The ids it names are one person's:
 * the plugin's other declarations export and delete for all of them (a LID the person did not write from this time).
 */
export interface DocOwner<T> {
  /** The person's ids (phone jid and LID) the document names. */
  ids(doc: T): string[];
  /**
   * A folder of files, relative to DATA_DIR, that belongs to the document with this key (undefined: none): its
   * regular files are listed in the export (name and size, links not followed) and it is deleted with the document.
   * A path with `.` or `..` segments is refused.
   */
  folder?(key: string): string | undefined;
}

/** `Store.doc`: one document for the whole plugin, e.g. each user's time zone. */
export interface DocDeclaration<T = unknown> {
  readonly kind: 'doc';
  readonly name: string;
  readonly schema: TSchema;
  readonly initial: () => T;
  readonly options: StoreOptions<T> & {
    /**
     * A map in the document keyed by person or chat id (a user's time zone, a chat's choice): a person's `.mydata`
     * holds and deletes their entries, and an entry follows its chat when the chat changes id (an entry the new id
     * has already is kept).
     */
    people?: {
      byId(doc: T): Record<string, unknown>;
      /**
       * The ids an entry names, when its key alone is not one (default: the key), e.g. a map of LID digits to phone
       * digits names both ids of a person: the entry is a person's when one of these is theirs.
       */
      ids?(key: string, value: unknown): string[];
    };
    /**
     * A map in the document whose values are keys of another declaration's documents (a `Store.chatDoc` with `owner`),
     * e.g. site usernames → workspace ids: an entry is exported with the document it names and goes when that
     * document goes (deleted with its person, or by the plugin's `remove()`).
     */
    refersTo?: { decl: ChatDocDeclaration<any, any>; map(doc: T): Record<string, unknown> };
    /**
     * Lists and maps in the document whose entries belong to people, each with its own rule (the core's access
     * decisions: approvals, pairing requests, personas, paused chats), exported under the part's name. Not with
     * `people`. See `DocPart`.
     */
    parts?: Record<string, DocPart<T>>;
  };
}

/**
 * One list or map of a `Store.doc` with `parts`. An entry is a person's when one of the ids it names (`people`) is
 * theirs, or, in a `byChat` map, when its key is their private chat. A bare number (digits, no `@`: as owners type
 * them) names whoever writes with those digits, phone or LID.
 */
export interface DocPart<T, E = any> {
  /** A list of entries (they stay where they are when a chat moves). */
  list?(doc: T): E[];
  /** A map keyed by chat id: an entry follows its chat to a new id. */
  byChat?(doc: T): Record<string, E>;
  /** The ids an entry names (who it is about, who set it). */
  people?(entry: E): Array<string | undefined>;
  /**
   * What the person's `.mydata` does with their entries: `delete` (default) exports and deletes them; `export` shows
   * them and keeps them (a decision the owners made about the person, e.g. an approval, which their delete must not
   * undo); `none` neither (about a chat, not a person: the owner's takeover pause).
   */
  privacy?: 'delete' | 'export' | 'none';
  /** A chat moved onto an id with its own entry: the entry kept (default: the new id's own). Needs `byChat`. */
  merge?(moving: E, existing: E): E;
}

/** `Store.chatLog`: an append-only log per chat (one JSON line per item), e.g. what a chat said. */
export interface ChatLogDeclaration<I = unknown> {
  readonly kind: 'chat-log';
  readonly name: string;
  readonly schema: TSchema;
  readonly options: StoreOptions<I[]> & {
    people?: ItemPeople<I>;
    /** Items older than this many days are dropped (at start and daily); needs `at`. */
    keepDays?: number;
    /** When the item was written (epoch ms), for `keepDays`. */
    at?(item: I): number;
  };
}

/**
 * `Store.chatSearchLog`: a per-chat log searched by its words, e.g. a chat's past messages (recall). Its items live in
 * the store database with a full-text index (FTS5); the month files of earlier versions (`<path>/<chat>/<YYYY-MM>.jsonl`)
 * are taken in once. Files attached to items stay in `<path>/<chat>/`. Every call is bound to one chat.
 */
export interface ChatSearchLogDeclaration<I extends SearchLogItem = SearchLogItem> {
  readonly kind: 'chat-search-log';
  readonly name: string;
  readonly schema: TSchema;
  readonly options: StoreOptions<I[]> & {
    people?: ItemPeople<I> & {
      /**
       * Other people's chat messages an item carries (e.g. the messages around a voice note): a person's `.mydata`
       * delete, a message deleted for everyone and an edit reach them inside every item, not only the items they wrote.
       */
      carried?: {
        /** The messages an item carries. */
        messages(item: I): CarriedMessage[];
        /**
         * The item carrying `messages` instead: in the order `messages(item)` gave them, each the same, with new text
         * (an edit), or undefined when it goes (a delete).
         */
        withMessages(item: I, messages: Array<CarriedMessage | undefined>): I;
      };
    };
    /**
     * Files that belong to an item, as paths inside the chat's folder (`audio/<id>.ogg`): written with
     * `searchLog.putFile` before the item is added, deleted with the item, moved with the chat and included in
     * `.mydata` (base64, up to 16 MB per export).
     */
    files?(item: I): string[];
    /**
     * What stays in an item's place when a person's delete or a message deleted for everyone takes it (default: the
     * line goes). `marker(item)` must hold no words, no author and no files — it keeps only what lets the plugin say
     * later that the item was there and was deleted (e.g. a reply quoting an erased voice note is not transcribed
     * again); `is(item)` tells a marker, which is never exported nor searched. A marker that still names a file or an
     * author is not kept: the line goes.
     */
    erased?: { marker(item: I): I; is(item: I): boolean };
    /** Items older than this many days are dropped (at start and daily); a plugin may set it at run time (`host.store.tune`). */
    keepDays?: number;
    /**
     * Turns a stored value into the item (checked, normalised: a long text clipped), or undefined when it is not one.
     * Default: the value when it matches the schema.
     */
    item?(value: unknown): I | undefined;
  };
}

/**
 * `Store.chatRecord`: a small record of ids per chat (no words), each entry found by its chat and id, bounded by age
 * and count (the oldest go first), e.g. which messages were answered together. `schema` is one entry's.
 */
export interface ChatRecordDeclaration<I extends RecordEntry = RecordEntry> {
  readonly kind: 'chat-record';
  readonly name: string;
  readonly schema: TSchema;
  readonly options: Omit<StoreOptions<I[]>, 'check' | 'versionKey'> & {
    /** The chat an entry belongs to, and the same entry moved to another chat (its own field names stay). */
    chatOf(entry: I): string;
    withChat(entry: I, chatId: string): I;
    /** Entries older than this are forgotten, and never returned. */
    keepMs: number;
    /** At most this many entries are kept (the oldest go first). */
    keepCount: number;
    /**
     * Who an entry is about besides the person of its private chat (the ids of its sender, of who deleted it): a
     * person's `.mydata` holds and deletes those entries. `messageId`: the chat message an entry stands for; when it
     * is deleted for everyone (by one of `author`'s ids, or the account), its entries go.
     */
    people?: { author(entry: I): string | string[] | undefined; messageId?(entry: I): string | undefined };
    /** An entry as `.mydata` shows it (default: as kept); the export is one list of them, across chats. */
    exported?(entry: I): unknown;
  };
}

/** What every entry of a `Store.chatRecord` has: its id within its chat, and when it was noted (for the age bound). */
export interface RecordEntry {
  id: string;
  at: number;
}

/** A chat message an item of a search log carries (see `people.carried`). */
export interface CarriedMessage {
  id?: string;
  senderId?: string;
  text: string;
}

export type StoreDeclaration = ChatDocDeclaration<any, any> | DocDeclaration<any> | ChatLogDeclaration<any> | ChatSearchLogDeclaration<any> | ChatRecordDeclaration<any>;

/** The `DataSchema` (name, version, JSON schema) of a declaration, for the file checks and the backup manifest. */
export function dataSchemaOf(decl: StoreDeclaration, plugin: string): DataSchema {
  if (decl.kind === 'chat-record') {
    // Its earlier file: `{ "<name>": [entries] }`, at most `keepCount` of them.
    const schema = { type: 'object', required: [decl.name], properties: { [decl.name]: { type: 'array', maxItems: decl.options.keepCount, items: decl.schema } } };
    return { name: titleOf(decl, plugin), version: decl.options.version ?? 1, schema, migrate: decl.options.migrate };
  }
  return { name: titleOf(decl, plugin), version: decl.options.version ?? 1, versionKey: decl.options.versionKey, schema: decl.schema, migrate: decl.options.migrate };
}

/** What a declaration is, in words (its `title`, default `<plugin> <name>`). */
export function titleOf(decl: StoreDeclaration, plugin: string): string {
  return decl.options.title ?? `${plugin} ${decl.name.replace(/-/g, ' ')}`;
}

/** Where a declaration lives, relative to DATA_DIR (a folder for per-chat kinds, a file for a doc). */
export function storePathOf(decl: StoreDeclaration, plugin: string): string {
  return decl.options.path ?? (decl.kind === 'doc' || decl.kind === 'chat-record' ? `${plugin}/${decl.name}.json` : `${plugin}/${decl.name}`);
}

/** The `dataFiles` entries a declaration stands for (path with its `<chat>` placeholder, schema). */
export function dataFileOf(decl: StoreDeclaration, plugin: string): { path: string; schema: DataSchema } {
  const where = storePathOf(decl, plugin);
  const path = decl.kind === 'doc' || decl.kind === 'chat-record' ? where : decl.kind === 'chat-search-log' ? `${where}/<chat>/<month>.jsonl` : `${where}/<chat>.${decl.kind === 'chat-log' ? 'jsonl' : 'json'}`;
  return { path, schema: dataSchemaOf(decl, plugin) };
}

const NAME = /^[a-z][a-z0-9-]{0,39}$/;

/** A chatDoc's `owner`: alone (not with `people`), and with a folder only when the export has room for `files`. */
function checkOwner(name: string, schema: TSchema, options: ChatDocDeclaration<any, any>['options']): void {
  const owner = options.owner;
  if (options.byChat !== undefined && typeof options.byChat !== 'function') throw new TypeError(`Store: ${name}'s byChat must be (doc) => the map keyed by chat id`);
  const covers = options.covers;
  if (covers !== undefined && (typeof covers.people !== 'function' || typeof covers.messages !== 'function' || options.people || owner)) {
    throw new TypeError(`Store: ${name}'s covers needs people: (doc) => ids and messages: (doc) => [{ id, senderId, editable }], and takes neither people nor owner`);
  }
  if (owner === undefined) return;
  if (typeof owner.ids !== 'function' || (owner.folder !== undefined && typeof owner.folder !== 'function')) {
    throw new TypeError(`Store: ${name}'s owner needs ids: (doc) => the person's ids, and optionally folder: (key) => a folder relative to DATA_DIR`);
  }
  if (options.people) throw new TypeError(`Store: ${name} takes people (items per chat) or owner (the document is one person's as a whole), not both`);
  const properties = (schema as { type?: unknown; properties?: Record<string, unknown> }).properties;
  if (owner.folder && ((schema as { type?: unknown }).type !== 'object' || (properties && 'files' in properties))) {
    throw new TypeError(`Store: ${name}'s owner.folder lists the files under "files" in the export: the schema must be an object without a files key`);
  }
}

/**
 * The folder an owned document's `folder(key)` names, relative to DATA_DIR, or undefined; throws when it is not a
 * plain relative path (a key read from a file name must never lead elsewhere: `../history`).
 */
export function ownedFolderOf(decl: ChatDocDeclaration<any, any>, key: string): string | undefined {
  const folder = decl.options.owner?.folder?.(key);
  if (folder === undefined) return undefined;
  const segments = typeof folder === 'string' ? folder.split('/') : [];
  if (!segments.length || folder.startsWith('/') || segments.some((s) => s === '' || s === '.' || s === '..' || s.includes('\\'))) {
    throw new Error(`the folder of ${decl.name} ${JSON.stringify(key).slice(0, 60)} is not a plain path under DATA_DIR (${JSON.stringify(folder).slice(0, 80)})`);
  }
  return folder;
}

/** A doc's `parts`: not with `people`; each a `list` or a `byChat` map, `merge` only with `byChat`. */
function checkParts(name: string, options: DocDeclaration<any>['options']): void {
  const parts = options.parts;
  if (parts === undefined) return;
  if (options.people) throw new TypeError(`Store: ${name} takes people (one map keyed by id) or parts, not both`);
  for (const [key, part] of Object.entries(parts)) {
    const privacy = part?.privacy ?? 'delete';
    if ((typeof part?.list === 'function') === (typeof part?.byChat === 'function') || (part.people !== undefined && typeof part.people !== 'function') || !['delete', 'export', 'none'].includes(privacy)) {
      throw new TypeError(`Store: ${name}'s part ${key} needs list: (doc) => entries or byChat: (doc) => a map keyed by chat id (one of them), people: (entry) => ids, privacy: 'delete' | 'export' | 'none'`);
    }
    if (part.merge !== undefined && (typeof part.merge !== 'function' || !part.byChat)) throw new TypeError(`Store: ${name}'s part ${key} takes merge: (moving, existing) => kept only with byChat`);
  }
}

function checked<D extends StoreDeclaration>(decl: D): D {
  if (typeof decl.name !== 'string' || !NAME.test(decl.name)) throw new TypeError(`Store: the name "${String(decl.name)}" must be lowercase letters, digits and dashes, starting with a letter`);
  if (!decl.schema || typeof decl.schema !== 'object') throw new TypeError(`Store: ${decl.name} needs a TypeBox schema, e.g. Type.Object({ items: Type.Array(Type.String()) })`);
  const where = decl.options.path;
  if (where !== undefined && (typeof where !== 'string' || !where || where.startsWith('/') || where.split('/').includes('..'))) {
    throw new TypeError(`Store: ${decl.name}'s path must be relative to DATA_DIR, without "..", e.g. 'reminders'`);
  }
  const version = decl.options.version;
  if (version !== undefined && (!Number.isInteger(version) || version < 1)) throw new TypeError(`Store: ${decl.name}'s version must be a whole number from 1`);
  return Object.freeze(decl);
}

/**
 * Declares what a plugin keeps; list the declarations in `definePlugin({ stores })` and open them with `host.store`.
 * Types come from the TypeBox schema.
 *
 * @example
 * const Note = Type.Object({ text: Type.String(), by: Type.String(), messageId: Type.Optional(Type.String()) });
 * const notes = Store.chatDoc('notes', Type.Object({ items: Type.Array(Note) }), () => ({ items: [] }), {
 *   people: { items: (d) => d.items, author: (n) => n.by, messageId: (n) => n.messageId },
 * });
 * export default definePlugin({
 *   name: 'notes',
 *   description: 'Keeps notes per chat',
 *   stores: [notes],
 *   setup: (host) => ({
 *     commands: [{ command: 'note', run: async (ctx) => {
 *       await host.store.chat(ctx.chatId).doc(notes).save((d) => void d.items.push({ text: ctx.args, by: ctx.senderId, messageId: ctx.message.id }));
 *       await ctx.reply('Noted.');
 *     } }],
 *   }),
 * });
 */
export const Store = {
  /** One document per chat (a row per chat in the store database; earlier files: `<path>/<chat>.json`). */
  chatDoc<S extends TSchema, I = never>(name: string, schema: S, initial: (chatId: string) => Static<S>, options: ChatDocDeclaration<Static<S>, I>['options'] = {}): ChatDocDeclaration<Static<S>, I> {
    checkOwner(name, schema, options);
    return checked({ kind: 'chat-doc', name, schema, initial, options });
  },
  /** One document for the whole plugin (a row in the store database; earlier file: `<path>`, default `<plugin>/<name>.json`). */
  doc<S extends TSchema>(name: string, schema: S, initial: () => Static<S>, options: DocDeclaration<Static<S>>['options'] = {}): DocDeclaration<Static<S>> {
    const refers = options.refersTo;
    if (refers !== undefined && (typeof refers.map !== 'function' || refers.decl?.kind !== 'chat-doc' || !refers.decl.options.owner)) {
      throw new TypeError(`Store: ${name}'s refersTo needs { decl: a Store.chatDoc with owner, map: (doc) => the map whose values are its keys }`);
    }
    checkParts(name, options);
    return checked({ kind: 'doc', name, schema, initial, options });
  },
  /** An append-only log per chat (`<path>/<chat>.jsonl`), `schema` being one item's. */
  chatLog<S extends TSchema>(name: string, schema: S, options: ChatLogDeclaration<Static<S>>['options'] = {}): ChatLogDeclaration<Static<S>> {
    if (options.keepDays !== undefined && (typeof options.at !== 'function' || !(options.keepDays > 0))) throw new TypeError(`Store: ${name}'s keepDays needs a positive number of days and at(item) => epoch ms`);
    return checked({ kind: 'chat-log', name, schema, options });
  },
  /**
   * A per-chat log searched by its words (`<path>/<chat>/<YYYY-MM>.jsonl`, default path `<plugin>/<name>`), `schema`
   * being one item's: each has `text` (what is searched) and `at` (epoch ms), and `id` when it came from a chat message.
   * Open it with `host.store.chat(chatId).searchLog(decl)`: no call searches more than one chat.
   */
  chatSearchLog<S extends TSchema>(name: string, schema: S, options: ChatSearchLogDeclaration<Static<S> & SearchLogItem>['options'] = {}): ChatSearchLogDeclaration<Static<S> & SearchLogItem> {
    if (options.keepDays !== undefined && !(options.keepDays > 0)) throw new TypeError(`Store: ${name}'s keepDays needs a positive number of days`);
    return checked({ kind: 'chat-search-log', name, schema, options });
  },
  /**
   * A small record of ids per chat, bounded by age (`keepMs`) and count (`keepCount`), each entry found by chat and id
   * (`host`'s `record(decl)`), `schema` being one entry's. Earlier file: `<path>` holding `{ "<name>": [entries] }`.
   */
  chatRecord<S extends TSchema>(name: string, schema: S, options: ChatRecordDeclaration<Static<S> & RecordEntry>['options']): ChatRecordDeclaration<Static<S> & RecordEntry> {
    if (typeof options?.chatOf !== 'function' || typeof options.withChat !== 'function') throw new TypeError(`Store: ${name} needs chatOf(entry) => its chat and withChat(entry, chatId) => the entry in another chat`);
    if (!(options.keepMs > 0) || !Number.isInteger(options.keepCount) || options.keepCount < 1) throw new TypeError(`Store: ${name} needs keepMs (a positive age in ms) and keepCount (a whole number from 1)`);
    return checked({ kind: 'chat-record', name, schema, options });
  },
};
