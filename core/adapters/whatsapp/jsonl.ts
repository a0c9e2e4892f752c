import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { writeDurably } from './durable-write.js';

/** Rewrites a JSON-lines file atomically (temporary file, fsync, rename) with the given records. */
export async function writeJsonLinesAtomic(file: string, records: unknown[], replacer?: (key: string, value: unknown) => unknown): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeDurably(file, records.map((r) => JSON.stringify(r, replacer as never)).join('\n') + (records.length ? '\n' : ''));
}
