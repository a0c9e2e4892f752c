import { createHash } from 'node:crypto';
import { Encoder, Index } from 'flexsearch';

/**
 * What a snapshot was made with: FlexSearch's export format and our index options. A snapshot of another format is
 * stale (rebuilt from the log), so changing the options below means changing this.
 */
export const INDEX_FORMAT = 'flexsearch-0.8/strict-1/whole-words/1';

/**
 * The index of one month of a chat's log; its ids are line numbers in the month's file. It splits text into words
 * exactly as `queryTerms` does. FlexSearch's default encoder also cuts numbers into groups of three ("coffee123" →
 * "coffee", "123"), which turns a rare word into an intersection of huge lists (50 ms at 100,000 messages); whole
 * words keep every lookup under a millisecond. Resolution 1 (one list per word, no ranking by where in the text the
 * word stands): the search ranks by newness and rarity itself, and one list is smaller and faster (67 instead of 76 MB
 * for a loaded chat of 100,000 messages; first search from snapshots 0.13 instead of 0.2 s).
 */
export const newIndex = () => new Index({ tokenize: 'strict', resolution: 1, encoder: new Encoder({ split: /[^\p{L}\p{N}]+/u, numeric: false, normalize: true, dedupe: false }) });

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** Which bytes of the month's file a snapshot indexes: lines 0..lines-1, the first `size` bytes, with this hash. */
export interface SnapshotCoverage {
  size: number;
  lines: number;
  segmentSha256: string;
}

interface SnapshotHeader extends SnapshotCoverage {
  recallIndex: 1;
  /** Messages in the lines covered (the month's count without parsing them). */
  entries: number;
  format: string;
  chat: string;
  segment: string;
  parts: string[];
  sha256: string;
}

/** The file names the chat and month, says which bytes of the month's file it covers and checks its own body. */
export function snapshotText(index: Index, chat: string, segment: string, coverage: SnapshotCoverage & { entries: number }): string {
  const keys: string[] = [];
  const data: string[] = [];
  // FlexSearch's export is synchronous with a synchronous handler; each part is a JSON text (no raw line breaks).
  void index.export((key: string, part: string) => {
    keys.push(String(key));
    data.push(part);
  });
  const body = data.join('\n');
  const header: SnapshotHeader = { recallIndex: 1, format: INDEX_FORMAT, chat, segment, ...coverage, parts: keys, sha256: sha256(body) };
  return `${JSON.stringify(header)}\n${body}`;
}

/** How many lines the first `size` bytes of `buffer` hold (each line ends with a line break). */
export function linesIn(buffer: Buffer, size = buffer.length): number {
  let lines = 0;
  for (let at = buffer.indexOf(10); at >= 0 && at < size; at = buffer.indexOf(10, at + 1)) lines++;
  return lines;
}

/** What a month's file covered by a snapshot must look like: a whole number of lines. */
export function coverageOf(segment: Buffer): SnapshotCoverage | undefined {
  if (segment.length && segment[segment.length - 1] !== 10) return undefined;
  return { size: segment.length, lines: linesIn(segment), segmentSha256: sha256(segment) };
}

/** A snapshot that matches its month: the parts to import and the lines they cover. */
export interface UsableSnapshot {
  parts: Array<[string, string]>;
  lines: number;
  entries: number;
}

/**
 * Checks a snapshot against the chat, the month and the month's file as it is now: the file may have grown since (the
 * lines after `lines` are indexed on top), but its first `size` bytes must be the ones indexed. Returns the reason
 * when it cannot be used.
 */
export function checkSnapshot(text: string, chat: string, segment: string, file: Buffer): UsableSnapshot | { stale: string } | { corrupt: string } {
  const newline = text.indexOf('\n');
  let header: SnapshotHeader;
  try {
    header = JSON.parse(newline < 0 ? text : text.slice(0, newline)) as SnapshotHeader;
  } catch {
    return { corrupt: 'its first line is not a snapshot header' };
  }
  if (!header || typeof header !== 'object' || header.recallIndex !== 1 || !Array.isArray(header.parts) || !header.parts.every((k) => typeof k === 'string')) {
    return { corrupt: 'its first line is not a snapshot header' };
  }
  if (header.chat !== chat || header.segment !== segment) return { corrupt: 'it names another chat or month' };
  const body = newline < 0 ? '' : text.slice(newline + 1);
  if (header.sha256 !== sha256(body)) return { corrupt: 'its contents do not match their checksum' };
  if (header.format !== INDEX_FORMAT) return { stale: `it was made with another index format (${String(header.format).slice(0, 40)})` };
  if (!Number.isInteger(header.size) || !Number.isInteger(header.lines) || !Number.isInteger(header.entries) || header.entries < 0 || header.size > file.length) return { stale: "the month's file changed since" };
  if (linesIn(file, header.size) !== header.lines || sha256(file.subarray(0, header.size)) !== header.segmentSha256) return { stale: "the month's file changed since" };
  const data = body ? body.split('\n') : [];
  if (data.length !== header.parts.length) return { corrupt: 'it has the wrong number of parts' };
  return { parts: header.parts.map((key, i) => [key, data[i]]), lines: header.lines, entries: header.entries };
}

/** A month's index from a checked snapshot (throws when a part does not parse). */
export function importSnapshot(snapshot: UsableSnapshot): Index {
  const index = newIndex();
  for (const [key, data] of snapshot.parts) index.import(key, data);
  return index;
}
