import { Store, Type } from '../../core/index.js';
import { safeFileName } from '../../core/index.js';
import { ARCHIVE_SEGMENT_SCHEMA } from './schemas.js';

/** How many messages before and after a voice note are kept with it. */
export const CONTEXT_SIZE = 6;
/** Longest text kept of one context message. */
const MAX_CONTEXT_CHARS = 500;
/** Latest time a note may carry: its month's file name must stay `YYYY-MM`. */
const LAST_TIME = Date.UTC(9999, 11, 31);
/** The kind named in the first line of every month file of the archive: `{"voice-archive":1,"chat":"…"}`. */
export const ARCHIVE_HEADER = 'voice-archive';

/** One chat message kept as context around a voice note. */
export interface ContextMessage {
  id: string;
  senderId: string;
  senderName?: string;
  /** Unix ms. */
  at: number;
  text: string;
}

/**
 * One line of a chat's archive (the core's search log): a voice note with what the search reads (`text`, the
 * transcript), its message id (`id`), its number in the chat (`seq`, which also names its audio file), and its
 * context. An erased note keeps `id`, `seq`, `at` and `kind` with `removed: true` and nothing else.
 */
export interface NoteItem {
  id: string;
  seq: number;
  senderId: string;
  senderName?: string;
  text: string;
  at: number;
  kind: 'voice' | 'audio';
  /** The audio file, relative to the chat's folder (`audio/msg-<message id>.<ext>`; `audio/<seq>.<ext>` before 2026-11). */
  audioFile?: string;
  before?: ContextMessage[];
  after?: ContextMessage[];
  removed?: true;
}

export const CONTEXT_MESSAGE = Type.Object({ id: Type.String(), senderId: Type.String(), senderName: Type.Optional(Type.String()), at: Type.Number(), text: Type.String() });

/** One archive line, for the backup manifest and `npm run doctor`'s file check. */
export const ARCHIVE_NOTE = Type.Object({
  id: Type.String(),
  seq: Type.Integer({ minimum: 1 }),
  senderId: Type.String(),
  senderName: Type.Optional(Type.String()),
  text: Type.String(),
  at: Type.Number({ minimum: 0, maximum: LAST_TIME }),
  kind: Type.Union([Type.Literal('voice'), Type.Literal('audio')]),
  audioFile: Type.Optional(Type.String()),
  before: Type.Optional(Type.Array(CONTEXT_MESSAGE)),
  after: Type.Optional(Type.Array(CONTEXT_MESSAGE)),
  removed: Type.Optional(Type.Literal(true)),
});

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** Context messages as kept: the last CONTEXT_SIZE, each with its fields as strings and its text clipped. */
export function cleanContext(list: ContextMessage[] | undefined): ContextMessage[] {
  return (list ?? []).slice(-CONTEXT_SIZE).map((m) => ({ id: String(m.id), senderId: String(m.senderId), ...(m.senderName ? { senderName: String(m.senderName) } : {}), at: Number(m.at), text: clip(String(m.text ?? ''), MAX_CONTEXT_CHARS) }));
}

function contextList(value: unknown): ContextMessage[] | undefined | false {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) return false;
  for (const m of value as Array<Record<string, unknown>>) {
    if (!m || typeof m !== 'object' || typeof m.id !== 'string' || typeof m.senderId !== 'string' || typeof m.at !== 'number' || typeof m.text !== 'string') return false;
    if (m.senderName !== undefined && typeof m.senderName !== 'string') return false;
  }
  return value as ContextMessage[];
}

