import type { IncomingMessage } from '../port/message.js';
import { inIdList, userPart } from '../port/ids.js';

/**
 * True when a message addresses the bot: always in a private chat; in a group only when one of the bot's ids
 * (config `targetUserIds` plus the ids the transport learnt at login, phone jid and LID) is mentioned,
 * or when the message replies to one of the bot's messages.
 *
 * @example
 * mentionsBot(message, ['628123', '1234567']) // true for "@1234567 hi" in a group
 */
export function mentionsBot(message: IncomingMessage, botIds: Iterable<string>): boolean {
  if (!message.isGroup) return true;
  const ids = [...botIds];
  if (message.mentions.some((m) => inIdList(m, ids))) return true;
  if (message.quoted && (message.quoted.fromBot || inIdList(message.quoted.senderId, ids))) return true;
  return false;
}

/**
 * Removes leading `@<bot id>` mentions from a text so "@628123 .ping" is seen as the command ".ping".
 * Mentions of other people, and the bot's mentions later in the sentence, are kept.
 */
export function stripBotMentions(text: string, botIds: Iterable<string>): string {
  const ids = new Set([...botIds].map(userPart));
  let rest = text.trimStart();
  for (;;) {
    const match = /^@(\d+)\s*/.exec(rest);
    if (!match || !ids.has(match[1])) return rest;
    rest = rest.slice(match[0].length);
  }
}
