import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { removeDataFile } from './atomic.js';
import { listFolder, removeFolder } from './owned-folder.js';
import type { DocView } from './doc-view.js';
import type { BoundedRecord } from './bounded-record.js';
import type { DataDomain } from './data-domain.js';
import type { ChatLogEngine, ChatLogView } from './sql-chat-log.js';
import type { SqlSearchLog } from './sql-search-log.js';
import { changeableBy, isPrivateChatOf, writtenBy } from './privacy.js';
import { userPart } from '../../kernel/port/ids.js';
import type { PersonIds, PrivacyParticipant } from '../../kernel/port/privacy-participant.js';
import type { SearchLogChat, SearchLogItem } from './sql-search-log.js';
import { ownedFolderOf, titleOf, type CarriedMessage, type RecordEntry, type ItemPeople, type ChatDocDeclaration, type ChatLogDeclaration, type ChatRecordDeclaration, type ChatSearchLogDeclaration, type DocDeclaration, type DocPart, type StoreDeclaration } from './store-declarations.js';

/** File bytes (a search log's attached files) put into one `.mydata` export at most, base64 in the JSON. */
const MAX_EXPORT_FILE_BYTES = 16 * 1024 * 1024;
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
/** A record's `people.author` as a list of ids. */
const idsOf = (ids: string | string[] | undefined): string[] => (ids === undefined ? [] : Array.isArray(ids) ? ids : [ids]);
/** Whether a declaration is a `Store.chatDoc` with `owner`. */
const isOwned = (decl: StoreDeclaration) => decl.kind === 'chat-doc' && decl.options.owner !== undefined;

/**
 * What the privacy controls use of one plugin's stores (`PluginStores` is it). Declared here, on the side that uses it,
 * so the stores can hold their privacy controls without the two modules importing each other.
 */
export interface StoresForPrivacy {
  readonly plugin: string;
  readonly dataDir: string;
  readonly declarations: readonly StoreDeclaration[];
  readonly log?: { error(obj: object, msg: string): void };
  readonly domain: DataDomain;
  record<I extends RecordEntry>(decl: ChatRecordDeclaration<I>): BoundedRecord<I>;
  docView<T>(decl: ChatDocDeclaration<T, any> | DocDeclaration<T>, chatId?: string): DocView<T>;
  erased(decl: ChatDocDeclaration<any, any> | DocDeclaration<any>): void;
  saved(decl: StoreDeclaration, doc: DocView<unknown>): Promise<void>;
  chatLog<I>(decl: ChatLogDeclaration<I>): ChatLogEngine<I>;
  logFile<I>(decl: ChatLogDeclaration<I>, chatId: string): ChatLogView<I>;
  engine<I extends SearchLogItem>(decl: ChatSearchLogDeclaration<I>): SqlSearchLog<I>;
  settle(decl: StoreDeclaration): void;
  chats(decl: ChatDocDeclaration<any, any> | ChatLogDeclaration<any> | ChatSearchLogDeclaration<any>): Promise<string[]>;
  changed(decl: StoreDeclaration, chatId: string | undefined, removed?: boolean): void;
}

/**
 * The privacy controls of one plugin's stores, from their declarations alone: `.mydata` export and delete, a message
 * deleted for everyone, an edited message and a chat moving to a new id (LID → phone), for every kind — documents,
 * logs, search logs (with their files, carried messages and erased markers) and owner documents. One participant per
 * `.mydata` section; a plugin wires none of it.
 */
export class StorePrivacy {
  constructor(private readonly store: StoresForPrivacy) {}

