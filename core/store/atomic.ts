import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';

/**
 * Writes a file atomically: write-file-atomic writes a temporary file in the same folder, fsyncs it and renames it
 * over the target, so a crash leaves either the old or the new file, never half of one.
 *
 * @example await writeJsonAtomic('data/memory/123.json', { facts: [] });
 */
export async function writeFileAtomicSafe(file: string, data: string | Buffer, mode?: number): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFileAtomic(file, data, mode === undefined ? {} : { mode });
}

/** Atomic JSON write (pretty-printed, trailing newline). */
export async function writeJsonAtomic(file: string, value: unknown, mode?: number): Promise<void> {
  await writeFileAtomicSafe(file, JSON.stringify(value, null, 2) + '\n', mode);
}

/**
 * A file name for an id that can never escape its folder: keeps letters, digits, `@`, `.`, `_`, `-`, encodes the
 * rest, and never yields `.`/`..` or an empty name.
 *
 * @example safeFileName('123@g.us') // '123@g.us'
 * @example safeFileName('../etc/passwd') // '%2E.%2Fetc%2Fpasswd'
 */
export function safeFileName(id: string): string {
  const hex = (c: string) => '%' + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0');
  const encoded = id.replace(/[^A-Za-z0-9@._-]/g, hex).replace(/^\./, hex);
  return (encoded || '%00').slice(0, 200);
}
