import { inIdList, type Static, type StoredSearchLog } from '../../core/index.js';
import { queryTerms } from '../../core/builtin.js';
import type { KeptMessage } from './store.js';

type Kept = Static<typeof KeptMessage>;

const HOUR_MS = 60 * 60 * 1000;

export interface CatchUpQuery {
  chat?: string;
  sinceHours?: number;
  query?: string;
  unanswered?: boolean;
  now: number;
  maxResults: number;
}

/** A message's source as the owner reads it: chat, person, time (UTC). */
function sourceOf(chat: string, m: Kept): string {
  const who = m.own ? 'you' : (m.senderName ?? `+${m.senderId.split('@')[0]}`);
  return `${chat} · ${who} · ${new Date(m.at).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * What the watched chats said, for the model: every message of the asked time (or matching the words), oldest first,
 * each line with its source (chat · person · time), at most `maxResults` (the newest). With `unanswered`, only
 * questions of others that no message of the owner followed in that chat. Only the chats in `watched` are read.
 */
export async function catchUp(
  watched: Record<string, { name: string }>,
  logOf: (chatId: string) => StoredSearchLog<Kept>,
  q: CatchUpQuery,
  ownIds: string[],
): Promise<{ text: string; sources: string[] } | { error: string }> {
  const all = Object.entries(watched);
  if (!all.length) return { error: 'no chat is watched: the owner can let you read one with .watch <chat name>' };
  const wanted = q.chat?.trim().toLowerCase();
  const chats = wanted ? all.filter(([id, c]) => c.name.toLowerCase() === wanted || id.toLowerCase() === wanted) : all;
  if (!chats.length) return { error: `no watched chat is named "${q.chat}"; the watched chats are: ${all.map(([, c]) => c.name).join(', ')}` };
  const since = q.now - (q.sinceHours ?? 24) * HOUR_MS;
  const words = q.query?.trim() ?? '';
  const found: Array<{ chat: string; m: Kept }> = [];
  for (const [id, chat] of chats) {
    const log = logOf(id);
    let items: Kept[];
    if (words && queryTerms(words).length) items = (await log.search(words, { limit: q.maxResults, notBefore: since })).map((hit) => hit.message);
    else items = await log.where((m) => m.at >= since);
    if (q.unanswered) {
      const everything = await log.where((m) => m.at >= since);
      const own = (m: Kept) => m.own === true || inIdList(m.senderId, ownIds);
      items = items.filter((m) => !own(m) && m.text.includes('?') && !everything.some((later) => own(later) && later.at > m.at));
    }
    for (const m of items) found.push({ chat: chat.name, m });
  }
  found.sort((a, b) => a.m.at - b.m.at);
  const shown = found.slice(-q.maxResults);
  if (!shown.length) return { text: `Nothing in ${chats.map(([, c]) => c.name).join(', ')} for that (${words ? `words "${words}", ` : ''}since ${new Date(since).toISOString().slice(0, 16).replace('T', ' ')} UTC).`, sources: [] };
  const lines = shown.map(({ chat, m }) => `[${sourceOf(chat, m)}] ${m.text}`);
  const more = found.length > shown.length ? `\n(${found.length - shown.length} older message(s) left out.)` : '';
  return { text: `${lines.join('\n')}${more}`, sources: [...new Set(shown.slice(-8).map(({ chat, m }) => sourceOf(chat, m)))] };
}