  /** The privacy participants of these stores: one per `.mydata` section. */
  participants(): PrivacyParticipant[] {
    const sections = new Map<string, StoreDeclaration[]>();
    for (const decl of this.store.declarations) {
      const section = decl.options.section ?? this.store.plugin;
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

  /** Whether an entry of a doc's `people.byId` map is the person's: its key, or the ids `people.ids` says it names. */
  private entryOf(decl: DocDeclaration<any>, person: PersonIds): (key: string, value: unknown) => boolean {
    const ids = decl.options.people?.ids;
    return ids ? (key, value) => ids(key, value).some((id) => writtenBy(id, person)) : (key) => writtenBy(key, person);
  }

  /** Waits until a privacy change of a document is in the database, then erases what it took from every file. */
  private async savedAndErased(decl: ChatDocDeclaration<any, any> | DocDeclaration<any>, doc: DocView<unknown>): Promise<void> {
    await this.store.saved(decl, doc);
    this.store.erased(decl);
  }

  /** The entries of a record that are the person's: every entry of their private chat, and those naming them (`people.author`). */
  private recordOf(decl: ChatRecordDeclaration<any>, person: PersonIds): (entry: unknown) => boolean {
    const author = decl.options.people?.author;
    return (entry) => isPrivateChatOf(decl.options.chatOf(entry), person) || idsOf(author?.(entry)).some((id) => writtenBy(id, person));
  }

  /** Which items of a chat are the person's: all of their private chat, in groups those they wrote or that name them. */
  private ofPerson<I>(chatId: string, person: PersonIds, author: (item: I) => string | undefined, names?: (item: I) => Array<string | null | undefined>, answers?: ItemPeople<I>['answers']): (item: I) => boolean {
    const whole = isPrivateChatOf(chatId, person);
    return (item) => whole || writtenBy(author(item), person) || (names?.(item) ?? []).some((id) => writtenBy(id ?? undefined, person)) || writtenBy(answers?.(item)?.person, person);
  }

  /** Whether an item answers `messageId` (`people.answers`) and `author` (who deletes it) may take it: the message's writer. */
  private answering<I>(people: ItemPeople<I> | undefined, messageId: string, author: PersonIds | undefined): (item: I) => boolean {
    const answers = people?.answers;
    if (!answers) return () => false;
    return (item) => {
      const answered = answers(item);
      return answered?.messageId === messageId && changeableBy(answered.person, author);
    };
  }

  /** Whether a `covers` document is made from the person's words (or is their private chat's). */
  private coversPerson<T>(decl: ChatDocDeclaration<T, any>, chatId: string, doc: T, person: PersonIds): boolean {
    const covers = decl.options.covers!;
    return isPrivateChatOf(chatId, person) || covers.people(doc).some((id) => writtenBy(id, person));
  }

  /** A `covers` document goes whole when one of its messages that `which` picks is changed; resolves with 1 when it went. */
  private async dropCovering(decl: ChatDocDeclaration<any, any>, chatId: string, which: (m: { id: string; senderId?: string; editable?: boolean }) => boolean): Promise<number> {
    if (!(await this.store.chats(decl)).includes(chatId)) return 0;
    const file = this.store.docView(decl, chatId);
    if (!decl.options.covers!.messages(await file.get()).some(which)) return 0;
    await file.remove();
    this.store.changed(decl, chatId, true);
    return 1;
  }

  /** The items of a chat's search log that are the person's (see `ofPerson`; without `people`, a private chat's whole log). */
  private personsItems(decl: ChatSearchLogDeclaration<any>, chatId: string, person: PersonIds): (item: SearchLogItem) => boolean {
    const author = decl.options.people?.author;
    const theirs = author ? this.ofPerson(chatId, person, author, decl.options.people?.names, decl.options.people?.answers) : () => isPrivateChatOf(chatId, person);
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
  private async takeItems(decl: ChatSearchLogDeclaration<any>, log: SearchLogChat<any>, matches: (item: SearchLogItem) => boolean): Promise<number> {
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
  private async changeCarried(decl: ChatSearchLogDeclaration<any>, log: SearchLogChat<any>, which: (m: CarriedMessage) => boolean, change: (m: CarriedMessage) => CarriedMessage | undefined): Promise<number> {
    const carried = decl.options.people?.carried;
    if (!carried) return 0;
    return log.changeWhere(
      (item) => carried.messages(item).some(which),
      (item) => carried.withMessages(item, carried.messages(item).map((m) => (which(m) ? change(m) : m))),
    );
  }

  private async exportOne(decl: StoreDeclaration, person: PersonIds): Promise<unknown> {
    if (decl.kind === 'chat-record') {
      const shown = decl.options.exported ?? ((entry: unknown) => entry);
      return (await this.store.record(decl).entries()).filter(this.recordOf(decl, person)).map((entry) => shown(entry));
    }
    if (decl.kind === 'chat-search-log') {
      this.store.settle(decl);
      const logs = this.store.engine(decl);
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
    if (decl.kind === 'doc' && decl.options.parts) return this.exportParts(decl, decl.options.parts, person);
    if (decl.kind === 'doc') {
      const byId = decl.options.people?.byId;
      const referring = await this.referringTo(decl, person);
      if (!byId) return Object.fromEntries(referring);
      const theirs = this.entryOf(decl, person);
      return { ...Object.fromEntries(Object.entries(byId(await this.store.docView(decl).get())).filter(([id, value]) => theirs(id, value))), ...Object.fromEntries(referring) };
    }
    if (decl.kind === 'chat-doc' && decl.options.owner) return this.exportOwned(decl, person);
    const out: Record<string, unknown> = {};
    for (const chatId of await this.store.chats(decl)) {
      if (decl.kind === 'chat-doc') {
        const doc = await this.store.docView(decl, chatId).get();
        const people = decl.options.people;
        if (!people) {
          if (decl.options.covers ? this.coversPerson(decl, chatId, doc, person) : isPrivateChatOf(chatId, person)) out[chatId] = doc;
          continue;
        }
        const mine = people.items(doc).filter(this.ofPerson(chatId, person, people.author, people.names, people.answers));
        if (mine.length) out[chatId] = mine;
      } else {
        const author = decl.options.people?.author;
        const items = await this.store.logFile(decl, chatId).read();
        const mine = author ? items.filter(this.ofPerson(chatId, person, author, decl.options.people?.names, decl.options.people?.answers)) : isPrivateChatOf(chatId, person) ? items : [];
        if (mine.length) out[chatId] = mine;
      }
    }
    return out;
  }

  private async deleteOne(decl: StoreDeclaration, person: PersonIds): Promise<number> {
    if (decl.kind === 'chat-record') return this.store.record(decl).removeWhere(this.recordOf(decl, person));
    if (decl.kind === 'chat-search-log') {
      this.store.settle(decl);
      const logs = this.store.engine(decl);
      let removed = 0;
      for (const chatId of await logs.chatIds()) {
        let n = await this.takeItems(decl, logs.chat(chatId), this.personsItems(decl, chatId, person));
        // Their messages carried inside other people's items go too.
        n += await this.changeCarried(decl, logs.chat(chatId), (m) => writtenBy(m.senderId, person), () => undefined);
        if (n) this.store.changed(decl, chatId);
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
    if (decl.kind === 'doc' && decl.options.parts) return this.deleteParts(decl, decl.options.parts, person);
    if (decl.kind === 'doc') {
      const byId = decl.options.people?.byId;
      // A `refersTo` entry goes with the document it names (removeOwned).
      if (!byId) return 0;
      const file = this.store.docView(decl);
      const theirs = this.entryOf(decl, person);
      const gone = Object.entries(byId(await file.get())).filter(([id, value]) => theirs(id, value)).map(([id]) => id);
      if (!gone.length) return 0;
      await file.update((doc) => void gone.forEach((id) => delete byId(doc)[id]));
      this.store.changed(decl, undefined);
      await this.savedAndErased(decl, file);
      return gone.length;
    }
    let removed = 0;
    let failure: unknown;
    for (const chatId of await this.store.chats(decl)) {
      try {
        if (decl.kind === 'chat-doc' && decl.options.covers) {
          const doc = this.store.docView(decl, chatId);
          if (!this.coversPerson(decl, chatId, await doc.get(), person)) continue;
          await doc.remove();
          this.store.changed(decl, chatId, true);
          removed++;
        } else if (decl.kind === 'chat-doc') {
          removed += await this.removeFromDoc(decl, chatId, (doc, people) => (people ? this.ofPerson(chatId, person, people.author, people.names, people.answers) : isPrivateChatOf(chatId, person) ? 'whole' : undefined));
          // Their private chat emptied: its document goes, so not even its key (their id) stays.
          const doc = this.store.docView(decl, chatId);
          if (isPrivateChatOf(chatId, person) && same(await doc.get(), decl.initial(chatId))) await doc.remove();
        }
        else {
          const author = decl.options.people?.author;
          const n = await this.store.logFile(decl, chatId).removeWhere(author ? this.ofPerson(chatId, person, author, decl.options.people?.names, decl.options.people?.answers) : () => isPrivateChatOf(chatId, person));
          if (n) this.store.changed(decl, chatId);
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
    const file = this.store.docView(decl, chatId);
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
    this.store.changed(decl, chatId);
    if (wait) await this.savedAndErased(decl, file);
    else {
      // A message deleted for everyone is gone from memory at once; a failed write is retried and reported by the
      // data health, and must not keep the other stores from removing the message.
      await this.savedAndErased(decl, file).catch((err: unknown) => this.store.log?.error({ err, plugin: this.store.plugin, chat: chatId }, `${this.store.plugin}: removed ${titleOf(decl, this.store.plugin)} of a message deleted for everyone, but could not save it yet`));
    }
    return removed;
  }

  private async revokeOne(decl: StoreDeclaration, chatId: string, messageId: string, author: PersonIds | undefined): Promise<number> {
    if (decl.kind === 'doc') return 0;
    if (decl.kind === 'chat-record') {
      const { chatOf, people } = decl.options;
      const idOf = people?.messageId;
      if (!idOf) return 0;
      // Only its writer's delete (or the account's) takes it: with several ids named, any of them.
      return this.store.record(decl).removeWhere((entry) => chatOf(entry) === chatId && idOf(entry) === messageId && (!author || idsOf(people.author(entry)).some((id) => changeableBy(id, author))));
    }
    if (decl.kind === 'chat-search-log') {
      const own = this.fromMessage(decl, messageId, author);
      const answering = this.answering<unknown>(decl.options.people, messageId, author);
      if (!own && !decl.options.people?.answers) return 0;
      const matches = (item: unknown) => own?.(item) === true || answering(item);
      this.store.settle(decl);
      const log = this.store.engine(decl).chat(chatId);
      let n = await this.takeItems(decl, log, matches);
      n += await this.changeCarried(decl, log, (m) => m.id === messageId && changeableBy(m.senderId, author), () => undefined);
      if (n) this.store.changed(decl, chatId);
      return n;
    }
    if (decl.kind === 'chat-doc' && decl.options.covers) return this.dropCovering(decl, chatId, (m) => m.id === messageId && changeableBy(m.senderId, author));
    const people = decl.options.people;
    const idOf = people?.messageId;
    if (!people || (!idOf && !people.answers)) return 0;
    // The item of the message, and the items answering it (they may repeat its words).
    const answering = this.answering<unknown>(people, messageId, author);
    const matches = (item: unknown) => (idOf?.(item) === messageId && changeableBy(people.author(item), author)) || answering(item);
    if (decl.kind === 'chat-doc') {
      if (!(await this.store.chats(decl)).includes(chatId)) return 0;
      return this.removeFromDoc(decl, chatId, () => matches, false);
    }
    const n = await this.store.logFile(decl, chatId).removeWhere(matches);
    if (n) this.store.changed(decl, chatId);
    return n;
  }

  /** An edited message: the items it made get its new text (see `ItemPeople.edited`). */
  private async editOne(decl: StoreDeclaration, chatId: string, messageId: string, text: string, author: PersonIds | undefined): Promise<number> {
    // A record keeps ids, no words: an edit leaves nothing to change.
    if (decl.kind === 'doc' || decl.kind === 'chat-record') return 0;
    if (decl.kind === 'chat-search-log') {
      const matches = this.fromMessage(decl, messageId, author);
      const edited = decl.options.people?.edited;
      this.store.settle(decl);
      const log = this.store.engine(decl).chat(chatId);
      let n = 0;
      if (matches && edited) {
        // An item that cannot take the new text (edited gives undefined) goes.
        n += await log.removeWhere((item) => matches(item) && edited(item, text) === undefined);
        n += await log.changeWhere((item) => matches(item) && edited(item, text) !== undefined, (item) => edited(item, text)!);
      }
      // The answers to the old words go (they may repeat them).
      if (decl.options.people?.answers) n += await this.takeItems(decl, log, this.answering<SearchLogItem>(decl.options.people, messageId, author));
      n += await this.changeCarried(decl, log, (m) => m.id === messageId && changeableBy(m.senderId, author), (m) => ({ ...m, text }));
      if (n) this.store.changed(decl, chatId);
      return n;
    }
    if (decl.kind === 'chat-doc' && decl.options.covers) return this.dropCovering(decl, chatId, (m) => m.id === messageId && m.editable === true && changeableBy(m.senderId, author));
    const people = decl.options.people;
    const idOf = people?.messageId;
    const edited = people?.edited;
    if (!people || ((!idOf || !edited) && !people.answers)) return 0;
    // An item the edit leaves as it is (edited gives it back) is not changed.
    const own = (item: unknown) => idOf !== undefined && edited !== undefined && idOf(item) === messageId && changeableBy(people.author(item), author) && edited(item, text) !== item;
    // The answers to the old words go (they may repeat them), as with a delete for everyone.
    const answering = this.answering<unknown>(people, messageId, author);
    const matches = (item: unknown) => own(item) || answering(item);
    const next = (item: unknown) => (own(item) ? edited!(item, text) : undefined);
    if (!(await this.store.chats(decl)).includes(chatId)) return 0;
    let changed = 0;
    if (decl.kind === 'chat-log') {
      // Nothing matched: the log is not written at all (an edit anywhere reaches every store).
      await this.store.logFile(decl, chatId).rewrite((items) => items.flatMap((item) => (matches(item) ? (changed++, [next(item)].filter((x) => x !== undefined)) : [item])));
    } else {
      const items = decl.options.people?.items;
      if (!items) return 0;
      const file = this.store.docView(decl, chatId);
      await file.update((doc) => {
        const list = items(doc) as unknown[];
        if (!list.some(matches)) return;
        const kept = list.flatMap((item) => (matches(item) ? (changed++, [next(item)].filter((x) => x !== undefined)) : [item]));
        list.splice(0, list.length, ...kept);
      });
      if (changed) await this.savedAndErased(decl, file);
    }
    if (changed) this.store.changed(decl, chatId);
    return changed;
  }

  private async moveOne(decl: StoreDeclaration, from: string, to: string): Promise<void> {
    if (decl.kind === 'chat-record') return this.store.record(decl).moveChat(from, to);
    if (decl.kind === 'chat-search-log') {
      this.store.settle(decl);
      const logs = this.store.engine(decl);
      if (!(await logs.chatIds()).includes(from)) return;
      await logs.moveChat(from, to);
      this.store.changed(decl, from);
      this.store.changed(decl, to);
      return;
    }
    if (decl.kind === 'doc' && decl.options.parts) return this.moveParts(decl, decl.options.parts, from, to);
    if (decl.kind === 'doc') {
      const byId = decl.options.people?.byId;
      if (!byId) return;
      const file = this.store.docView(decl);
      if (!Object.prototype.hasOwnProperty.call(byId(await file.get()), from)) return;
      await file.update((doc) => {
        const map = byId(doc);
        // The newer id's own entry wins; the old id keeps nothing.
        if (!Object.prototype.hasOwnProperty.call(map, to)) map[to] = map[from];
        delete map[from];
      });
      this.store.changed(decl, undefined);
      await this.savedAndErased(decl, file);
      return;
    }
    if (decl.kind === 'chat-doc' && decl.options.byChat) await this.moveChatKeys(decl, decl.options.byChat, from, to);
    // An owned document's key is no chat: it stays where it is.
    if (decl.kind === 'chat-doc' && decl.options.owner) return;
    if (!(await this.store.chats(decl)).includes(from)) return;
    if (decl.kind === 'chat-log') {
      await this.store.chatLog(decl).move(from, to);
      this.store.changed(decl, from);
      this.store.changed(decl, to);
      return;
    }
    const source = this.store.docView(decl, from);
    const target = this.store.docView(decl, to);
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
      if (!same(existing, decl.initial(to))) throw new Error(`the ${titleOf(decl, this.store.plugin)} of ${from} were kept (${to} has its own)`);
      await target.update(() => moving);
    }
    await this.savedAndErased(decl, target);
    // The old id keeps nothing: its file goes once the new one is on disk.
    await source.remove();
    this.store.changed(decl, from, true);
    this.store.changed(decl, to);
  }

  /** The person with every id the plugin's `owner` documents of them name (a LID they did not write from this time). */
  private async widened(person: PersonIds): Promise<PersonIds> {
    const ids = new Set(person);
    for (const decl of this.store.declarations) {
      if (decl.kind !== 'chat-doc' || !decl.options.owner) continue;
      for (const key of await this.ownedKeys(decl, person)) for (const id of decl.options.owner.ids(await this.store.docView(decl, key).get())) ids.add(id);
    }
    return [...ids];
  }

  /** The keys of the `owner` documents that name one of the person's ids. */
  private async ownedKeys(decl: ChatDocDeclaration<any, any>, person: PersonIds): Promise<string[]> {
    const keys: string[] = [];
    for (const key of await this.store.chats(decl)) {
      const ids = decl.options.owner!.ids(await this.store.docView(decl, key).get());
      if (Array.isArray(ids) && ids.some((id) => typeof id === 'string' && writtenBy(id, person))) keys.push(key);
    }
    return keys;
  }

  /** The person's `owner` documents, each under its key, with its folder's files listed in `files`. */
  private async exportOwned(decl: ChatDocDeclaration<any, any>, person: PersonIds): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    for (const key of await this.ownedKeys(decl, person)) {
      const doc = await this.store.docView(decl, key).get();
      const folder = ownedFolderOf(decl, key);
      out[key] = folder === undefined ? doc : { ...doc, files: await listFolder(path.join(this.store.dataDir, folder)) };
    }
    return out;
  }

  /**
   * Removes an `owner` document whole: its folder first (so a folder that cannot go leaves the document naming it, for
   * the next try), then its file, its copies set aside as unreadable, and the entries of `refersTo` maps naming it.
   */
  async removeOwned(decl: ChatDocDeclaration<any, any>, key: string): Promise<void> {
    const folder = ownedFolderOf(decl, key);
    if (folder !== undefined) await removeFolder(path.join(this.store.dataDir, folder), this.store.domain);
    const file = this.store.docView(decl, key);
    await file.remove();
    if (file.file !== undefined) {
      const setAside = `${path.basename(file.file)}.corrupt-`;
      for (const name of await readdir(path.dirname(file.file)).catch(() => [] as string[])) if (name.startsWith(setAside)) await removeDataFile(path.join(path.dirname(file.file), name));
    }
    this.store.changed(decl, key, true);
    for (const other of this.store.declarations) {
      if (other.kind !== 'doc') continue;
      const refers = other.options.refersTo;
      if (!refers || refers.decl !== decl) continue;
      const map = refers.map(await this.store.docView(other).get());
      const naming = Object.keys(map).filter((k) => map[k] === key);
      if (naming.length) await this.dropEntries(other, refers.map, naming);
    }
  }

  /** The entries of a doc's `refersTo` map that name one of the person's `owner` documents. */
  private async referringTo(decl: DocDeclaration<any>, person: PersonIds): Promise<Array<[string, unknown]>> {
    const refers = decl.options.refersTo;
    if (!refers) return [];
    const keys = new Set(await this.ownedKeys(refers.decl, person));
    return Object.entries(refers.map(await this.store.docView(decl).get())).filter(([, value]) => typeof value === 'string' && keys.has(value));
  }

  /** Deletes entries of a doc's map, waits until on disk and tells the listeners. */
  private async dropEntries(decl: DocDeclaration<any>, map: (doc: any) => Record<string, unknown>, keys: string[]): Promise<void> {
    const file = this.store.docView(decl);
    await file.update((doc) => void keys.forEach((key) => delete map(doc)[key]));
    this.store.changed(decl, undefined);
    await this.savedAndErased(decl, file);
  }

  /** A chat moved: in every document of the kind, the `byChat` map's entry follows it (the new id's own entry kept). */
  private async moveChatKeys(decl: ChatDocDeclaration<any, any>, byChat: (doc: any) => Record<string, unknown> | undefined, from: string, to: string): Promise<void> {
    const has = (map: Record<string, unknown> | undefined, id: string) => map !== undefined && Object.prototype.hasOwnProperty.call(map, id);
    for (const key of await this.store.chats(decl)) {
      const file = this.store.docView(decl, key);
      if (!has(byChat(await file.get()), from)) continue;
      await file.update((doc) => {
        const map = byChat(doc)!;
        if (!has(map, to)) map[to] = map[from];
        delete map[from];
      });
      await this.savedAndErased(decl, file);
      this.store.changed(decl, key);
    }
  }

  /** Whether an entry of a doc's part is the person's: its key is their private chat, or it names one of their ids. */
  private partEntryOf(part: DocPart<unknown>, person: PersonIds): (entry: unknown, chatId?: string) => boolean {
    const digits = new Set(person.map(userPart));
    // A bare number (no `@`) is whoever writes with those digits, phone or LID.
    const names = (id: string | undefined) => id !== undefined && (id.includes('@') ? writtenBy(id, person) : digits.has(userPart(id)));
    return (entry, chatId) => (chatId !== undefined && isPrivateChatOf(chatId, person)) || (part.people?.(entry) ?? []).some(names);
  }

  /** The person's entries of every part that shows them, under the part's name. */
  private async exportParts(decl: DocDeclaration<any>, parts: Record<string, DocPart<unknown>>, person: PersonIds): Promise<Record<string, unknown>> {
    const doc = await this.store.docView(decl).get();
    const out: Record<string, unknown> = {};
    for (const [name, part] of Object.entries(parts)) {
      if (part.privacy === 'none') continue;
      const theirs = this.partEntryOf(part, person);
      out[name] = part.list ? part.list(doc).filter((entry) => theirs(entry)) : Object.fromEntries(Object.entries(part.byChat!(doc)).filter(([chatId, entry]) => theirs(entry, chatId)));
    }
    return out;
  }

  /**
   * Deletes the person's entries of every `delete` part, in place (whoever holds the document sees it), and erases
   * them from every file: also when none was left in the database, since the earlier file kept aside may still name them.
   */
  private async deleteParts(decl: DocDeclaration<any>, parts: Record<string, DocPart<unknown>>, person: PersonIds): Promise<number> {
    const file = this.store.docView(decl);
    let removed = 0;
    await file.update((doc) => {
      for (const part of Object.values(parts)) {
        if ((part.privacy ?? 'delete') !== 'delete') continue;
        const theirs = this.partEntryOf(part, person);
        if (part.list) {
          const list = part.list(doc);
          const kept = list.filter((entry) => !theirs(entry));
          removed += list.length - kept.length;
          list.splice(0, list.length, ...kept);
          continue;
        }
        const map = part.byChat!(doc);
        for (const [chatId, entry] of Object.entries(map)) {
          if (!theirs(entry, chatId)) continue;
          delete map[chatId];
          removed++;
        }
      }
    });
    if (removed) this.store.changed(decl, undefined);
    await this.savedAndErased(decl, file);
    return removed;
  }

  /** A chat moved: the entry of every `byChat` part follows it (`merge` decides when the new id has one). */
  private async moveParts(decl: DocDeclaration<any>, parts: Record<string, DocPart<unknown>>, from: string, to: string): Promise<void> {
    const has = (map: Record<string, unknown>, id: string) => Object.prototype.hasOwnProperty.call(map, id);
    const file = this.store.docView(decl);
    const maps = Object.values(parts).filter((part) => part.byChat);
    const doc = await file.get();
    if (!maps.some((part) => has(part.byChat!(doc), from))) return;
    await file.update((d) => {
      for (const part of maps) {
        const map = part.byChat!(d);
        if (!has(map, from)) continue;
        map[to] = !has(map, to) ? map[from] : part.merge ? part.merge(map[from], map[to]) : map[to];
        delete map[from];
      }
    });
    this.store.changed(decl, undefined);
    await this.savedAndErased(decl, file);
  }
}
