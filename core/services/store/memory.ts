import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { safeFileName } from '../../api/file-name.js';
import { mergeEntries } from './history.js';
import { domainFor, setAsideUnreadable } from './data-domain.js';
import { databaseFor, MIGRATED_DIR, type StoreDatabase } from './database.js';
import { checkDocument, MEMORY_SCHEMA } from './schemas.js';
import { Type } from '#typebox';
import { tableOf, type ChatLogEngine } from './sql-chat-log.js';
import { Store } from './store-declarations.js';
import { DataWriteError, MemoryFullError } from '../../api/errors.js';

export interface MemoryFact {
  text: string;
  at: number;
  by?: string;
}

/**
 * The remembered facts as the core declares them (`core` namespace of the store database; rows kept by `MemoryStore`,
 * see `chatLog()`): a person's `.mydata` holds the facts of their private chat (the archived ones too) and those they
 * stored in groups, and deletes them; a chat's facts move with it.
 */
export const MEMORY_STORE = Store.chatLog('memory', Type.Object({ text: Type.String(), at: Type.Number(), by: Type.Optional(Type.String()) }), {
  title: 'remembered facts',
  section: 'remembered facts',
  exportAs: '',
  people: { author: (f) => f.by },
});

/** One chat's memory: the facts in the prompt, and the archive of older ones. */
interface ChatMemory {
  facts: MemoryFact[];
  archived: MemoryFact[];
}

/** The folder of the earlier layout (`data/memory/<chat>.json`), relative to the data folder. */
const EARLIER_FOLDER = 'memory';

/** How many chats' facts MemoryStore keeps in memory at most (the chats answered lately). */
const KNOWN_CHATS = 1000;

/**
 * Per-chat memory: facts the model was asked to remember (the `remember` tool), rows of one table of the store
 * database (`core` namespace). The newest `maxFacts` are in the prompt; older ones move to the chat's archive, which is
 * kept and covered by `.mydata` but not shown to the model — so a flood of new facts never wipes stored ones. With the
 * archive full too (`maxArchived`), new facts are refused.
 *
 * Every change is one transaction; one that removes facts is checkpointed out of the WAL, so a forgotten fact's words
 * are in no file. The JSON files of earlier versions (`data/memory/<chat>.json`) are taken in at first use (all of
 * them) and whenever one turns up for a chat it reads: each with the row recording it (by its content) in one
 * transaction, then moved under `data/migrated/memory/` (a crash between the two only moves it at the next use). A
 * file that does not parse or match is set aside with its bytes kept (`<name>.corrupt-<time>`), as before.
 *
 * @example await memories.remember(chatId, 'Ana prefers short answers', senderId);
 */
export class MemoryStore {
  private readonly table = tableOf('facts', 'core', 'memory');
  private readyFor: StoreDatabase | undefined;
  /**
   * Each chat's facts as last read, for the connection they were read on: every answer reads its chat's facts, which
   * change only through `change` and `takeIn` (each drops the chats it touched). Bounded: emptied past KNOWN_CHATS.
   */
  private readonly known = new Map<string, MemoryFact[]>();
  private knownFor: StoreDatabase | undefined;

  constructor(readonly dataDir: string, private readonly maxFacts = 100, private readonly maxArchived = 10 * maxFacts) {}

  /** The database (opened again after the app closed it at a stop), with the table made and earlier files taken in. */
  private get db(): StoreDatabase {
    const db = databaseFor(this.dataDir);
    if (this.readyFor !== db) {
      db.exec(
        `CREATE TABLE IF NOT EXISTS ${this.table} (seq INTEGER PRIMARY KEY AUTOINCREMENT, chat TEXT NOT NULL, archived INTEGER NOT NULL, text TEXT NOT NULL, at INTEGER NOT NULL, by TEXT);` +
          `CREATE INDEX IF NOT EXISTS ${this.table.slice(0, -1)}:chat" ON ${this.table} (chat, seq);`,
      );
      this.readyFor = db;
      const folder = path.join(this.dataDir, EARLIER_FOLDER);
      const names = existsSync(folder) ? readdirSync(folder).filter((n) => n.endsWith('.json')) : [];
      for (const name of names) this.takeIn(db, path.join(folder, name), decodeURIComponent(name.slice(0, -'.json'.length)));
    }
    return db;
  }

