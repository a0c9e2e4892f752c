import { rm } from 'node:fs/promises';
import path from 'node:path';
import { safeFileName } from '../../api/file-name.js';
import { mergeEntries } from './history.js';
import { JsonFileCollection, type OnCorrupt } from './json-file.js';
import { MEMORY_SCHEMA } from './schemas.js';
import { DataWriteError, MemoryFullError } from '../../api/errors.js';

export interface MemoryFact {
  text: string;
  at: number;
  by?: string;
}

/**
 * Per-chat memory: `data/memory/<chat>.json`, facts the model was asked to remember (the `remember` tool). The newest
 * `maxFacts` are in the prompt; older ones move to the chat's archive (same file, `archived`), which is kept and
 * covered by `.mydata` but not shown to the model — so a flood of new facts never wipes stored ones. With the archive
 * full too (`maxArchived`), new facts are refused.
 *
 * @example await memories.remember(chatId, 'Ana prefers short answers', senderId);
 */
export class MemoryStore {
  private readonly docs: JsonFileCollection<{ facts: MemoryFact[]; archived?: MemoryFact[] }>;
  constructor(readonly dataDir: string, private readonly maxFacts = 100, onCorrupt?: OnCorrupt, private readonly maxArchived = 10 * maxFacts) {
    this.docs = new JsonFileCollection((chat) => this.fileOf(chat), () => ({ facts: [] }), { schema: MEMORY_SCHEMA, onCorrupt });
  }

  private fileOf(chatId: string): string {
    return path.join(this.dataDir, 'memory', `${safeFileName(chatId)}.json`);
  }

  /** The chat's archived facts (older ones moved out of the prompt when memory was full), oldest first. */
  async archived(chatId: string): Promise<MemoryFact[]> {
    const doc = await this.docs.doc(chatId).get();
    return Array.isArray(doc.archived) ? doc.archived : [];
  }

  async facts(chatId: string): Promise<MemoryFact[]> {
    const doc = await this.docs.doc(chatId).get();
    return Array.isArray(doc.facts) ? doc.facts : [];
  }

  /**
   * Stores a fact and waits until it is on disk: rejects (DataWriteError) when it could not be saved, so the user
   * is never told "remembered" for a fact that a restart would lose.
   */
  async remember(chatId: string, text: string, by?: string): Promise<void> {
    const clean = text.trim().slice(0, 500);
    if (!clean) return;
    const doc = this.docs.doc(chatId);
    let full = false;
    await doc.update((doc) => {
      if (!Array.isArray(doc.facts)) doc.facts = [];
      if (doc.facts.some((f) => f.text === clean)) return;
      const archived = Array.isArray(doc.archived) ? doc.archived : [];
      const moving = Math.max(0, doc.facts.length + 1 - this.maxFacts);
      if (archived.length + moving > this.maxArchived) {
        full = true;
        return;
      }
      doc.facts.push({ text: clean, at: Date.now(), by });
      // The oldest facts move to the archive: kept, never dropped by a newer one.
      if (moving) doc.archived = [...archived, ...doc.facts.splice(0, moving)];
    });
    if (full) throw new MemoryFullError(this.maxFacts);
    await doc.flush();
  }

  /** Removes the facts of one chat that match (privacy delete) and waits until that is on disk. Returns how many. */
  async removeWhere(chatId: string, matches: (fact: MemoryFact) => boolean): Promise<number> {
    const doc = this.docs.doc(chatId);
    let removed = 0;
    await doc.update((d) => {
      const kept = d.facts.filter((f) => !matches(f));
      const archived = Array.isArray(d.archived) ? d.archived : [];
      const keptArchived = archived.filter((f) => !matches(f));
      removed = d.facts.length - kept.length + archived.length - keptArchived.length;
      d.facts = kept;
      if (d.archived) d.archived = keptArchived;
    });
    await doc.flush();
    return removed;
  }

  /**
   * Forgets facts of one chat: by 1-based number as `.forget` lists them, every fact (`'all'`), or those containing a
   * text (the `forget` tool: "forget that I like tea"). Returns the facts removed.
   */
  async forget(chatId: string, which: number | 'all' | { containing: string }): Promise<MemoryFact[]> {
    let removed: MemoryFact[] = [];
    await this.docs.doc(chatId).update((doc) => {
      const facts = Array.isArray(doc.facts) ? doc.facts : [];
      if (which === 'all') {
        removed = [...(doc.archived ?? []), ...facts.splice(0)];
        if (doc.archived) doc.archived = [];
      } else if (typeof which === 'number') removed = which >= 1 && which <= facts.length ? facts.splice(which - 1, 1) : [];
      else {
        const needle = which.containing.trim().toLowerCase();
        if (!needle) return;
        removed = facts.filter((f) => f.text.toLowerCase().includes(needle));
        doc.facts = facts.filter((f) => !removed.includes(f));
        return;
      }
      doc.facts = facts;
    });
    return removed;
  }

  /**
   * A private chat is known as `to` from now on (WhatsApp moved it from its LID to the phone number): the facts of
   * `from` join those of `to`, in time order, a fact `to` already holds (same text) taken once; beyond `maxFacts` the
   * oldest go to the archive as usual (never dropped, even past the archive's bound: `remember` then refuses until
   * some are forgotten). `to`'s file is written before `from`'s is removed, and `from` is forgotten in memory, so no
   * pending write brings its file back. Rejects when `to` cannot be written (`from` stays).
   */
  async moveChat(from: string, to: string): Promise<void> {
    if (from === to) return;
    const source = this.docs.doc(from);
    await source.flush();
    const moving = await source.get();
    const facts = Array.isArray(moving.facts) ? moving.facts : [];
    const archived = Array.isArray(moving.archived) ? moving.archived : [];
    if (facts.length || archived.length) {
      const target = this.docs.doc(to);
      await target.update((doc) => {
        const known = new Set([...(doc.facts ?? []), ...(doc.archived ?? [])].map((f) => f.text));
        const fresh = (list: MemoryFact[]) => list.filter((f) => !known.has(f.text));
        const all = mergeEntries(Array.isArray(doc.facts) ? doc.facts : [], fresh(facts));
        const overflow = all.splice(0, Math.max(0, all.length - this.maxFacts));
        const old = mergeEntries(mergeEntries(Array.isArray(doc.archived) ? doc.archived : [], fresh(archived)), overflow);
        doc.facts = all;
        if (old.length) doc.archived = old;
      });
      await target.flush();
    }
    this.docs.drop(from);
    await rm(this.fileOf(from), { force: true });
  }

  flush(): Promise<void> {
    return this.docs.flush();
  }
}
