import type { Index } from 'flexsearch';

/**
 * One month of a chat's search log in memory: the file's bytes as read at load, parsed line by line only when a line is
 * needed (a search shows a handful), plus the lines appended since. Line numbers are the file's (0 is the header):
 * appends add lines at the end and a removal leaves an empty line, so a number never changes while the file exists.
 * Keeping the bytes instead of 100,000 parsed objects makes loading a large chat several times faster and smaller.
 */
export class Month<I = unknown> {
  /** Line by number: undefined = not parsed yet (still in `bytes`), null = no message (header, removed, bad). */
  private readonly cache: Array<I | null | undefined>;
  /** Where each line of `bytes` starts. */
  private readonly starts: number[];
  /** Messages in the month. */
  entries = 0;
  /** Its search index (ids are line numbers). */
  index?: Index;
  /** Lines the snapshot on disk covers (0: none). */
  snapshotLines = 0;
  /** Lines the month had when a snapshot could not be written (its file did not match): the next try waits. */
  snapshotTried = 0;
  /** An append failed midway: the file may not match the lines in memory, so no snapshot until the next load. */
  suspect = false;

  constructor(
    /** The file's name, `YYYY-MM.jsonl`. */
    readonly name: string,
    /** The item a line holds, or undefined (not JSON, not an item). */
    private readonly parse: (line: string) => I | undefined,
    private bytes: Buffer = Buffer.alloc(0),
  ) {
    this.starts = bytes.length ? [0] : [];
    for (let at = bytes.indexOf(10); at >= 0 && at + 1 < bytes.length; at = bytes.indexOf(10, at + 1)) this.starts.push(at + 1);
    this.cache = new Array<I | null | undefined>(Math.max(1, this.starts.length)).fill(undefined);
    this.cache[0] = null;
  }

  /** Whether a new snapshot is due: `every` lines were added since the last one or the last try (any with 0). */
  snapshotDue(minLines: number, every: number): boolean {
    if (!this.index || this.suspect || this.length < minLines || this.length <= this.snapshotLines) return false;
    return !every || !this.snapshotLines || this.length - Math.max(this.snapshotLines, this.snapshotTried) >= every;
  }

  /** Lines in the month, the header included. */
  get length(): number {
    return this.cache.length;
  }

  /** The raw text of a line that came from the file ('' for an appended or unknown line). */
  lineText(line: number): string {
    if (line <= 0 || line >= this.starts.length) return '';
    const end = line + 1 < this.starts.length ? this.starts[line + 1] - 1 : this.bytes[this.bytes.length - 1] === 10 ? this.bytes.length - 1 : this.bytes.length;
    return this.bytes.toString('utf8', this.starts[line], end);
  }

  /** The message on a line without keeping the parsed object (scans of every line). */
  peek(line: number): I | undefined {
    const known = this.cache[line];
    if (known !== undefined) return known ?? undefined;
    const text = this.lineText(line);
    return text ? this.parse(text) : undefined;
  }

  /** The message on a line, kept parsed for the next time (search hits and their neighbours). */
  at(line: number): I | undefined {
    const known = this.cache[line];
    if (known !== undefined) return known ?? undefined;
    const entry = this.peek(line);
    this.cache[line] = entry ?? null;
    return entry;
  }

  /** Records that a line holds no message (bad, or removed). */
  clear(line: number): void {
    this.cache[line] = null;
  }

  /** Adds a message as the next line; returns its line number. */
  append(entry: I): number {
    this.entries++;
    return this.cache.push(entry) - 1;
  }

  /** Replaces the message on a line in memory (the index is the caller's); true when there was one. */
  replace(line: number, entry: I): boolean {
    if (!this.peek(line)) return false;
    this.cache[line] = entry;
    return true;
  }

  /** Removes the message on a line from memory (the line stays, empty; the index is the caller's); true when there was one. */
  remove(line: number): boolean {
    if (!this.peek(line)) return false;
    this.cache[line] = null;
    this.entries--;
    return true;
  }
}