/** The note a stored line's value is, or undefined when it is not one (the line is skipped and reported). */
export function noteItem(value: unknown): NoteItem | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.id !== 'string' || !Number.isInteger(v.seq) || (v.seq as number) < 1 || typeof v.senderId !== 'string' || typeof v.text !== 'string') return undefined;
  if (typeof v.at !== 'number' || !(v.at >= 0 && v.at <= LAST_TIME) || (v.kind !== 'voice' && v.kind !== 'audio')) return undefined;
  if ((v.senderName !== undefined && typeof v.senderName !== 'string') || (v.audioFile !== undefined && typeof v.audioFile !== 'string')) return undefined;
  // An audio file is always `audio/<name>` inside the chat's folder: a line naming anything else is not a note.
  if (typeof v.audioFile === 'string' && (!/^audio\/[\w@%-][\w@%.-]*$/.test(v.audioFile) || v.audioFile.includes('..'))) return undefined;
  const before = contextList(v.before);
  const after = contextList(v.after);
  if (before === false || after === false || (v.removed !== undefined && v.removed !== true)) return undefined;
  const item: NoteItem = { id: v.id, seq: v.seq as number, senderId: v.senderId, text: v.text, at: v.at, kind: v.kind };
  if (v.senderName) item.senderName = v.senderName as string;
  if (v.audioFile) item.audioFile = v.audioFile as string;
  if (before?.length) item.before = before;
  if (after?.length) item.after = after;
  if (v.removed) item.removed = true;
  return item;
}

/** An archived voice note (its context is read with `context`). */
export interface ArchivedNote {
  /** Position in its chat's archive, from 1. */
  seq: number;
  messageId: string;
  senderId: string;
  senderName?: string;
  at: number;
  transcript: string;
  kind: 'voice' | 'audio';
  /** The audio file, relative to the chat's archive folder. */
  audioFile?: string;
  /** Erased (deleted for everyone, or a privacy delete): the number and message id stay, the content is gone. */
  removed?: boolean;
}

/**
 * Where a note's audio lives in its chat's folder: named by its message (`audio/msg-<id>.<ext>`), so a chat moving to
 * another id, or a conversion run twice, finds the same file and never takes another note's.
 */
export function audioFileFor(messageId: string, ext: string): string {
  return `audio/msg-${safeFileName(messageId).slice(0, 160)}.${ext.replace(/[^a-z0-9]/gi, '').slice(0, 8) || 'bin'}`;
}

/** The archive's folder under DATA_DIR (each chat's audio files; chat folders of the old layout until converted). */
export const ARCHIVE_FOLDER = 'audio_archive';

/**
 * The voice archive, declared to the core: `data/audio_archive/<chat>/<YYYY-MM>.jsonl` (the core's per-chat search
 * log, the engine recall uses) plus each note's audio file. From this declaration alone the core answers a person's
 * `.mydata` (their notes with transcript, context and audio), their delete (their notes erased — the number and message
 * id stay, so a reply quoting one is told it is gone instead of transcribing it again — their audio deleted, and their
 * messages taken out of other notes' context), a message deleted for everyone (the note, or the message in a note's
 * context), an edit (a context message's new words) and a chat moving from its LID to its phone id (audio along).
 */
export const VOICE_ARCHIVE = Store.chatSearchLog(ARCHIVE_HEADER, ARCHIVE_NOTE, {
  path: ARCHIVE_FOLDER,
  title: 'voice archive',
  // The month files' layout since they moved onto the search log (version 1 was the segment files).
  version: 2,
  // Chat folders not converted yet (or a backup of one) hold them; converted at start (archive-migration.ts).
  earlierFiles: [{ path: 'audio_archive/<chat>/notes/<n>.json', schema: ARCHIVE_SEGMENT_SCHEMA }],
  section: 'voice notes',
  exportAs: '',
  item: noteItem,
  files: (note) => (note.audioFile ? [note.audioFile] : []),
  erased: {
    marker: (note) => ({ id: note.id, seq: note.seq, senderId: '', text: '', at: note.at, kind: note.kind, removed: true as const }),
    is: (note) => note.removed === true,
  },
  people: {
    author: (note) => note.senderId || undefined,
    messageId: (note) => note.id,
    carried: {
      messages: (note) => [...(note.before ?? []), ...(note.after ?? [])],
      withMessages: (note, messages) => {
        const cut = note.before?.length ?? 0;
        const list = (from: ContextMessage[] | undefined, offset: number) => cleanContext((from ?? []).flatMap((m, i) => (messages[offset + i] ? [{ ...m, text: messages[offset + i]!.text }] : [])));
        const before = list(note.before, 0);
        const after = list(note.after, cut);
        const { before: _b, after: _a, ...rest } = note;
        return { ...rest, ...(before.length ? { before } : {}), ...(after.length ? { after } : {}) };
      },
    },
  },
});
