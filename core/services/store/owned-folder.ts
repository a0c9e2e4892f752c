import { lstat, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { DataDomain } from './data-domain.js';

/** A file of a document's folder in the export: its path below the folder and its size. */
export interface FolderFile {
  name: string;
  size: number;
}

/** At most this many files are listed (the folder may hold what untrusted code made: a flood must not stall `.mydata`). */
export const FOLDER_LIST_CAP = 10_000;
/** The last entry of a listing cut at its cap. */
export const MORE_FILES = '… more files, not listed';
/** Folders deeper than this are not entered. */
const MAX_DEPTH = 32;

/**
 * The regular files below `dir` (sorted by name), without following a link — not even when `dir` itself is one. A
 * listing cut at `cap` files ends with `{ name: MORE_FILES, size: 0 }`.
 *
 * @example await listFolder('/srv/bot/data/workspaces/files/0123456789abcdef') // [{ name: 'main.py', size: 12 }]
 */
export async function listFolder(dir: string, cap = FOLDER_LIST_CAP): Promise<FolderFile[]> {
  const top = await lstat(dir).catch(() => undefined);
  if (!top?.isDirectory()) return [];
  const out: FolderFile[] = [];
  let more = false;
  let seen = 0;
  const stack: Array<{ rel: string; depth: number }> = [{ rel: '', depth: 0 }];
  while (stack.length && !more) {
    const { rel, depth } = stack.pop()!;
    const entries = await readdir(path.join(dir, rel), { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      // Folders count too: a flood of empty folders must not stall the walk either.
      if (++seen > cap * 4) {
        more = true;
        break;
      }
      const name = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (depth < MAX_DEPTH) stack.push({ rel: name, depth: depth + 1 });
      } else if (entry.isFile()) {
        if (out.length >= cap) {
          more = true;
          break;
        }
        const stat = await lstat(path.join(dir, name)).catch(() => undefined);
        if (stat?.isFile()) out.push({ name, size: stat.size });
      }
    }
  }
  out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (more) out.push({ name: MORE_FILES, size: 0 });
  return out;
}

/**
 * Removes a folder and everything below it (links removed, never followed), waiting while a backup holds the writes
 * (a backup never lists files that then vanish). A folder that is not there is fine.
 */
export async function removeFolder(dir: string, domain: DataDomain): Promise<void> {
  await domain.gate.enter();
  try {
    await rm(dir, { recursive: true, force: true });
  } finally {
    domain.gate.leave();
  }
}
