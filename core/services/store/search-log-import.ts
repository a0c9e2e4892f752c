import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { safeFileName } from '../../api/file-name.js';

/*
 * The month files of the search logs of earlier versions (`<path>/<chat>/<YYYY-MM>.jsonl`, the first line naming the
 * kind and the chat, beside `<YYYY-MM>.index` snapshots of a FlexSearch index), read once to take them into the store
 * database.
 */

const MONTH = /^\d{4}-\d{2}\.jsonl$/;

/** One month file found under a search log's folder. */
export interface MonthFile {
  chatId: string;
  file: string;
  /** The bytes, as text. */
  text: string;
  /** What names this content in `store_migrations` (the same file found again after a crash is not taken twice). */
  key: string;
}

/** Why a month file's first line is not the header of `chatId`'s log of `kind`, or undefined when it is. */
export function headerProblem(firstLine: string, kind: string, chatId: string): string | undefined {
  let header: unknown;
  try {
    header = JSON.parse(firstLine);
  } catch {
    header = undefined;
  }
  const h = header as Record<string, unknown> | undefined;
  if (!h || typeof h !== 'object') return `its first line is not a ${kind}-log header`;
  if (h[kind] !== 1) return `unknown format ${String(h[kind]).slice(0, 20)}`;
  return h.chat !== chatId ? 'it belongs to another chat' : undefined;
}

/** The month files under `folder`, chat by chat, oldest month first (a folder whose name is no chat id is left alone). */
export function monthFilesUnder(folder: string, table: string): MonthFile[] {
  if (!existsSync(folder)) return [];
  const out: MonthFile[] = [];
  for (const name of readdirSync(folder).sort()) {
    if (name.startsWith('.')) continue;
    let chatId: string;
    try {
      chatId = decodeURIComponent(name);
    } catch {
      continue;
    }
    const dir = path.join(folder, name);
    if (safeFileName(chatId) !== name || !statSync(dir).isDirectory()) continue;
    for (const month of readdirSync(dir).filter((n) => MONTH.test(n)).sort()) {
      const file = path.join(dir, month);
      const text = readFileSync(file, 'utf8');
      out.push({ chatId, file, text, key: `${table}/${name}/${month}:${createHash('sha256').update(text).digest('hex')}` });
    }
  }
  return out;
}

/** The lines of a month file after its header (empty ones: removed items). */
export function linesOf(text: string): string[] {
  const lines = text.split('\n');
  return lines.slice(1).filter(Boolean);
}

/**
 * Moves a month file that was taken in to `keptAside` (its path under the log's folder kept), and deletes its index
 * snapshot (made from the same words); the chat's folder goes when nothing else is left in it.
 */
export function keepAside(file: string, folder: string, keptAside: string): void {
  const to = path.join(keptAside, path.relative(folder, file));
  mkdirSync(path.dirname(to), { recursive: true, mode: 0o700 });
  renameSync(file, to);
  rmSync(file.replace(/\.jsonl$/, '.index'), { force: true });
  try {
    rmdirSync(path.dirname(file));
  } catch {
    // Not empty: attached files (audio) or other months stay there.
  }
}

/** Moves a month file that is not this chat's log aside in place, as `<name>.corrupt-<time>`, its bytes kept. */
export function setAsideInPlace(file: string): string {
  const movedTo = `${file}.corrupt-${Date.now()}`;
  renameSync(file, movedTo);
  rmSync(file.replace(/\.jsonl$/, '.index'), { force: true });
  return movedTo;
}
