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

  flush(): Promise<void> {
    return this.docs.flush();
  }
}
