import { existsSync } from 'node:fs';
import Database from 'libsql';
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

/**
 * The documents of one `Store.doc` / `Store.chatDoc` declaration as the store database holds them on disk (each as
 * stored: with its schema version), by chat or key (`''` for a `Store.doc`); read from the file, not through the store.
 */
export function storedDocuments(dataDir: string, namespace: string, name: string): Record<string, Record<string, unknown>> {
  const file = path.join(dataDir, 'store.db');
  if (!existsSync(file)) return {};
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const table = `"doc:${namespace}:${name}"`;
    if (!db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?").get(`doc:${namespace}:${name}`)) return {};
    const rows = db.prepare(`SELECT key, value FROM ${table}`).all() as Array<{ key: string; value: string }>;
    return Object.fromEntries(rows.map((r) => [r.key, JSON.parse(r.value) as Record<string, unknown>]));
  } finally {
    db.close();
  }
}

/** The rows of one bounded record (its table `record:<namespace>:<field>`, the core's by default) as the store database holds them on disk. */
export function storedRecordRows(dataDir: string, field: string, namespace = 'core'): string[] {
  const file = path.join(dataDir, 'store.db');
  if (!existsSync(file)) return [];
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    if (!db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?").get(`record:${namespace}:${field}`)) return [];
    return (db.prepare(`SELECT chat, id, at, entry FROM "record:${namespace}:${field}"`).all() as Array<Record<string, unknown>>).map((row) => JSON.stringify(row));
  } finally {
    db.close();
  }
}

/** Changes one stored document in the store database of a stopped bot (time passing while it is down, a planted entry). */
export function changeStoredDocument(dataDir: string, namespace: string, name: string, key: string, change: (doc: any) => void): void {
  const db = new Database(path.join(dataDir, 'store.db'), { fileMustExist: true });
  try {
    const table = `"doc:${namespace}:${name}"`;
    const row = db.prepare(`SELECT value FROM ${table} WHERE key = ?`).get(key) as { value: string };
    const doc = JSON.parse(row.value);
    change(doc);
    db.prepare(`UPDATE ${table} SET value = ? WHERE key = ?`).run(JSON.stringify(doc), key);
  } finally {
    db.close();
  }
}

/**
 * A chat's history as the store database holds it on disk (`chat-log:core:history`, oldest first), read from the file;
 * without a chat, every chat's rows.
 */
export function storedHistory(dataDir: string, chatId?: string): Array<{ text: string; id?: string; role: string; [key: string]: unknown }> {
  const file = path.join(dataDir, 'store.db');
  if (!existsSync(file)) return [];
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    if (!db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'chat-log:core:history'").get()) return [];
    const rows = chatId === undefined ? db.prepare('SELECT item FROM "chat-log:core:history" ORDER BY seq').all() : db.prepare('SELECT item FROM "chat-log:core:history" WHERE chat = ? ORDER BY seq').all(chatId);
    return (rows as Array<{ item: string }>).map((r) => JSON.parse(r.item));
  } finally {
    db.close();
  }
}

/**
 * The items of one `Store.chatSearchLog` declaration (table `search-log:<namespace>:<name>`) as the store database
 * holds them on disk, one JSON line each in the order written, of one chat or every chat ('' when there are none).
 */
export function storedSearchLogText(dataDir: string, namespace: string, name: string, chatId?: string): string {
  const file = path.join(dataDir, 'store.db');
  if (!existsSync(file)) return '';
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    if (!db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?").get(`search-log:${namespace}:${name}`)) return '';
    const table = `"search-log:${namespace}:${name}"`;
    const rows = (chatId === undefined ? db.prepare(`SELECT item FROM ${table} ORDER BY row`).all() : db.prepare(`SELECT item FROM ${table} WHERE chat = ? ORDER BY row`).all(chatId)) as Array<{ item: string }>;
    return rows.map((r) => `${r.item}\n`).join('');
  } finally {
    db.close();
  }
}

/** A chat's summary as the store database holds it on disk (`doc:core:summaries`), or undefined. */
export function storedSummary(dataDir: string, chatId: string): { text: string; [key: string]: unknown } | undefined {
  return storedDocuments(dataDir, 'core', 'summaries')[chatId] as { text: string } | undefined;
}

/** Every item of one `Store.chatLog` declaration, every chat's, as the store database holds them on disk (one JSON a line). */
export function storedChatLogText(dataDir: string, namespace: string, name: string): string {
  const file = path.join(dataDir, 'store.db');
  if (!existsSync(file)) return '';
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    if (!db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?").get(`chat-log:${namespace}:${name}`)) return '';
    return (db.prepare(`SELECT item FROM "chat-log:${namespace}:${name}" ORDER BY seq`).all() as Array<{ item: string }>).map((r) => r.item).join('\n');
  } finally {
    db.close();
  }
}
