import type { LinkRead } from './read-link.js';

/**
 * Links read lately, by address (fragment left out), shared by every chat: a link sent again within `ttlMs` costs no
 * second fetch, and one asked for twice at once is fetched once. Failures are not kept (the next ask tries again).
 * Held in memory only, at most `maxEntries` (the oldest go first), so nothing of a page is written to disk.
 */
export class LinkCache {
  private readonly entries = new Map<string, { at: number; read: Promise<LinkRead> }>();

  constructor(private readonly maxEntries = 200) {}

  /** The cached read of `key` when younger than `ttlMs`, else `load()` (kept once it succeeds). */
  get(key: string, ttlMs: number, load: () => Promise<LinkRead>): Promise<LinkRead> {
    const now = Date.now();
    const found = this.entries.get(key);
    if (found && now - found.at < ttlMs) return found.read;
    this.entries.delete(key);
    const read = load();
    this.entries.set(key, { at: now, read });
    read.catch(() => {
      if (this.entries.get(key)?.read === read) this.entries.delete(key);
    });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return read;
  }

  clear(): void {
    this.entries.clear();
  }
}
