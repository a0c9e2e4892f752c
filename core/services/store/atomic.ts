import { mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { domainFor } from './data-domain.js';

/** Marker in the names of temporary files, so leftovers of a crash can be recognised (and are never data). */
export const TEMP_MARKER = '.tmp-';

/** Folders already created by this process: a write pays for `mkdir` once per folder, not once per write. */
const madeFolders = new Set<string>();
let counter = 0;

/**
 * Waits while a backup holds the writes of `file`'s data folder, then counts this write as in flight there. Each app's
 * data folder has its own gate (see DataDomain): a backup of one never holds another's writes.
 */
export async function enterWrite(file: string): Promise<void> {
  await domainFor(file).gate.enter();
}

/** A write of `file` (started with enterWrite) ended. */
export function leaveWrite(file: string): void {
  domainFor(file).gate.leave();
}

/**
 * Holds every write under `dataDir`: resolves once the writes in flight have finished, with the function that lets
 * writes go on again. (An online backup flushes first: `DataDomain.holdWrites`.)
 */
export function holdWrites(dataDir: string): Promise<() => void> {
  return domainFor(dataDir).gate.hold();
}

async function ensureFolder(folder: string): Promise<void> {
  if (madeFolders.has(folder)) return;
  await mkdir(folder, { recursive: true });
  madeFolders.add(folder);
}

/**
 * Writes a file atomically with the fewest system calls that still make it safe: the bytes go to a temporary file
 * in the same folder (`<file>.tmp-<pid>-<n>`), are fsynced, and the temporary file is renamed over the target, so a
 * crash leaves either the old or the new file, never half of one. On any failure (a full disk, a read-only file
 * system) the temporary file is removed before the error is thrown: nothing is ever left behind.
 *
 * Our own rather than write-file-atomic: that library costs ~323 syscalls per write (a recursive mkdir each time,
 * an unlink that always fails, and ~15 signal handlers added and removed per write through signal-exit); this one
 * needs open, write, fsync, close, rename.
 *
 * @example await writeFileAtomicSafe('data/memory/123.json', '{"facts":[]}');
 */
export async function writeFileAtomicSafe(file: string, data: string | Buffer, mode?: number): Promise<void> {
  const folder = path.dirname(file);
  const gate = domainFor(file).gate;
  await gate.enter();
  const temp = `${file}${TEMP_MARKER}${process.pid}-${++counter}`;
  let renamed = false;
  try {
    await ensureFolder(folder);
    let handle;
    try {
      handle = await open(temp, 'wx', mode ?? 0o644);
    } catch (err) {
      // The folder was removed behind our back (a restore, a test): create it again once.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      madeFolders.delete(folder);
      await ensureFolder(folder);
      handle = await open(temp, 'wx', mode ?? 0o644);
    }
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
    renamed = true;
  } finally {
    if (!renamed) await rm(temp, { force: true }).catch(() => undefined);
    gate.leave();
  }
}

/**
 * Removes temporary files a killed process left behind in `folders` (they never replaced a real file, so nothing is
 * lost). Only called at start, while the instance lock says no other bot writes here. Returns the removed paths.
 */
export async function removeLeftoverTempFiles(folders: string[]): Promise<string[]> {
  const removed: string[] = [];
  for (const folder of folders) {
    const names = await readdir(folder).catch(() => [] as string[]);
    for (const name of names.filter((n) => /\.tmp-\d+-\d+$/.test(n))) {
      await rm(path.join(folder, name), { force: true }).catch(() => undefined);
      removed.push(path.join(folder, name));
    }
  }
  return removed;
}

/**
 * Removes a data file, waiting while a backup holds the writes (a backup never lists a file that then vanishes). A
 * file that is not there is fine.
 *
 * @example await removeDataFile('data/notes/123@g.us.jsonl');
 */
export async function removeDataFile(file: string): Promise<void> {
  const gate = domainFor(file).gate;
  await gate.enter();
  try {
    await rm(file, { force: true });
  } finally {
    gate.leave();
  }
}

/** Atomic JSON write (pretty-printed, trailing newline). */
export async function writeJsonAtomic(file: string, value: unknown, mode?: number): Promise<void> {
  await writeFileAtomicSafe(file, JSON.stringify(value, null, 2) + '\n', mode);
}

