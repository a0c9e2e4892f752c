/*
 * Runs in a worker thread only: reduces one page to its text (html-text.ts) and posts the result back. A page's
 * parsing costs time in proportion to its size and shape; here it cannot hold up the bot's event loop, and the
 * worker is ended when it runs over its time or memory.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { pageText } from './html-text.js';

if (parentPort) {
  const { html, url, maxElements } = workerData as { html: string; url: string; maxElements: number };
  try {
    parentPort.postMessage({ ok: true, page: pageText(html, url, maxElements) });
  } catch (err) {
    parentPort.postMessage({ ok: false, error: (err as Error).message });
  }
}
