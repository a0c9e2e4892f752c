import { JsonFile } from './json-file.js';
import type { DataSchema } from './schemas.js';

/** One entry of a bounded record: its id within its chat, and when it was noted (for the age bound). */
export interface RecordEntry {
  id: string;
  at: number;
}

/** How a bounded record is kept on disk and bounded. */
export interface BoundedRecordOptions<T extends RecordEntry> {
  /** The file (absolute path). */
  file: string;
  /** The document's one key, holding the entries oldest first (`{ "<field>": [...] }`). */
  field: string;
  schema: DataSchema;
  /** The chat an entry belongs to, and the same entry moved to another chat (the file's own field names stay). */
  chatOf(entry: T): string;
  withChat(entry: T, chatId: string): T;
  /** Entries older than this are forgotten, and never returned. */
  keepMs: number;
  /** At most this many entries are kept (the oldest go first): the file stays small whatever the traffic. */
  keepCount: number;
  /** Writes of notes made within this many milliseconds are joined into one. */
  coalesceMs: number;
  now?: () => number;
}

/**
 * A small record of ids per chat kept in one JSON file, bounded by age and count, schema-checked and written
 * atomically, with a lookup by chat and id. The kernel keeps which messages were answered together and which polls
 * it sent this way; both need the same bounds and the same privacy operations (a person's entries removed, a chat's
 * entries moved), so they live here once.
 *
 * @example
 * const seen = new BoundedRecord<{ id: string; chat: string; at: number }>({
 *   file: path.join(dataDir, 'seen.json'), field: 'seen', schema: SEEN_SCHEMA,
 *   chatOf: (e) => e.chat, withChat: (e, chat) => ({ ...e, chat }),
 *   keepMs: 86_400_000, keepCount: 1000, coalesceMs: 1000,
 * });
 * await seen.add([{ id: 'm1', chat: '123@g.us', at: Date.now() }]);
 * await seen.get('123@g.us', 'm1'); // the entry, while it is kept
 */
export class BoundedRecord<T extends RecordEntry> {
  private readonly file: JsonFile<Record<string, T[]>>;
  private index: Map<string, T> | undefined;
  private readonly now: () => number;

  constructor(private readonly options: BoundedRecordOptions<T>) {
    this.now = options.now ?? Date.now;
    this.file = new JsonFile(options.file, () => ({ [options.field]: [] }), { schema: options.schema, coalesceMs: options.coalesceMs });
  }

  private keyOf(entry: T): string {
    return `${this.options.chatOf(entry)}\0${entry.id}`;
  }

  private indexOf(entries: T[]): Map<string, T> {
    return new Map(entries.map((e) => [this.keyOf(e), e]));
  }

  private async loaded(): Promise<Map<string, T>> {
    if (this.index) return this.index;
    const doc = await this.file.get();
    // A note made while the file loaded already built it.
    if (!this.index) this.index = this.indexOf(doc[this.options.field] ?? []);
    return this.index;
  }

  /**
   * Notes `entries` (a later note of the same chat and id replaces the earlier one), then applies the bounds. Rejects
   * only when the file could not be read at all (a failed write is kept, retried and reported by the file's health).
   */
  async add(entries: T[]): Promise<void> {
    const { field, keepMs, keepCount } = this.options;
    await this.file.update((doc) => {
      const index = (this.index ??= this.indexOf(doc[field] ?? []));
      for (const e of entries) {
        // Deleted first so the newer note counts as the newest for the count bound.
        index.delete(this.keyOf(e));
        index.set(this.keyOf(e), e);
      }
      const oldest = this.now() - keepMs;
      const kept = [...index.values()].filter((e) => e.at >= oldest).slice(-keepCount);
      if (kept.length !== index.size) this.index = this.indexOf(kept);
      doc[field] = kept;
    });
  }

  /** The entry noted for `id` in `chatId`, while it is kept. */
  async get(chatId: string, id: string): Promise<T | undefined> {
    const entry = (await this.loaded()).get(`${chatId}\0${id}`);
    return entry && entry.at >= this.now() - this.options.keepMs ? entry : undefined;
  }

  /** Every entry kept, oldest first. */
  async entries(): Promise<T[]> {
    return [...(await this.loaded()).values()];
  }

  /** Removes the entries `drop` picks; how many went. */
  async removeWhere(drop: (entry: T) => boolean): Promise<number> {
    await this.loaded();
    let removed = 0;
    await this.file.update((doc) => {
      const all = doc[this.options.field] ?? [];
      const kept = all.filter((e) => !drop(e));
      removed = all.length - kept.length;
      doc[this.options.field] = kept;
      this.index = this.indexOf(kept);
    });
    return removed;
  }

  /** Moves every entry of chat `from` to chat `to` (a private chat's LID becoming its phone id), written at once. */
  async moveChat(from: string, to: string): Promise<void> {
    await this.loaded();
    await this.file.update((doc) => {
      const moved = (doc[this.options.field] ?? []).map((e) => (this.options.chatOf(e) === from ? this.options.withChat(e, to) : e));
      doc[this.options.field] = moved;
      this.index = this.indexOf(moved);
    });
    await this.file.flush();
  }

  /** Writes what was noted (a stop, a backup). */
  flush(): Promise<void> {
    return this.file.flush();
  }
}
