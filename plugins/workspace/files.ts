import { constants, promises as fs, readlinkSync, type Dirent } from 'node:fs';
import path from 'node:path';
import { checkFileName } from './file-names.js';

/** A file operation that was refused; the message is safe to show the user and the model. */
export class FileRefused extends Error {}

export interface FileEntry {
  name: string;
  size: number;
}

export interface Usage {
  bytes: number;
  /** Files and folders. */
  entries: number;
  /** Symlinks, fifos, sockets and devices found (only sandboxed code can make them). */
  special: string[];
}

/**
 * The real path of an open file descriptor (Linux). Used after opening to prove the file really is inside the
 * workspace, whatever symlinks or renames happened on the way: a check of the path before opening can be raced.
 */
export function fdRealPath(fd: number): string {
  return readlinkSync(`/proc/self/fd/${fd}`);
}

/** True when `inner` is `root` or below it. */
export function isInside(root: string, inner: string): boolean {
  return inner === root || inner.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}

/**
 * Opens a regular file below `root` for reading without following symlinks; throws FileRefused otherwise.
 * The caller closes the handle.
 *
 * @example const h = await openInside('/data/ws/abc', 'site/index.html');
 */
export async function openInside(root: string, relative: string): Promise<fs.FileHandle> {
  const realRoot = await fs.realpath(root);
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(path.join(realRoot, relative), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new FileRefused(`there is no file ${relative}`);
    if (code === 'ELOOP') throw new FileRefused(`${relative} is a link, which I do not follow`);
    throw new FileRefused(`${relative} cannot be opened (${code ?? 'error'})`);
  }
  try {
    if (!isInside(realRoot, fdRealPath(handle.fd))) throw new FileRefused(`${relative} leads outside the workspace`);
    const stat = await handle.stat();
    if (!stat.isFile()) throw new FileRefused(`${relative} is not a regular file`);
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/**
 * Files of one workspace, as the host sees them. Every name is checked with `checkFileName`; nothing follows a
 * symlink; writes are atomic (temporary file + rename, which replaces a link instead of writing through it) and
 * stay within the per-file size limit and the workspace quota.
 *
 * @example
 * const files = new WorkspaceFiles('/data/workspaces/files/ab12', { maxFileBytes: 1 << 20, quotaBytes: 20 << 20, maxFiles: 500 });
 * await files.write('main.py', 'print("hi")');
 */
export class WorkspaceFiles {
  constructor(readonly dir: string, private readonly limits: { maxFileBytes: number; quotaBytes: number; maxFiles: number }) {}

  /**
   * Every entry below the workspace, depth first, without following links. Stops after `cap` entries so a flood of
   * files made by hostile code cannot stall a listing or the quota watchdog. Folders deeper than 32 are not entered.
   */
  private async *entries(cap = this.limits.maxFiles * 4 + 100): AsyncGenerator<{ name: string; entry: Dirent; tooDeep: boolean }> {
    let seen = 0;
    const stack: Array<{ rel: string; depth: number }> = [{ rel: '', depth: 0 }];
    while (stack.length) {
      const { rel, depth } = stack.pop()!;
      let listed: Dirent[];
      try {
        listed = await fs.readdir(path.join(this.dir, rel), { withFileTypes: true });
      } catch {
        continue;
      }
      for (const entry of listed) {
        if (++seen > cap) return;
        const name = rel ? `${rel}/${entry.name}` : entry.name;
        const tooDeep = entry.isDirectory() && depth >= 32;
        if (entry.isDirectory() && !tooDeep) stack.push({ rel: name, depth: depth + 1 });
        yield { name, entry, tooDeep };
      }
    }
  }

  /** Every regular file (recursive), sorted by name; links and other special files are left out. */
  async list(): Promise<FileEntry[]> {
    const out: FileEntry[] = [];
    for await (const { name, entry } of this.entries()) {
      if (!entry.isFile()) continue;
      const stat = await fs.lstat(path.join(this.dir, name)).catch(() => undefined);
      if (stat?.isFile()) out.push({ name, size: stat.size });
    }
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Bytes and entries used (stops counting once far over the limits, so a flood of files cannot stall it). */
  async usage(): Promise<Usage> {
    const usage: Usage = { bytes: 0, entries: 0, special: [] };
    for await (const { name, entry, tooDeep } of this.entries()) {
      usage.entries++;
      if (entry.isFile()) usage.bytes += (await fs.lstat(path.join(this.dir, name)).catch(() => undefined))?.size ?? 0;
      else if (!entry.isDirectory() || tooDeep) usage.special.push(name);
    }
    return usage;
  }

  /**
   * Copies one file of the workspace to `to` (outside it, for sending), under the same rules as a read: a checked name,
   * no link followed, the opened file proven inside the workspace, a regular file; refused above `maxBytes`. The copy
   * is made from the opened file, so a link planted after the check changes nothing. Returns the file's name and size.
   */
  async copyOut(name: string, maxBytes: number, to: string): Promise<{ name: string; size: number }> {
    const rel = checkFileName(name);
    const handle = await openInside(this.dir, rel);
    try {
      const { size } = await handle.stat();
      if (size > maxBytes) throw new FileRefused(`${rel} is ${kb(size)}, more than the ${kb(maxBytes)} a file sent to the chat may have`);
      const out = await fs.open(to, 'wx', 0o600);
      try {
        const buffer = Buffer.alloc(Math.min(size, 1 << 20) || 1);
        let position = 0;
        for (;;) {
          const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
          if (!bytesRead) break;
          position += bytesRead;
          if (position > maxBytes) throw new FileRefused(`${rel} grew past the ${kb(maxBytes)} a file sent to the chat may have`);
          await out.write(buffer.subarray(0, bytesRead));
        }
      } finally {
        await out.close();
      }
      return { name: rel, size };
    } finally {
      await handle.close();
    }
  }

  async read(name: string, maxBytes = this.limits.maxFileBytes): Promise<{ text: string; size: number; truncated: boolean }> {
    const rel = checkFileName(name);
    const handle = await openInside(this.dir, rel);
    try {
      const { size } = await handle.stat();
      const length = Math.min(size, maxBytes);
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, 0);
      return { text: buffer.subarray(0, bytesRead).toString('utf8'), size, truncated: size > maxBytes };
    } finally {
      await handle.close();
    }
  }

  /** Ensures the folders of `rel` exist as real directories inside the workspace (never through a link). */
  private async parentDir(rel: string): Promise<string> {
    const realRoot = await fs.realpath(this.dir);
    let current = realRoot;
    for (const part of rel.split('/').slice(0, -1)) {
      current = path.join(current, part);
      const stat = await fs.lstat(current).catch(() => undefined);
      if (!stat) await fs.mkdir(current, { mode: 0o755 });
      else if (!stat.isDirectory()) throw new FileRefused(`${path.relative(realRoot, current)} exists and is not a folder`);
    }
    if (!isInside(realRoot, await fs.realpath(current))) throw new FileRefused('that folder leads outside the workspace');
    return current;
  }

  async write(name: string, content: string | Buffer): Promise<{ name: string; size: number }> {
    const rel = checkFileName(name);
    const data = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    if (data.length > this.limits.maxFileBytes) {
      throw new FileRefused(`${rel} would be ${kb(data.length)}, over the limit of ${kb(this.limits.maxFileBytes)} per file`);
    }
    const usage = await this.usage();
    const old = await fs.lstat(path.join(this.dir, rel)).catch(() => undefined);
    const after = usage.bytes - (old?.isFile() ? old.size : 0) + data.length;
    if (after > this.limits.quotaBytes) {
      throw new FileRefused(`the workspace would use ${kb(after)}, over its quota of ${kb(this.limits.quotaBytes)}: delete something first`);
    }
    if (!old && usage.entries + rel.split('/').length > this.limits.maxFiles) {
      throw new FileRefused(`the workspace already has ${usage.entries} files and folders (limit ${this.limits.maxFiles})`);
    }
    if (old?.isDirectory()) throw new FileRefused(`${rel} is a folder`);
    const parent = await this.parentDir(rel);
    const target = path.join(parent, path.basename(rel));
    const temp = path.join(parent, `.tmp-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`);
    const handle = await fs.open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temp, target).catch(async (err) => {
      await fs.rm(temp, { force: true });
      throw err;
    });
    return { name: rel, size: data.length };
  }

  async remove(name: string): Promise<void> {
    const rel = checkFileName(name);
    const realRoot = await fs.realpath(this.dir);
    const target = path.join(realRoot, rel);
    const stat = await fs.lstat(target).catch(() => undefined);
    if (!stat) throw new FileRefused(`there is no file ${rel}`);
    if (!isInside(realRoot, await fs.realpath(path.dirname(target)))) throw new FileRefused('that file lies outside the workspace');
    // rm never follows links; a folder goes with its contents.
    await fs.rm(target, { recursive: stat.isDirectory(), force: true });
  }

  /**
   * Removes what only sandboxed code can create and the host must never touch: symlinks, fifos, sockets, devices.
   * Returns the names removed.
   */
  async removeSpecialFiles(): Promise<string[]> {
    const { special } = await this.usage();
    for (const name of special) await fs.rm(path.join(this.dir, name), { force: true, recursive: false }).catch(() => undefined);
    return special;
  }
}

/** A size for people: `512 B`, `3.2 KB`, `1.5 MB`. */
export function kb(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(bytes < 10240 ? 1 : 0)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
