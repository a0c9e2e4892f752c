import { Worker } from 'node:worker_threads';
import type { PageText } from './html-text.js';

/** A page that took more than its time or memory to read; `reason` says which. */
export class PageTooHeavy extends Error {
  constructor(readonly reason: 'time' | 'memory') {
    super(`reading the page ran over its ${reason}`);
  }
}

/**
 * Starts the reading's time limit: `expired` runs once `ms` have passed, unless the returned function cancels it first.
 * A test passes its own to end the reading when it says instead of after real time (see LinksTestHooks).
 */
export type ReadDeadline = (ms: number, expired: () => void) => () => void;

const realDeadline: ReadDeadline = (ms, expired) => {
  const timer = setTimeout(expired, ms);
  return () => clearTimeout(timer);
};

/**
 * `pageText` in a worker thread, bounded: past `timeoutMs` or `memoryMb` the worker is ended and PageTooHeavy thrown,
 * so a huge or pathological page never blocks the bot (Readability on a large page takes seconds).
 *
 * @example
 * const page = await extractPage(html, 'https://example.com/post', { maxElements: 30_000, timeoutMs: 20_000, memoryMb: 256 });
 */
export function extractPage(html: string, url: string, limits: { maxElements: number; timeoutMs: number; memoryMb: number }, deadline: ReadDeadline = realDeadline): Promise<PageText> {
  const worker = new Worker(new URL('./html-worker.js', import.meta.url), {
    workerData: { html, url, maxElements: limits.maxElements },
    resourceLimits: { maxOldGenerationSizeMb: limits.memoryMb, maxYoungGenerationSizeMb: 32 },
  });
  return new Promise<PageText>((resolve, reject) => {
    let settled = false;
    const settle = (done: () => void) => {
      if (settled) return;
      settled = true;
      cancelDeadline();
      void worker.terminate();
      done();
    };
    const cancelDeadline = deadline(limits.timeoutMs, () => settle(() => reject(new PageTooHeavy('time'))));
    worker.once('message', (answer: { ok: true; page: PageText } | { ok: false; error: string }) => settle(() => (answer.ok ? resolve(answer.page) : reject(new Error(answer.error)))));
    worker.once('error', (err: NodeJS.ErrnoException) => settle(() => reject(err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? new PageTooHeavy('memory') : err)));
    worker.once('exit', (code) => settle(() => reject(new Error(`the page reader stopped (exit code ${code})`))));
  });
}
