import { HISTORY_ENTRY_FIELDS } from '../../core/builtin.js';
import { Store, Type, type HistoryEntry } from '../../core/index.js';

/**
 * One message kept in the recall log: what someone said in the chat, or what the bot answered. The same shape as a
 * prompt-history entry (the log follows history appends), kept longer.
 */
export type LoggedMessage = HistoryEntry;

/** Longest text kept per message: the log is for finding things, a pasted novel is clipped. */
export const MAX_TEXT_CHARS = 4000;
/** Latest time a message may carry: its month's file name must stay `YYYY-MM`. */
const LAST_TIME = Date.UTC(9999, 11, 31);

/** The entry when `value` is a valid log line's content, otherwise undefined. */
export function validEntry(value: unknown): LoggedMessage | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  if (v.role !== 'user' && v.role !== 'assistant') return undefined;
  if (typeof v.text !== 'string' || typeof v.at !== 'number' || !(v.at >= 0 && v.at <= LAST_TIME)) return undefined;
  for (const key of ['id', 'senderId', 'senderName', 'media', 'answers', 'answersMessage'] as const) if (v[key] !== undefined && typeof v[key] !== 'string') return undefined;
  // Field by field in the line's order (no spread of small objects: this runs for every live message).
  const entry = {} as LoggedMessage;
  if (v.id) entry.id = v.id as string;
  entry.role = v.role;
  if (v.senderId) entry.senderId = v.senderId as string;
  if (v.senderName) entry.senderName = v.senderName as string;
  entry.text = v.text.length > MAX_TEXT_CHARS ? v.text.slice(0, MAX_TEXT_CHARS) : v.text;
  entry.at = v.at;
  if (v.media) entry.media = v.media as string;
  if (v.answers) entry.answers = v.answers as string;
  if (v.answersMessage) entry.answersMessage = v.answersMessage as string;
  return entry;
}

/** The entry a log line holds, or undefined (not JSON, not an entry). */
export function parseLine(line: string): LoggedMessage | undefined {
  try {
    return validEntry(JSON.parse(line));
  } catch {
    return undefined;
  }
}

/** One log line's item, as the store checks it (see `validEntry` for what loading also normalises). */
export const LOGGED_MESSAGE = Type.Object({ ...HISTORY_ENTRY_FIELDS, at: Type.Number({ minimum: 0, maximum: LAST_TIME }) });

/**
 * The recall log: `data/recall/<chat>/<YYYY-MM>.jsonl` on the core's per-chat search log (the layout the plugin has
 * always written). `.mydata` holds a person's private chat whole and, in groups, what they wrote and the bot's answers
 * to it (they may repeat their words); a message deleted for everyone leaves it (with the bot's answers to it), and an edited one gets its new words (the bot's answers to the old ones leave).
 */
export const RECALL_LOG = Store.chatSearchLog('recall', LOGGED_MESSAGE, {
  path: 'recall',
  title: 'recall log',
  section: 'recall log',
  exportAs: '',
  item: validEntry,
  people: {
    author: (e) => (e.role === 'user' ? e.senderId : e.answers),
    // The bot's answer stands for the message it answers: a delete for everyone of that message takes it along (it
    // may repeat the deleted words).
    messageId: (e) => e.id ?? e.answersMessage,
    // What people wrote gets the new words; the bot's answers to the old words go (they may repeat them).
    edited: (e, text) => (e.role === 'user' ? { ...e, text } : undefined),
  },
});
