import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { checkDatabaseFile, DATABASE_FILE } from '../../core/services/store/database.js';
import { checkDocument, checkValue, type DataSchema } from '../../core/services/store/schemas.js';

export interface DataFilesReport {
  checked: number;
  /** The store database (`data/store.db`): absent (made at the first start), ok, or what is wrong with it. */
  database: 'absent' | 'ok' | { problem: string };
  /** Files of an earlier version (a layout the store database replaced) that are still in place, valid: the next start
   * takes them in and keeps them under `data/migrated/`. */
  earlier: string[];
  /** Files that do not parse or do not match their schema: the bot would set them aside at load. */
  bad: Array<{ file: string; reason: string }>;
  /** Files the bot set aside earlier (`<name>.corrupt-<time>`), bytes kept for the owner to look at. */
  setAside: string[];
}

/** The files under `dataDir` that a declared path (`history/<chat>.json`) stands for. */
async function filesFor(dataDir: string, declared: string): Promise<string[]> {
  let found = [''];
  for (const part of declared.split('/')) {
    const next: string[] = [];
    for (const base of found) {
      if (!/<[^>]+>/.test(part)) {
        next.push(path.join(base, part));
        continue;
      }
      const pattern = new RegExp(`^${part.split(/<[^>]+>/).map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^/]+')}$`);
      const names = await readdir(path.join(dataDir, base)).catch(() => [] as string[]);
      for (const name of names) if (pattern.test(name)) next.push(path.join(base, name));
    }
    found = next;
  }
  return found;
}

/** Files whose name says the bot set them aside (`.corrupt-<time>`), anywhere under `dataDir` (not in the session). */
async function setAsideFiles(dataDir: string, depth = 3): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string, level: number) => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const full = path.join(dir, e.name);
      if (e.isDirectory() && level < depth && e.name !== 'session_auth' && e.name !== 'workspaces') await walk(full, level + 1);
      else if (e.isFile() && /\.corrupt-/.test(e.name)) out.push(path.relative(dataDir, full));
    }
  };
  await walk(dataDir, 0);
  return out.sort();
}

/**
 * Checks the store database (read-only, so a running bot is not disturbed) and every file of an earlier version the
 * installation declares (`declared`: the layouts the database replaced), each against its schema with the migrations
 * the bot would apply, without changing anything. Such a file still in place has not been taken into the database.
 */
export async function checkDataFiles(dataDir: string, declared: Array<{ path: string; schema: DataSchema }>): Promise<DataFilesReport> {
  const report: DataFilesReport = { checked: 0, database: 'absent', bad: [], earlier: [], setAside: await setAsideFiles(dataDir) };
  // The store database: read-only, so a running bot is not disturbed.
  const database = path.join(dataDir, DATABASE_FILE);
  if (await stat(database).then((s) => s.isFile(), () => false)) {
    report.checked++;
    const problem = checkDatabaseFile(database);
    report.database = problem ? { problem } : 'ok';
    if (problem) report.bad.push({ file: DATABASE_FILE, reason: problem });
  }
  // A file declared by its own name is checked against its own schema only, never also as a `<chat>` of its folder
  // (reminders/timezones.json is not a chat's reminders).
  const named = new Set(declared.filter((d) => !/<[^>]+>/.test(d.path)).map((d) => path.join(...d.path.split('/'))));
  for (const entry of declared) {
    const pattern = /<[^>]+>/.test(entry.path);
    for (const relative of await filesFor(dataDir, entry.path)) {
      if (pattern && named.has(relative)) continue;
      let text: string;
      try {
        text = await readFile(path.join(dataDir, relative), 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'EISDIR') continue;
        report.bad.push({ file: relative, reason: `cannot be read (${(err as NodeJS.ErrnoException).code})` });
        continue;
      }
      report.checked++;
      if (entry.path.endsWith('.jsonl')) {
        // An append-only log (Store.chatLog): one item per line, each checked against the item schema.
        const problem = badLine(text, entry.schema);
        if (problem) report.bad.push({ file: relative, reason: problem });
        else report.earlier.push(relative);
        continue;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        report.bad.push({ file: relative, reason: 'is not valid JSON' });
        continue;
      }
      const result = checkDocument(entry.schema, parsed);
      if (!result.ok) report.bad.push({ file: relative, reason: result.reason });
      else report.earlier.push(relative);
    }
  }
  return report;
}

function isSearchLogHeader(value: unknown): boolean {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 2 && keys[1] === 'chat' && typeof (value as { chat?: unknown }).chat === 'string' && (value as Record<string, unknown>)[keys[0]] === 1;
}

/** The first line of an append-only log that does not parse or match its item schema, in words; undefined if none. */
function badLine(text: string, schema: DataSchema): string | undefined {
  const lines = text.split('\n');
  for (const [i, line] of lines.entries()) {
    if (!line) continue;
    let item: unknown;
    try {
      item = JSON.parse(line);
    } catch {
      return `line ${i + 1} is not valid JSON${i === lines.length - 1 ? ' (a torn last line: the bot skips it)' : ''}`;
    }
    // A search log's month file (Store.chatSearchLog) starts with a header naming its chat: {"<kind>":1,"chat":"…"}.
    if (i === 0 && isSearchLogHeader(item)) continue;
    const problem = checkValue(schema.schema, item);
    if (problem) return `line ${i + 1} does not match the ${schema.name} schema: ${problem}`;
  }
  return undefined;
}
