import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { TEMP_MARKER } from './atomic.js';

/*
 * The files that belong to items of a search log (`Store.chatSearchLog`'s `files`, e.g. a voice note's audio): they
 * live in the chat's folder under the declaration's path, beside nothing else of the log (its items are in the store
 * database).
 */

/** Whether `rel` may name a file attached to an item: a plain relative path inside the chat's folder. */
export function isAttachedPath(rel: unknown): rel is string {
  if (typeof rel !== 'string' || !rel || rel.length > 200 || rel.startsWith('/') || rel.includes('\\') || rel.includes('\0')) return false;
  const parts = rel.split('/');
  if (parts.length < 2 || parts.some((p) => !p || p === '.' || p === '..' || p.startsWith('.'))) return false;
  return !rel.includes(TEMP_MARKER) && !rel.includes('.corrupt-');
}

/**
 * Moves everything in `from` into `to`, folders merged file by file (each a rename, so a crash leaves every file in
 * one place or the other). A file `to` has already is the same one (attached files are named by their message; a move
 * cut short left it there): when its bytes are the same the source's copy goes, otherwise the source's copy is kept
 * beside it as `<name>.moved-<time>` — nothing is lost.
 */
export async function moveFolderContents(from: string, to: string): Promise<void> {
  let entries;
  try {
    entries = await readdir(from, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  for (const entry of entries) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) {
      await moveFolderContents(source, target);
      await rm(source, { recursive: true, force: true });
      continue;
    }
    await mkdir(to, { recursive: true });
    const there = await stat(target).catch(() => undefined);
    if (!there) {
      await rename(source, target);
      continue;
    }
    const [a, b] = await Promise.all([readFile(source), readFile(target)]);
    if (a.equals(b)) await rm(source, { force: true });
    else await rename(source, `${target}.moved-${Date.now()}`);
  }
}
