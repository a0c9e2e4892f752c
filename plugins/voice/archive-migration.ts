import { link, mkdir, readdir, readFile, rename, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import type { StoredSearchLog } from '../../core/index.js';
import { checkDocument, healthFor } from '../../core/builtin.js';
import { safeFileName } from '../../core/index.js';
import { audioFileFor, cleanContext, noteItem, type ArchivedNote, type ContextMessage, type NoteItem } from './archive-note.js';
import { ARCHIVE_SEGMENT_SCHEMA } from './schemas.js';

/** A note as segment files of earlier versions kept it (`notes/<n>.json`, 1,000 notes each). */
type OldNote = Omit<ArchivedNote, 'kind'> & { kind?: string };

interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

const SEGMENT = /^\d+\.json$/;

/**
 * Where a chat folder's files of the old layout are kept once converted: `data/migrated/audio_archive/<chat>/`, the
 * folder the store keeps the archive's taken-in files under (the archive lives at `data/audio_archive/<chat>/`).
 */
function keptAsideFor(chatFolder: string): string {
  const archive = path.dirname(chatFolder);
  return path.join(path.dirname(archive), 'migrated', path.basename(archive), path.basename(chatFolder));
}

/** Reads a file's text, or undefined when it is not there. */
async function textOf(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Whether a chat folder still holds files of the old layout (segments, their context, the old search index). */
async function holdsOldLayout(dir: string): Promise<boolean> {
  const entries = await readdir(dir).catch(() => [] as string[]);
  if (entries.some((name) => name === 'context' || name === 'search-index.json' || name.startsWith('index-'))) return true;
  return (await readdir(path.join(dir, 'notes')).catch(() => [] as string[])).some((name) => SEGMENT.test(name));
}

/**
 * The chats whose folder under the archive's folder `root` still holds files of the old layout: a chat that has
 * nothing in the search log yet (no note since the update) is found only here. A folder whose name is not a chat's
 * file name (`safeFileName`) is not a chat's and is left alone.
 */
export async function chatsInOldLayout(root: string): Promise<string[]> {
  const chats: string[] = [];
  for (const name of (await readdir(root).catch(() => [] as string[])).sort()) {
    let chatId: string;
    try {
      chatId = decodeURIComponent(name);
    } catch {
      continue;
    }
    if (safeFileName(chatId) === name && (await holdsOldLayout(path.join(root, name)))) chats.push(chatId);
  }
  return chats;
}

/**
 * One old segment's notes, or undefined after moving it aside (bytes kept as `<name>.corrupt-<time>`, told to the data
 * health and the log) when it does not parse, does not match its schema or names another chat.
 */
async function readOldSegment(file: string, chatId: string, log: Log | undefined): Promise<OldNote[] | undefined> {
  const text = await textOf(file);
  if (text === undefined) return undefined;
  let reason: string;
  try {
    const checked = checkDocument(ARCHIVE_SEGMENT_SCHEMA, JSON.parse(text));
    const doc = checked.ok ? (checked.value as { chatId: string; notes: OldNote[] }) : undefined;
    if (doc && doc.chatId === chatId) return doc.notes;
    reason = doc ? 'it belongs to another chat' : (checked as { reason: string }).reason;
  } catch (err) {
    reason = `not valid JSON: ${(err as Error).message}`;
  }
  const movedTo = `${file}.corrupt-${Date.now()}`;
  await rename(file, movedTo);
  healthFor(file).corrupt(file, movedTo, `voice archive: ${reason}`);
  log?.warn({ file, movedTo, reason }, `voice archive: an old note file could not be converted and was set aside with its bytes kept (${reason})`);
  return undefined;
}

/** The context an old note kept in `context/<seq>.json` (an unreadable one is no context: its note still converts). */
async function oldContext(dir: string, seq: number): Promise<{ before: ContextMessage[]; after: ContextMessage[] }> {
  let doc: { before?: unknown; after?: unknown } | undefined;
  try {
    doc = JSON.parse((await textOf(path.join(dir, 'context', `${seq}.json`))) ?? '{}') as typeof doc;
  } catch {
    doc = undefined;
  }
  const list = (value: unknown) => (Array.isArray(value) ? cleanContext(value.filter((m) => m && typeof m === 'object') as ContextMessage[]) : []);
  return { before: list(doc?.before), after: list(doc?.after) };
}

/** An old note as a line of the new layout (undefined when it is not a note: it stays in its segment, set aside). */
function itemOf(note: OldNote, context: { before: ContextMessage[]; after: ContextMessage[] }): NoteItem | undefined {
  const kind = note.kind === 'audio' ? 'audio' : 'voice';
  if (note.removed) return noteItem({ id: note.messageId, seq: note.seq, senderId: '', text: '', at: note.at, kind, removed: true });
  return noteItem({
    id: note.messageId,
    seq: note.seq,
    senderId: note.senderId,
    senderName: note.senderName,
    text: note.transcript,
    at: note.at,
    kind,
    audioFile: note.audioFile?.split(path.sep).join('/'),
    before: context.before,
    after: context.after,
  });
}

/**
 * Converts a chat folder of the archive's earlier layout — segment files `notes/<n>.json` of 1,000 notes, each note's
 * context in `context/<seq>.json`, a search index `search-index.json` with `index-*` folders — into lines of the chat's
 * search log, at start (`AudioArchive.convertAll`) or at the chat's first use in a run. The notes keep their numbers; their
 * audio files are renamed after by `nameAudioByMessage`.
 *
 * Crash-safe: the notes are added first, each only when the log does not hold it yet (same number and message id);
 * only then are the old files removed, segments first. Cut short anywhere, the next start finishes it without a
 * duplicate and without losing a note. A segment that cannot be read is set aside (bytes kept), said to the data
 * health and in the log; its notes are not guessed.
 */
export async function migrateOldArchive(log: StoredSearchLog<NoteItem>, say?: Log): Promise<void> {
  const dir = log.folder;
  const notesDir = path.join(dir, 'notes');
  const entries = await readdir(dir).catch(() => [] as string[]);
  const segments = (await readdir(notesDir).catch(() => [] as string[])).filter((name) => SEGMENT.test(name)).sort();
  const leftovers = entries.filter((name) => name === 'context' || name === 'search-index.json' || name.startsWith('index-'));
  if (!segments.length && !leftovers.length) return;
  const old: Array<{ note: OldNote; file: string }> = [];
  const readable: string[] = [];
  for (const name of segments) {
    const notes = await readOldSegment(path.join(notesDir, name), log.chatId, say);
    if (!notes) continue;
    readable.push(name);
    for (const note of notes) old.push({ note, file: name });
  }
  const key = (seq: number, id: string) => `${seq}\n${id}`;
  const held = new Set((await log.where(() => true)).map((item) => key(item.seq, item.id)));
  const items: NoteItem[] = [];
  for (const { note } of old.sort((a, b) => a.note.seq - b.note.seq)) {
    if (held.has(key(note.seq, note.messageId))) continue;
    const item = itemOf(note, note.removed ? { before: [], after: [] } : await oldContext(dir, note.seq));
    if (item) items.push(item);
    held.add(key(note.seq, note.messageId));
  }
  await log.addMany(items);
  await log.flush().catch((err: Error) => {
    throw new Error(`voice archive of ${log.chatId}: the converted notes could not all be written (${err.message}); the old files stay and the conversion is tried again`);
  });
  // Kept aside as the store keeps the files it took in (`data/migrated/`), until a removal in the log makes that copy
  // older than the log (the core deletes it then).
  const aside = keptAsideFor(dir);
  await mkdir(path.join(aside, 'notes'), { recursive: true, mode: 0o700 });
  for (const name of readable) await rename(path.join(notesDir, name), path.join(aside, 'notes', name));
  // The folder stays while it holds segments set aside (their bytes are the owner's to look at).
  await rmdir(notesDir).catch(() => undefined);
  for (const name of leftovers) {
    // Search indexes are derived (the log has its own): only the notes' context is kept aside with them.
    if (name === 'context') await rm(path.join(aside, name), { recursive: true, force: true }).then(() => rename(path.join(dir, name), path.join(aside, name)));
    else await rm(path.join(dir, name), { recursive: true, force: true });
  }
  say?.info({ chat: log.chatId, notes: items.length, segments: readable.length }, `voice archive: converted ${items.length} note(s) of a chat from the old layout (notes/, context/) to the search log`);
}

/** An audio file named by its note's number, as versions before 2026-11 named them. */
const NUMBERED_AUDIO = /^\d+\.[a-z0-9]+$/i;

/**
 * Renames audio files named by their note's number (`audio/<seq>.<ext>`, as earlier versions kept them) after their
 * message (`audio/msg-<id>.<ext>`, see `audioFileFor`), so that a chat moving to another id — whose notes have numbers
 * of their own — can never put one note's audio under another's name. Only a chat whose `audio/` folder holds such a
 * file is read. Crash-safe: each file gets its new name as a second link first, then the lines are rewritten to name
 * it, which drops the old name; cut short, the next start finds the numbered names left and finishes.
 */
export async function nameAudioByMessage(log: StoredSearchLog<NoteItem>, say?: Log): Promise<void> {
  const names = await readdir(path.join(log.folder, 'audio')).catch(() => [] as string[]);
  if (!names.some((name) => NUMBERED_AUDIO.test(name))) return;
  const renamed = (item: NoteItem) => audioFileFor(item.id, path.extname(item.audioFile!).slice(1));
  const numbered = (item: NoteItem) => Boolean(item.audioFile && NUMBERED_AUDIO.test(path.basename(item.audioFile)));
  const items = await log.where(numbered);
  for (const item of items) {
    await link(log.filePath(item.audioFile!), log.filePath(renamed(item))).catch((err: NodeJS.ErrnoException) => {
      // Linked before a crash, or the audio is gone: the line is rewritten all the same.
      if (err.code !== 'EEXIST' && err.code !== 'ENOENT') throw err;
    });
  }
  // The core deletes the file names a line no longer names: the numbered ones go here.
  await log.changeWhere(numbered, (item) => ({ ...item, audioFile: renamed(item) }));
  await log.flush();
  if (items.length) say?.info({ chat: log.chatId, files: items.length }, `voice archive: named ${items.length} audio file(s) of a chat after their message instead of their number`);
}
