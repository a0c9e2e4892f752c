import { open, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { enterWrite, leaveWrite } from '../../services/store/atomic.js';

/** Marker in the names of temporary files, so leftovers of a crash can be recognised and removed. */
export const TEMP_MARKER = '.tmp-';

let counter = 0;

export interface DurableWriteOptions {
  /** File mode of the new file (the session is the account: 0o600 keeps other users out). */
  mode?: number;
  /**
   * Called after the bytes are in the temporary file and before it replaces the target. Tests throw here to
   * imitate a crash in the middle of a write.
   */
  beforeRename?: (tempFile: string) => void | Promise<void>;
  /**
   * Also fsync the folder after the rename (default true). Signal key files skip it: one fsync per key write
   * suffices there (a key lost in a power cut is renegotiated), while creds.json keeps both.
   */
  syncFolder?: boolean;
}

/**
 * Writes a file so that a crash at any moment leaves either the old or the new content, never half of one:
 * the bytes go to a temporary file in the same folder, are fsynced, and the temporary file is renamed over the
 * target (rename is atomic within one file system). On failure the temporary file is removed.
 *
 * @example await writeDurably('data/session_auth/creds.json', JSON.stringify(creds));
 */
export async function writeDurably(file: string, data: string | Buffer, options: DurableWriteOptions = {}): Promise<void> {
  // An online backup holds writes while it copies (the session too: creds and keys must match in the archive).
  await enterWrite(file);
  const temp = `${file}${TEMP_MARKER}${process.pid}-${++counter}`;
  let renamed = false;
  try {
    const handle = await open(temp, 'wx', options.mode ?? 0o600);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await options.beforeRename?.(temp);
    await rename(temp, file);
    renamed = true;
    if (options.syncFolder !== false) await syncFolder(path.dirname(file));
  } finally {
    if (!renamed) await rm(temp, { force: true }).catch(() => undefined);
    leaveWrite(file);
  }
}

/** fsyncs a folder so the rename itself survives a power cut (best effort: not every platform allows it). */
async function syncFolder(folder: string): Promise<void> {
  try {
    const handle = await open(folder, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Some file systems refuse fsync on a directory; the rename is still atomic.
  }
}

/**
 * Removes temporary files a crash left behind in a folder (they never replaced a real file, so nothing is lost).
 * Returns their names.
 */
export async function removeLeftoverTempFiles(folder: string): Promise<string[]> {
  const names = await readdir(folder).catch(() => [] as string[]);
  const leftovers = names.filter((n) => n.includes(TEMP_MARKER));
  await Promise.all(leftovers.map((n) => rm(path.join(folder, n), { force: true })));
  return leftovers;
}