  /** The database, with the chat's file of the earlier layout taken in when one is there (dropped in, or restored). */
  private dbFor(chatId: string): StoreDatabase {
    const db = this.db;
    const file = this.fileOf(chatId);
    if (existsSync(file)) this.takeIn(db, file, chatId);
    return db;
  }

  private fileOf(chatId: string): string {
    // Asked at every answer (its chat's facts): each chat's path is made once.
    let file = this.files.get(chatId);
    if (file === undefined) {
      if (this.files.size >= KNOWN_CHATS) this.files.clear();
      this.files.set(chatId, (file = path.join(this.dataDir, EARLIER_FOLDER, `${safeFileName(chatId)}.json`)));
    }
    return file;
  }

  /** The file of the earlier layout each chat would have (see `fileOf`). */
  private readonly files = new Map<string, string>();

  private keptAside(chatId: string): string {
    return path.join(this.dataDir, MIGRATED_DIR, EARLIER_FOLDER, `${safeFileName(chatId)}.json`);
  }

  /**
   * Takes in one file of the earlier layout: merged into what the chat holds (a fact held already is taken once), with
   * the row recording it in one transaction; then the file moves aside. A file already taken in (a crash before it
   * moved) is only moved. A file that is not a memory document is set aside with its bytes kept.
   */
  private takeIn(db: StoreDatabase, file: string, chatId: string): void {
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      setAsideUnreadable(file, `cannot be read: ${(err as Error).message}`);
      return;
    }
    let doc: ChatMemory;
    try {
      const checked = checkDocument(MEMORY_SCHEMA, JSON.parse(bytes.toString('utf8')));
      if (!checked.ok) throw new Error(checked.reason);
      doc = { facts: (checked.value.facts as MemoryFact[]) ?? [], archived: (checked.value.archived as MemoryFact[] | undefined) ?? [] };
      if (checked.migratedFrom !== undefined) domainFor(file).health.migrated(file, checked.migratedFrom, MEMORY_SCHEMA.version);
    } catch (err) {
      setAsideUnreadable(file, (err as Error).message);
      return;
    }
    const what = `${this.table}/${path.basename(file)}:${createHash('sha256').update(bytes).digest('hex')}`;
    this.known.delete(chatId);
    db.takeInOnce(what, () => this.replace(db, chatId, this.merged(this.read(db, chatId), doc)));
    mkdirSync(path.dirname(this.keptAside(chatId)), { recursive: true, mode: 0o700 });
    renameSync(file, this.keptAside(chatId));
  }

  private read(db: StoreDatabase, chatId: string): ChatMemory {
    const rows = db.all<{ archived: number; text: string; at: number; by: string | null }>(`SELECT archived, text, at, by FROM ${this.table} WHERE chat = ? ORDER BY seq`, [chatId]);
    const out: ChatMemory = { facts: [], archived: [] };
    for (const row of rows) (row.archived ? out.archived : out.facts).push(row.by === null ? { text: row.text, at: row.at } : { text: row.text, at: row.at, by: row.by });
    return out;
  }

  /** The chat's facts become `memory` (the archive first, each in order). */
  private replace(db: StoreDatabase, chatId: string, memory: ChatMemory): void {
    db.run(`DELETE FROM ${this.table} WHERE chat = ?`, [chatId]);
    for (const [archived, list] of [[1, memory.archived], [0, memory.facts]] as const) {
      for (const f of list) db.run(`INSERT INTO ${this.table} (chat, archived, text, at, by) VALUES (?, ?, ?, ?, ?)`, [chatId, archived, f.text, f.at, f.by ?? null]);
    }
  }

  /**
   * `incoming` joined to `held` in time order, a fact `held` has already (same text) taken once; beyond `maxFacts`
   * the oldest go to the archive (never dropped, even past the archive's bound).
   */
  private merged(held: ChatMemory, incoming: ChatMemory): ChatMemory {
    const known = new Set([...held.facts, ...held.archived].map((f) => f.text));
    const fresh = (list: MemoryFact[]) => list.filter((f) => !known.has(f.text));
    const facts = mergeEntries(held.facts, fresh(incoming.facts));
    const overflow = facts.splice(0, Math.max(0, facts.length - this.maxFacts));
    return { facts, archived: mergeEntries(mergeEntries(held.archived, fresh(incoming.archived)), overflow) };
  }

  /**
   * Changes chats' memories in one transaction once a backup holding the writes lets it go; `change` returns the new
   * memory of each chat it changes. A write that fails is reported and rejects (DataWriteError); what removes facts is
   * checkpointed out of the WAL, and the chats' copies of the earlier layout (older now) go.
   */
  private async change(chats: string[], change: (memories: ChatMemory[]) => Array<ChatMemory | undefined>, removes: boolean): Promise<void> {
    const domain = domainFor(this.dataDir);
    await domain.gate.enter();
    let db: StoreDatabase | undefined;
    try {
      for (const chat of chats) db = this.dbFor(chat);
      const open = db!;
      let changed = false;
      open.transaction(() => {
        const next = change(chats.map((chat) => this.read(open, chat)));
        next.forEach((memory, i) => {
          if (!memory) return;
          changed = true;
          this.replace(open, chats[i], memory);
        });
      });
      domain.health.writeRecovered(open.file);
      if (changed && removes) {
        open.erase();
        for (const chat of chats) rmSync(this.keptAside(chat), { force: true });
      }
    } catch (err) {
      if (err instanceof MemoryFullError) throw err;
      const file = db?.file ?? path.join(this.dataDir, 'store.db');
      domain.health.writeFailed(file, err);
      throw new DataWriteError([file], err);
    } finally {
      for (const chat of chats) this.known.delete(chat);
      domain.gate.leave();
    }
  }

  /** The chat's archived facts (older ones moved out of the prompt when memory was full), oldest first. */
  async archived(chatId: string): Promise<MemoryFact[]> {
    return this.read(this.dbFor(chatId), chatId).archived;
  }

  async facts(chatId: string): Promise<MemoryFact[]> {
    const db = this.dbFor(chatId);
    if (this.knownFor !== db || this.known.size >= KNOWN_CHATS) {
      this.known.clear();
      this.knownFor = db;
    }
    let facts = this.known.get(chatId);
    if (!facts) this.known.set(chatId, (facts = this.read(db, chatId).facts));
    // A copy: what the caller does with its list never changes the one kept here.
    return facts.slice();
  }

  /** The chats with facts or archived facts. */
  async chats(): Promise<string[]> {
    return this.db.all<{ chat: string }>(`SELECT DISTINCT chat FROM ${this.table}`).map((r) => r.chat);
  }

  /**
   * Stores a fact and resolves once it is in the database: rejects (DataWriteError) when it could not be saved, so the
   * user is never told "remembered" for a fact that a restart would lose.
   */
  async remember(chatId: string, text: string, by?: string): Promise<void> {
    const clean = text.trim().slice(0, 500);
    if (!clean) return;
    await this.change(
      [chatId],
      ([memory]) => {
        if (memory.facts.some((f) => f.text === clean)) return [undefined];
        const moving = Math.max(0, memory.facts.length + 1 - this.maxFacts);
        if (memory.archived.length + moving > this.maxArchived) throw new MemoryFullError(this.maxFacts);
        const facts = [...memory.facts, by === undefined ? { text: clean, at: Date.now() } : { text: clean, at: Date.now(), by }];
        // The oldest facts move to the archive: kept, never dropped by a newer one.
        return [{ facts: facts.slice(moving), archived: [...memory.archived, ...facts.slice(0, moving)] }];
      },
      false,
    );
  }

  /** Removes the facts of one chat that match (privacy delete), gone from every file. Returns how many. */
  async removeWhere(chatId: string, matches: (fact: MemoryFact) => boolean): Promise<number> {
    let removed = 0;
    await this.change(
      [chatId],
      ([memory]) => {
        const kept = { facts: memory.facts.filter((f) => !matches(f)), archived: memory.archived.filter((f) => !matches(f)) };
        removed = memory.facts.length + memory.archived.length - kept.facts.length - kept.archived.length;
        return [removed ? kept : undefined];
      },
      true,
    );
    return removed;
  }

  /**
   * Forgets facts of one chat: by 1-based number as `.forget` lists them, every fact (`'all'`), or those containing a
   * text (the `forget` tool: "forget that I like tea"). Returns the facts removed.
   */
  async forget(chatId: string, which: number | 'all' | { containing: string }): Promise<MemoryFact[]> {
    let removed: MemoryFact[] = [];
    await this.change(
      [chatId],
      ([memory]) => {
        if (which === 'all') {
          removed = [...memory.archived, ...memory.facts];
          return [removed.length ? { facts: [], archived: [] } : undefined];
        }
        if (typeof which === 'number') removed = which >= 1 && which <= memory.facts.length ? [memory.facts[which - 1]] : [];
        else {
          const needle = which.containing.trim().toLowerCase();
          removed = needle ? memory.facts.filter((f) => f.text.toLowerCase().includes(needle)) : [];
        }
        return [removed.length ? { facts: memory.facts.filter((f) => !removed.includes(f)), archived: memory.archived } : undefined];
      },
      true,
    );
    return removed;
  }

  /**
   * A private chat is known as `to` from now on (WhatsApp moved it from its LID to the phone number): the facts of
   * `from` join those of `to`, in time order, a fact `to` already holds (same text) taken once; beyond `maxFacts` the
   * oldest go to the archive as usual (never dropped, even past the archive's bound: `remember` then refuses until
   * some are forgotten). One transaction: nothing stays under `from`, and running it again adds nothing.
   */
  async moveChat(from: string, to: string): Promise<void> {
    if (from === to) return;
    await this.change(
      [from, to],
      ([moving, held]) => (moving.facts.length || moving.archived.length ? [{ facts: [], archived: [] }, this.merged(held, moving)] : [undefined, undefined]),
      true,
    );
  }

  /** Every change is in the database when its promise resolved: nothing waits here. */
  async flush(): Promise<void> {}

  /** The facts as the engine of `MEMORY_STORE`: a chat's items are its archived facts, then those in the prompt. */
  chatLog(): ChatLogEngine<MemoryFact> {
    const read = async (chatId: string) => [...(await this.archived(chatId)), ...(await this.facts(chatId))];
    return {
      chats: () => this.chats(),
      chat: (chatId) => ({
        append: (fact) => this.remember(chatId, fact.text, fact.by),
        read: () => read(chatId),
        // The facts `keep` leaves out go (a fact is never changed in place: its words are the model's to remember).
        rewrite: async (keep) => {
          const kept = new Map<string, number>();
          for (const fact of keep(await read(chatId))) kept.set(JSON.stringify(fact), (kept.get(JSON.stringify(fact)) ?? 0) + 1);
          return this.removeWhere(chatId, (fact) => {
            const copies = kept.get(JSON.stringify(fact)) ?? 0;
            if (copies) kept.set(JSON.stringify(fact), copies - 1);
            return !copies;
          });
        },
        removeWhere: (matches) => this.removeWhere(chatId, matches),
        flush: () => this.flush(),
      }),
      move: (from, to) => this.moveChat(from, to),
      // Bounded by count (`maxFacts`, then the archive), not by age.
      prune: async () => 0,
    };
  }
}
