import { readFile } from 'node:fs/promises';
import { appendToFile, removeDataFile, writeFileAtomicSafe } from './atomic.js';
import type { DataDomain } from './data-domain.js';
import { checkValue } from './schemas.js';
import type { ChatLogDeclaration } from './store-declarations.js';

/** An append-only JSON-lines file; every operation on it runs in order (an append never lands inside a rewrite). */
export class LogFile<I> {
  private queue: Promise<unknown> = Promise.resolve();
  constructor(readonly file: string, private readonly decl: ChatLogDeclaration<I>, private readonly domain: DataDomain, private readonly title: string) {}

  private run<R>(work: () => Promise<R>): Promise<R> {
    const next = this.queue.then(work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  append(item: I): Promise<void> {
    const problem = checkValue(this.decl.schema, item);
    if (problem !== undefined) return Promise.reject(new TypeError(`${this.title}: the item does not match its schema (${problem})`));
    return this.run(() => appendToFile(this.file, JSON.stringify(item) + '\n'));
  }

  read(): Promise<I[]> {
    return this.run(() => this.readNow());
  }

  private async readNow(): Promise<I[]> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.domain.health.skippedLines(this.file, 0, `cannot be read: ${(err as Error).message}`);
      return [];
    }
    const items: I[] = [];
    let bad = 0;
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        const item = JSON.parse(line) as I;
        if (checkValue(this.decl.schema, item) === undefined) items.push(item);
        else bad++;
      } catch {
        bad++;
      }
    }
    if (bad) this.domain.health.skippedLines(this.file, bad, `not a valid ${this.title} line`);
    return items;
  }

  /** Keeps the items `keep` returns (one atomic rewrite when something changes); resolves with how many went. */
  rewrite(keep: (items: I[]) => I[]): Promise<number> {
    return this.run(async () => {
      const items = await this.readNow();
      const kept = keep(items);
      if (kept.length === items.length && kept.every((item, i) => item === items[i])) return 0;
      if (kept.length === 0) {
        await removeDataFile(this.file);
      } else {
        await writeFileAtomicSafe(this.file, kept.map((item) => JSON.stringify(item) + '\n').join(''));
      }
      return items.length - kept.length;
    });
  }

  removeWhere(matches: (item: I) => boolean): Promise<number> {
    return this.rewrite((items) => items.filter((item) => !matches(item)));
  }

  flush(): Promise<void> {
    return this.run(async () => undefined);
  }
}
