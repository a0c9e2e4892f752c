import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { createRequire } from 'node:module';
import type * as TarStream from 'tar-stream';

// Required at the first workspace job, not at start (most starts never run one).
const tarStream = () => createRequire(import.meta.url)('tar-stream') as typeof TarStream;

/** Limits a run's resulting folder must keep to be copied back. */
export interface WorkQuota {
  bytes: number;
  /** Files and folders. */
  entries: number;
  /** Folder levels below the root (a file at a/b/c.txt has depth 3). */
  depth: number;
}

/** What came back from a run's /work: `commit` puts it in place of the workspace, `discard` drops it. */
export type ReceivedWork =
  | { fits: true; bytes: number; entries: number; skipped: string[]; commit(): Promise<void>; discard(): Promise<void> }
  | { fits: false; reason: string; added: string[] };

/** A tar stream of a work tree, piped into the jail's stdin (typed by what the jail uses, not by tar-stream's types). */
export interface WorkTreeStream {
  pipe<T extends NodeJS.WritableStream>(destination: T): T;
}

/**
 * The workspace as a tar stream for the jail's /work (regular files and folders only; links are never followed or
 * sent). The host folder is trusted (only this module and the workspace's checked writes fill it).
 */
export async function packWorkTree(dir: string): Promise<WorkTreeStream> {
  const pack = tarStream().pack();
  (async () => {
    const walk = async (rel: string) => {
      const entries = await fs.readdir(path.join(dir, rel), { withFileTypes: true });
      for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
        const name = rel ? `${rel}/${entry.name}` : entry.name;
        if (entry.isDirectory()) {
          pack.entry({ name, type: 'directory', mode: 0o755 });
          await walk(name);
        } else if (entry.isFile()) {
          const data = await fs.readFile(path.join(dir, name));
          await new Promise<void>((resolve, reject) => pack.entry({ name, size: data.length, mode: 0o644 }, data, (err) => (err ? reject(err) : resolve())));
        }
      }
    };
    await walk('');
    pack.finalize();
  })().catch((err) => pack.destroy(err));
  return pack;
}

/** Names of every regular file below `dir` (to tell the user what a rejected run would have added). */
async function fileNames(dir: string, rel = '', out = new Set<string>()): Promise<Set<string>> {
  for (const entry of await fs.readdir(path.join(dir, rel), { withFileTypes: true }).catch(() => [])) {
    const name = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) await fileNames(dir, name, out);
    else if (entry.isFile()) out.add(name);
  }
  return out;
}

class OverQuota extends Error {}

/**
 * Reads the tar stream of a finished run's /work into a fresh folder beside `dir`, checking every entry against the
 * quota (bytes, entries, depth) as it arrives; only when everything fits may `commit` make it replace `dir`.
 * Otherwise `dir` stays exactly as it was and the run's result is removed entirely. Links, devices and other
 * special entries are skipped (named in `skipped`). The stream is untrusted: names are checked, nothing is followed.
 *
 * @example const received = await receiveWorkTree(stream, '/data/workspaces/files/ab12', { bytes: 20 << 20, entries: 500, depth: 32 });
 */
export async function receiveWorkTree(stream: Readable, dir: string, quota: WorkQuota): Promise<ReceivedWork> {
  const staging = `${dir}.incoming-${process.pid}-${Date.now().toString(36)}`;
  await fs.mkdir(staging, { mode: 0o700 });
  await fs.chmod(staging, (await fs.stat(dir)).mode & 0o777);
  let bytes = 0;
  let entries = 0;
  const skipped: string[] = [];
  const extract = tarStream().extract();
  let sawRoot = false;
  const done = (async () => {
    for await (const entry of extract) {
      const header = entry.header;
      const name = header.name.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
      if (!name || name === '.') {
        // The archive of /work starts with its root: a run killed before it wrote one gives no result at all.
        sawRoot ||= header.type === 'directory';
        entry.resume();
        continue;
      }
      const parts = name.split('/');
      if (name.startsWith('/') || parts.some((p) => p === '' || p === '.' || p === '..' || p.includes('\0'))) throw new OverQuota(`it made an entry with an unusable name`);
      if (header.type !== 'file' && header.type !== 'directory') {
        skipped.push(name);
        entry.resume();
        continue;
      }
      entries++;
      if (entries > quota.entries) throw new OverQuota(`it left more than ${quota.entries} files and folders`);
      if (parts.length > quota.depth) throw new OverQuota(`it made folders more than ${quota.depth} levels deep`);
      const target = path.join(staging, ...parts);
      if (header.type === 'directory') {
        await fs.mkdir(target, { recursive: true, mode: 0o755 });
        entry.resume();
        continue;
      }
      bytes += header.size ?? 0;
      if (bytes > quota.bytes) throw new OverQuota(`it left more than the quota of ${quota.bytes} bytes`);
      await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o755 });
      // O_EXCL | O_NOFOLLOW: a name that comes twice or through a link is refused, never written through.
      const handle = await fs.open(target, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, (header.mode ?? 0) & 0o100 ? 0o755 : 0o644);
      try {
        for await (const chunk of entry) await handle.write(chunk as Buffer);
      } finally {
        await handle.close();
      }
    }
  })();
  stream.pipe(extract);
  try {
    await done;
    if (!sawRoot) throw new Error('NORESULT');
  } catch (err) {
    stream.unpipe(extract);
    stream.destroy();
    extract.destroy();
    const before = await fileNames(dir);
    const added = [...(await fileNames(staging))].filter((n) => !before.has(n));
    await fs.rm(staging, { recursive: true, force: true });
    if (err instanceof OverQuota) return { fits: false, reason: err.message, added };
    const code = (err as NodeJS.ErrnoException).code;
    if ((err as Error).message === 'NORESULT') return { fits: false, reason: 'it ended without handing its files back', added };
    return { fits: false, reason: code === 'EEXIST' ? 'it made the same name twice' : `its files could not be read back (${code ?? (err as Error).message})`, added };
  }
  return {
    fits: true,
    bytes,
    entries,
    skipped,
    commit: async () => {
      const old = `${dir}.previous-${process.pid}-${Date.now().toString(36)}`;
      await fs.rename(dir, old);
      await fs.rename(staging, dir);
      await fs.rm(old, { recursive: true, force: true });
    },
    discard: () => fs.rm(staging, { recursive: true, force: true }),
  };
}
