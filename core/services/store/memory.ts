import path from 'node:path';
import { safeFileName } from './atomic.js';
import { JsonFileCollection, type OnCorrupt } from './json-file.js';
import { MEMORY_SCHEMA } from './schemas.js';

export interface MemoryFact {
  text: string;
  at: number;
  by?: string;
}

/** Thrown by `remember` when the chat's memory and its archive are both full: nothing is pushed out. */
export class MemoryFullError extends Error {
  constructor(readonly maxFacts: number) {
    super(`this chat's memory is full (${maxFacts} facts and as many again archived); an admin can remove some with .forget`);
    this.name = 'MemoryFullError';
  }
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
    this.docs = new JsonFileCollection((chat) => path.join(dataDir, 'memory', `${safeFileName(chat)}.json`), () => ({ facts: [] }), { schema: MEMORY_SCHEMA, onCorrupt });
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

  flush(): Promise<void> {
    return this.docs.flush();
  }
}
