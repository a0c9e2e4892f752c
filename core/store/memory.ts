import path from 'node:path';
import { safeFileName } from './atomic.js';
import { JsonFileCollection } from './json-file.js';

export interface MemoryFact {
  text: string;
  at: number;
  by?: string;
}

/**
 * Per-chat memory: `data/memory/<chat>.json`, facts the model was asked to remember (the `remember` tool).
 *
 * @example await memories.remember(chatId, 'Ana prefers short answers', senderId);
 */
export class MemoryStore {
  private readonly docs: JsonFileCollection<{ facts: MemoryFact[] }>;
  constructor(dataDir: string, private readonly maxFacts = 100, onCorrupt?: (file: string, movedTo: string, error: Error) => void) {
    this.docs = new JsonFileCollection((chat) => path.join(dataDir, 'memory', `${safeFileName(chat)}.json`), () => ({ facts: [] }), onCorrupt);
  }

  async facts(chatId: string): Promise<MemoryFact[]> {
    const doc = await this.docs.doc(chatId).get();
    return Array.isArray(doc.facts) ? doc.facts : [];
  }

  async remember(chatId: string, text: string, by?: string): Promise<void> {
    const clean = text.trim().slice(0, 500);
    if (!clean) return;
    await this.docs.doc(chatId).update((doc) => {
      if (!Array.isArray(doc.facts)) doc.facts = [];
      if (doc.facts.some((f) => f.text === clean)) return;
      doc.facts.push({ text: clean, at: Date.now(), by });
      if (doc.facts.length > this.maxFacts) doc.facts.splice(0, doc.facts.length - this.maxFacts);
    });
  }

  /**
   * Forgets facts of one chat: by 1-based number as `.forget` lists them, every fact (`'all'`), or those containing a
   * text (the `forget` tool: "forget that I like tea"). Returns the facts removed.
   */
  async forget(chatId: string, which: number | 'all' | { containing: string }): Promise<MemoryFact[]> {
    let removed: MemoryFact[] = [];
    await this.docs.doc(chatId).update((doc) => {
      const facts = Array.isArray(doc.facts) ? doc.facts : [];
      if (which === 'all') removed = facts.splice(0);
      else if (typeof which === 'number') removed = which >= 1 && which <= facts.length ? facts.splice(which - 1, 1) : [];
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
