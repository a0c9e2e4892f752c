import type { HistoryEntry } from '../../core/index.js';

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
  for (const key of ['id', 'senderId', 'senderName', 'media'] as const) if (v[key] !== undefined && typeof v[key] !== 'string') return undefined;
  return {
    ...(v.id ? { id: v.id as string } : {}),
    role: v.role,
    ...(v.senderId ? { senderId: v.senderId as string } : {}),
    ...(v.senderName ? { senderName: v.senderName as string } : {}),
    text: v.text.slice(0, MAX_TEXT_CHARS),
    at: v.at,
    ...(v.media ? { media: v.media as string } : {}),
  };
}

/** The entry a log line holds, or undefined (not JSON, not an entry). */
export function parseLine(line: string): LoggedMessage | undefined {
  try {
    return validEntry(JSON.parse(line));
  } catch {
    return undefined;
  }
}
