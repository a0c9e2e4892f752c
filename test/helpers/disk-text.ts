import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Every regular file under `dir` (recursively; sockets and links left out) as text, each preceded by its path: to prove that deleted words, ids or bytes
 * are nowhere on disk. `latin1` reads binary files byte for byte. A missing folder is empty; a file renamed away
 * between the listing and the read (a write's temporary file) is skipped, its text being in the file it became.
 */
export async function everyFileText(dir: string, encoding: 'utf8' | 'latin1' = 'utf8'): Promise<string> {
  const out: string[] = [];
  const walk = async (at: string): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true }).catch(() => [])) {
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) out.push(`${full}\n${await readFile(full, encoding).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? '' : Promise.reject(err)))}`);
    }
  };
  await walk(dir);
  return out.join('\n');
}

/** The store database of a data folder (`store.db` and its WAL) as text, byte for byte: what it keeps of chats' words. */
export async function storeDatabaseText(dataDir: string): Promise<string> {
  const read = (name: string) => readFile(path.join(dataDir, name), 'latin1').catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? '' : Promise.reject(err)));
  return (await read('store.db')) + (await read('store.db-wal'));
}
