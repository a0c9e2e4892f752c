import { ApiError } from '../../api/errors.js';
import { sameChat } from '../../kernel/port/ids.js';

/*
 * What an API token may do: its scopes, written `send:<chat>`, `read:<chat>`, `prompt:<chat>` and `chats`, joined by
 * commas (`npm run token -- create --scope send:447700900123,read:120363000000000001@g.us`). A scope names one chat;
 * there is no wildcard: a token reaches only the chats its owner named.
 */

/** What a scope lets a token do. */
export type ScopeAction = 'send' | 'read' | 'prompt' | 'chats';

/** One scope: an action on one chat, or `chats` (list every chat the bot knows). */
export type Scope = { action: 'chats' } | { action: 'send' | 'read' | 'prompt'; chat: string };

const CHAT_ACTIONS = ['send', 'read', 'prompt'] as const;

/** The scope grammar in words, for errors and help. */
export const SCOPE_GRAMMAR =
  'scopes are send:<chat>, read:<chat>, prompt:<chat> and chats, joined by commas; <chat> is a phone number (digits, an optional +) or a chat id (<digits>@s.whatsapp.net, <id>@g.us, <digits>@lid)';

/** A chat id as WhatsApp and the console write them: a person's jid, a group's, a LID. */
const CHAT_ID = /^[^\s,:@]{1,100}@(s\.whatsapp\.net|g\.us|lid)$/;

/**
 * The chat a scope (or an API request's `to`) names, as a chat id: a phone number becomes the person's private chat
 * (`<digits>@s.whatsapp.net`), a chat id is kept. Undefined when it names no chat.
 *
 * @example chatOf('+44 7700 900123') // '447700900123@s.whatsapp.net'
 */
export function chatOf(text: string): string | undefined {
  const given = text.trim();
  const digits = given.replace(/[\s()+-]/g, '');
  if (/^\d{5,20}$/.test(digits) && !given.includes('@')) return `${digits}@s.whatsapp.net`;
  return CHAT_ID.test(given) ? given : undefined;
}

/**
 * Reads a comma-separated list of scopes. Throws an `ApiError` (`API_BAD_SCOPE`) naming the first one that is not a
 * scope, and for an empty list. Duplicates are kept once.
 *
 * @example parseScopes('send:447700900123,chats') // [{ action: 'send', chat: '447700900123@s.whatsapp.net' }, { action: 'chats' }]
 */
export function parseScopes(text: string | readonly string[]): Scope[] {
  const parts = (typeof text === 'string' ? text.split(',') : text.flatMap((t) => t.split(','))).map((p) => p.trim()).filter(Boolean);
  if (!parts.length) throw new ApiError('API_BAD_SCOPE', 400, `a token needs at least one scope: ${SCOPE_GRAMMAR}`);
  const scopes: Scope[] = [];
  for (const part of parts) {
    const scope = parseScope(part);
    if (!scopes.some((s) => formatScope(s) === formatScope(scope))) scopes.push(scope);
  }
  return scopes;
}

function parseScope(part: string): Scope {
  if (part === 'chats') return { action: 'chats' };
  const colon = part.indexOf(':');
  const action = colon > 0 ? part.slice(0, colon) : part;
  if (!(CHAT_ACTIONS as readonly string[]).includes(action)) throw new ApiError('API_BAD_SCOPE', 400, `"${part}" is not a scope: ${SCOPE_GRAMMAR}`);
  const chat = colon > 0 ? chatOf(part.slice(colon + 1)) : undefined;
  if (!chat) throw new ApiError('API_BAD_SCOPE', 400, `"${part}" names no chat: ${SCOPE_GRAMMAR}`);
  return { action: action as (typeof CHAT_ACTIONS)[number], chat };
}

/** A scope as written (`send:447700900123@s.whatsapp.net`, `chats`). */
export function formatScope(scope: Scope): string {
  return scope.action === 'chats' ? 'chats' : `${scope.action}:${scope.chat}`;
}

/**
 * True when `scopes` let a token do `action` in `chatId` (`chats`: list every chat, no chat given). A phone number's
 * scope covers that person's chat however its id is written (device suffix, bare digits); a group only by its id.
 */
export function allows(scopes: readonly Scope[], action: ScopeAction, chatId?: string): boolean {
  if (action === 'chats') return scopes.some((s) => s.action === 'chats');
  if (!chatId) return false;
  return scopes.some((s) => s.action === action && sameChat(s.chat, chatId));
}

/** The chats `scopes` name (any action), each once. */
export function scopedChats(scopes: readonly Scope[]): string[] {
  const chats: string[] = [];
  for (const s of scopes) if (s.action !== 'chats' && !chats.some((c) => sameChat(c, s.chat))) chats.push(s.chat);
  return chats;
}
