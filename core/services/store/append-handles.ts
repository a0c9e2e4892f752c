import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';

/**
 * Open append-mode handles on the logs one store owns, so a new line costs one `write` instead of open, write and
 * close (the largest per-message cost left in the history log). At most `max` stay open; the least recently used
 * is closed first, so a bot with thousands of chats never runs out of file descriptors.
 *
 * Only for files the owner alone appends to, truncates or removes: a handle keeps pointing at the file it opened,
 * so whoever replaces or deletes such a file must `release` it first (truncating is fine: the handle appends at the
 * new end).
 *
 * @example
 * const handles = new AppendHandles(64);
 * handles.append('data/history/123@g.us.jsonl', '{"seq":1,…}\n');
 * handles.releaseAll(); // at stop
 */
export class AppendHandles {
  /** file → descriptor, in order of last use (a Map keeps insertion order). */
  private readonly open = new Map<string, number>();

  constructor(private readonly max = 64) {}

  /** Appends `data` to `file` (created, with its folder, when missing). Throws what the file system says. */
  append(file: string, data: string): void {
    const fd = this.handle(file);
    try {
      // A regular file takes the whole line at once; the rest is written only after a short write (a full disk).
      const written = writeSync(fd, data);
      const bytes = Buffer.byteLength(data);
      if (written < bytes) {
        const rest = Buffer.from(data).subarray(written);
        for (let done = 0; done < rest.length; ) done += writeSync(fd, rest, done);
      }
    } catch (err) {
      this.release(file);
      throw err;
    }
  }

  /** Closes the handle of `file`, if open: the next append opens the file by its name again. */
  release(file: string): void {
    const fd = this.open.get(file);
    if (fd === undefined) return;
    this.open.delete(file);
    try {
      closeSync(fd);
    } catch {
      // Closing cannot lose data (nothing is buffered here); the descriptor is gone either way.
    }
  }

  releaseAll(): void {
    for (const file of [...this.open.keys()]) this.release(file);
  }

  /** How many handles are open (for tests and the bench). */
  get size(): number {
    return this.open.size;
  }

  private handle(file: string): number {
    const known = this.open.get(file);
    if (known !== undefined) {
      this.open.delete(file);
      this.open.set(file, known);
      return known;
    }
    let fd: number;
    try {
      fd = openSync(file, 'a');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      mkdirSync(path.dirname(file), { recursive: true });
      fd = openSync(file, 'a');
    }
    if (this.open.size >= this.max) this.release(this.open.keys().next().value as string);
    this.open.set(file, fd);
    return fd;
  }
}
