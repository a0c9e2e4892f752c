/**
 * Work the transport started and does not wait for (answers being made, read receipts, the login hook), so
 * `idle()` and a graceful stop can wait until all of it has finished.
 *
 * @example
 * const pending = new PendingWork();
 * pending.track(handler(message).catch(log));
 * await pending.settled();
 */
export class PendingWork {
  private readonly running = new Set<Promise<unknown>>();

  track(work: Promise<unknown>): void {
    this.running.add(work);
    void work.finally(() => this.running.delete(work));
  }

  /** Resolves when everything tracked so far has finished. */
  async settled(): Promise<void> {
    await Promise.all([...this.running]);
  }

  get size(): number {
    return this.running.size;
  }
}
