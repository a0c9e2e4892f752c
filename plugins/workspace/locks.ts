/**
 * Serialises work per key (one workspace: file edits never race a running script) and caps how many runs go at
 * once across all keys; the rest wait their turn.
 *
 * @example
 * const locks = new Locks(() => 2);
 * await locks.exclusive('ws1', () => writeFile());
 * await locks.run('ws1', () => runScript());
 */
export class Locks {
  private readonly tails = new Map<string, Promise<unknown>>();
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly maxRuns: () => number) {}

  /** Runs `work` when nothing else holds `key`. */
  exclusive<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(work, work);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** True while something holds `key`. */
  busy(key: string): boolean {
    return this.tails.has(key);
  }

  /** Like `exclusive`, and also waits for one of the global run slots. */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    return this.exclusive(key, async () => {
      await this.acquire();
      try {
        return await work();
      } finally {
        this.release();
      }
    });
  }

  private acquire(): Promise<void> {
    if (this.running < this.maxRuns()) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(() => {
      this.running++;
      resolve();
    }));
  }

  private release(): void {
    this.running--;
    const next = this.waiting.shift();
    if (next) next();
  }
}
