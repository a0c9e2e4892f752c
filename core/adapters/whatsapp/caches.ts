import type { CacheStore } from '@whiskeysockets/baileys';

/**
 * A Map that keeps only the `capacity` most recently set entries (recent messages for quoting, reacting,
 * editing and Baileys' `getMessage`).
 *
 * @example const recent = new BoundedMap<string, number>(2); recent.set('a', 1);
 */
export class BoundedMap<K, V> {
  private readonly map = new Map<K, V>();
  constructor(private readonly capacity: number) {}
  get(key: K): V | undefined {
    return this.map.get(key);
  }
  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    while (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as K);
  }
  delete(key: K): void {
    this.map.delete(key);
  }
  get size(): number {
    return this.map.size;
  }
}

/**
 * A small in-memory cache with a time-to-live, shaped like Baileys' `CacheStore` (used as the message retry
 * counter cache and for group metadata). Expired entries are dropped when read.
 *
 * @example const retries = new TtlCache(60 * 60_000); makeWASocket({ msgRetryCounterCache: retries, … });
 */
export class TtlCache implements CacheStore {
  private readonly entries = new Map<string, { value: unknown; until: number }>();
  constructor(private readonly ttlMs: number, private readonly maxEntries = 10_000, private readonly now: () => number = Date.now) {}
  get<T>(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value as T;
  }
  set<T>(key: string, value: T): void {
    this.entries.delete(key);
    this.entries.set(key, { value, until: this.now() + this.ttlMs });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }
  del(key: string): void {
    this.entries.delete(key);
  }
  flushAll(): void {
    this.entries.clear();
  }
}
