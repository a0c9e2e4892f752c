/**
 * The signatures of requests accepted within the signature window: the same signed request sent again (a replay,
 * or a sender's retry of one that was delivered) is refused while its timestamp would still pass. Entries leave once
 * their window ends, so the cache holds at most what was accepted in one window.
 *
 * @example if (!cache.take(signature, timestampMs)) refuse('replayed');
 */
export class ReplayCache {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly windowMs: number,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** Records `signature` (of a request stamped `stampedAt`); false when it was already taken within the window. */
  take(signature: string, stampedAt: number): boolean {
    const now = this.now();
    for (const [key, until] of this.seen) if (until <= now) this.seen.delete(key);
    if (this.seen.has(signature)) return false;
    // Kept until the timestamp itself leaves the window: after that the timestamp check refuses it anyway.
    this.seen.set(signature, Math.max(stampedAt, now) + this.windowMs);
    return true;
  }

  get size(): number {
    return this.seen.size;
  }
}
