import { appendFile, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { BufferJSON, PLACEHOLDER_MAX_AGE_SECONDS, proto } from '@whiskeysockets/baileys';
import { writeJsonLinesAtomic } from './jsonl.js';

/** How long a sent message can be asked for again: WhatsApp's own window for re-requests (14 days). */
export const RESEND_WINDOW_MS = PLACEHOLDER_MAX_AGE_SECONDS * 1000;

/** One message the bot sent, as kept for resends. */
export interface SentEntry {
  id: string;
  chat: string;
  at: number;
  message: proto.IMessage;
  /** The sender id of the message it answered (its `.mydata` delete removes this one), when known. */
  about?: string;
}

/**
 * What the bot sent (texts, media, edits, reactions), kept on disk so Baileys' `getMessage` can answer another
 * device's retry request after a restart (else that device shows "waiting for this message" forever).
 * `data/whatsapp/sent-messages.jsonl` is append-only (one line per message); on load every line is validated
 * (a broken line, e.g. cut by a crash, is skipped), entries older than the window are dropped, and the file is
 * rewritten atomically when more than half of it is dead weight.
 *
 * @example
 * const store = await ResendStore.open('data'); await store.add(sent.key.id, chat, sent.message);
 * makeWASocket({ getMessage: async (key) => store.get(key.id) });
 */
export class ResendStore {
  private readonly entries = new Map<string, SentEntry>();
  private lines = 0;
  private writing: Promise<void> = Promise.resolve();

  private constructor(readonly file: string, private readonly windowMs: number, private readonly maxEntries: number, private readonly onError: (err: Error) => void, private readonly now: () => number) {}

  static async open(dataDir: string, options: { windowMs?: number; maxEntries?: number; onError?: (err: Error) => void; now?: () => number } = {}): Promise<ResendStore> {
    const store = new ResendStore(path.join(dataDir, 'whatsapp', 'sent-messages.jsonl'), options.windowMs ?? RESEND_WINDOW_MS, options.maxEntries ?? 5000, options.onError ?? (() => undefined), options.now ?? (() => Date.now()));
    await store.load();
    return store;
  }

  private async load(): Promise<void> {
    let text = '';
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.onError(err as Error);
      return;
    }
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      this.lines++;
      const entry = parseEntry(line);
      if (entry) this.put(entry);
    }
    this.prune();
    if (this.lines > 2 * this.entries.size) await this.compact();
  }

  private put(entry: SentEntry): void {
    this.entries.delete(entry.id);
    this.entries.set(entry.id, entry);
  }

  private prune(): void {
    const oldest = this.now() - this.windowMs;
    for (const [id, e] of this.entries) if (e.at < oldest) this.entries.delete(id);
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }

  /** Records a sent message (any kind: text, media, edit, reaction). */
  add(id: string | null | undefined, chat: string, message: proto.IMessage | null | undefined, about?: string): Promise<void> {
    if (!id || !message) return this.writing;
    const entry: SentEntry = { id, chat, at: this.now(), message, ...(about ? { about } : {}) };
    this.put(entry);
    this.prune();
    const line = `${JSON.stringify({ ...entry, message: proto.Message.toObject(proto.Message.fromObject(message), { bytes: Buffer, longs: Number }) }, BufferJSON.replacer)}\n`;
    this.lines++;
    this.writing = this.writing
      .then(async () => {
        if (this.lines > 2 * this.maxEntries) return this.compact();
        await mkdir(path.dirname(this.file), { recursive: true });
        await appendFile(this.file, line, { mode: 0o600 });
      })
      .catch((err) => this.onError(err as Error));
    return this.writing;
  }

  /** Whom a kept message answered (see `SentEntry.about`). */
  answered(id: string): string | undefined {
    return this.entries.get(id)?.about;
  }

  get(id: string | null | undefined): proto.IMessage | undefined {
    if (!id) return undefined;
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    if (entry.at < this.now() - this.windowMs) {
      this.entries.delete(id);
      return undefined;
    }
    return entry.message;
  }

  private async compact(): Promise<void> {
    this.prune();
    const lines = [...this.entries.values()].map((e) => ({ ...e, message: proto.Message.toObject(proto.Message.fromObject(e.message), { bytes: Buffer, longs: Number }) }));
    await writeJsonLinesAtomic(this.file, lines, BufferJSON.replacer);
    this.lines = lines.length;
  }

  /** The messages kept that match (the privacy export). */
  where(matches: (entry: SentEntry) => boolean): SentEntry[] {
    this.prune();
    return [...this.entries.values()].filter(matches);
  }

  /**
   * Forgets the messages that match (a privacy delete, a message deleted for everyone or edited that they quote) and
   * rewrites the file atomically with only the messages kept, so neither they nor lines of messages already past the
   * window are on disk any more. Resolves once that is on disk; rejects when it could not be written.
   */
  async removeWhere(matches: (entry: SentEntry) => boolean, options: { onlyOnMatch?: boolean } = {}): Promise<number> {
    let removed = 0;
    for (const [id, entry] of this.entries) {
      if (!matches(entry)) continue;
      this.entries.delete(id);
      removed++;
    }
    // An edit or delete for everyone (`onlyOnMatch`) rewrites only when it took something out: they come often (every
    // edit anyone makes) and mostly match nothing. A privacy delete also rewrites for lines of messages already past
    // the window (or sent again), still in the file until the next compaction.
    if (!removed && (options.onlyOnMatch || this.lines <= this.entries.size)) return 0;
    const run = this.writing.then(() => this.compact());
    this.writing = run.catch((err) => this.onError(err as Error));
    await run;
    return removed;
  }

  get size(): number {
    return this.entries.size;
  }

  async flush(): Promise<void> {
    await this.writing;
  }
}

function parseEntry(line: string): SentEntry | undefined {
  try {
    const value = JSON.parse(line, BufferJSON.reviver) as Partial<SentEntry>;
    if (!value || typeof value.id !== 'string' || typeof value.chat !== 'string' || typeof value.at !== 'number' || !value.message || typeof value.message !== 'object') return undefined;
    const message = proto.Message.fromObject(value.message);
    // Encoding fails on a message whose fields have the wrong types; an empty message is no message.
    if (!proto.Message.encode(message).finish().length) return undefined;
    return { id: value.id, chat: value.chat, at: value.at, message, ...(typeof value.about === 'string' ? { about: value.about } : {}) };
  } catch {
    return undefined;
  }
}
