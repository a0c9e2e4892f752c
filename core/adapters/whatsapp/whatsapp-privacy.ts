import { normalizeMessageContent, proto, type proto as Proto } from '@whiskeysockets/baileys';
import { changeableBy, isPrivateChatOf, writtenBy } from '../../services/store/privacy.js';
import type { PersonIds, PrivacyParticipant } from '../../kernel/port/privacy-participant.js';
import type { PollStore, SentPoll } from './poll-store.js';
import type { ResendStore, SentEntry } from './resend-store.js';

/** The quote/mention part of a sent message (any kind of content carries it the same way). */
function contextOf(message: Proto.IMessage): Proto.IContextInfo | undefined {
  const content = normalizeMessageContent(message) as Record<string, unknown> | undefined;
  for (const part of Object.values(content ?? {})) {
    const info = (part as { contextInfo?: Proto.IContextInfo | null } | null)?.contextInfo;
    if (info) return info;
  }
  return undefined;
}

/** A sent message that holds something of the person: in their private chat, or answering, quoting or mentioning them. */
function concerns(entry: SentEntry, person: PersonIds): boolean {
  if (isPrivateChatOf(entry.chat, person) || writtenBy(entry.about, person)) return true;
  const context = contextOf(entry.message);
  return writtenBy(context?.participant ?? undefined, person) || (context?.mentionedJid ?? []).some((id) => writtenBy(id, person));
}

/** A poll sent in the person's private chat, or answering them. */
function pollConcerns(poll: SentPoll, person: PersonIds): boolean {
  return isPrivateChatOf(poll.chat, person) || writtenBy(poll.about, person);
}

/** A sent message of `chatId` that quotes message `messageId`, written by someone `author` covers (see `changeableBy`). */
function quotes(entry: SentEntry, chatId: string, messageId: string, author: PersonIds | undefined): boolean {
  if (entry.chat !== chatId) return false;
  const context = contextOf(entry.message);
  if (context?.stanzaId !== messageId) return false;
  // In a private chat the quoted message's sender is the chat itself when the quote does not name one.
  return changeableBy(context.participant ?? (chatId.endsWith('@g.us') ? undefined : chatId), author);
}

/**
 * The WhatsApp adapter's own files in the privacy controls (`.mydata`, its delete, deletes for everyone and edits):
 *
 * - `data/whatsapp/sent-messages.jsonl`, the bot's messages of the last 14 days kept so another device's retry can be
 *   answered: the replies in the person's private chat (and their media keys) and, in groups, the answers to their
 *   messages and the messages quoting or mentioning them go, as do replies quoting a message deleted for everyone or edited (the quote holds the old words).
 *   A device that asks for one of those again later gets no answer and shows "waiting for this message".
 * - the polls the bot sent (the `whatsapp` polls of the store database) (question, options and the secret their votes are encrypted
 *   with, two months): those in the person's private chat and those answering them go (the export leaves the secret
 *   out), and they follow a private chat that moves to its phone number. Votes on a poll that went are no longer read.
 *
 * Kept, because the linked device cannot work without them and they hold no words of anyone: the session in
 * `data/session_auth/` (Signal sessions and sender keys, device lists and Baileys' own LID mapping, which encryption
 * to the person needs) and `data/whatsapp/seen-messages.json` (ids of the last messages handled, so a message
 * delivered twice is answered once).
 */
export function whatsAppPrivacy(stores: () => { resend?: ResendStore; polls?: PollStore }): PrivacyParticipant[] {
  const asJson = (entry: SentEntry) => ({ id: entry.id, chat: entry.chat, at: new Date(entry.at).toISOString(), message: proto.Message.toObject(proto.Message.fromObject(entry.message), { bytes: String, longs: Number }) });
  return [
    {
      name: 'messages the bot sent (kept 14 days for resends)',
      exportFor: async (person) => stores().resend?.where((e) => concerns(e, person)).map(asJson) ?? [],
      deleteFor: async (person) => (await stores().resend?.removeWhere((e) => concerns(e, person))) ?? 0,
      revoke: async (chatId, messageId, author) => (await stores().resend?.removeWhere((e) => quotes(e, chatId, messageId, author), { onlyOnMatch: true })) ?? 0,
      edit: async (chatId, messageId, _text, author) => (await stores().resend?.removeWhere((e) => quotes(e, chatId, messageId, author), { onlyOnMatch: true })) ?? 0,
    },
    {
      name: 'polls the bot sent',
      exportFor: async (person) => (await stores().polls?.where((p) => pollConcerns(p, person)))?.map(({ secret: _secret, ...poll }) => ({ ...poll, at: new Date(poll.at).toISOString() })) ?? [],
      deleteFor: async (person) => (await stores().polls?.removeWhere((p) => pollConcerns(p, person))) ?? 0,
      moveChat: async (from, to) => stores().polls?.moveChat(from, to),
    },
  ];
}
