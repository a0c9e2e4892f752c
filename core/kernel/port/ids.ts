/**
 * Id helpers. WhatsApp ids come as phone jids (`628123@s.whatsapp.net`, with an optional device `:12`),
 * LIDs (`1234567@lid`), group jids (`1203@g.us`) or bare digits (config, console). We compare by the user part.
 */

/**
 * The user part of an id: digits before `@` and before a device suffix.
 * @example userPart('628123:7@s.whatsapp.net') // '628123'
 */
export function userPart(id: string): string {
  const at = id.indexOf('@');
  const user = at === -1 ? id : id.slice(0, at);
  const colon = user.indexOf(':');
  const digits = colon === -1 ? user : user.slice(0, colon);
  // (Asked several times per message: no regular expression for one leading character.)
  return (digits.startsWith('+') ? digits.slice(1) : digits).trim();
}

/** True for a group jid (`1203@g.us`): the id convention the transports share (see `Transport.isGroupChat`). */
export function isGroupId(id: string): boolean {
  return id.endsWith('@g.us');
}

/** True when two ids name the same chat (a phone jid and its bare digits alike; groups by their full id). */
export function sameChat(a: string, b: string): boolean {
  if (a === b) return true;
  if (isGroupId(a) || isGroupId(b)) return false;
  const ua = userPart(a);
  return ua !== '' && ua === userPart(b) && isLid(a) === isLid(b);
}

/** True for an `@lid` id. */
export function isLid(id: string): boolean {
  return id.endsWith('@lid');
}

/** True when `id` matches any id of `list` (jids or bare digits). */
export function inIdList(id: string | undefined, list: Iterable<string>): boolean {
  if (!id) return false;
  const user = userPart(id);
  if (!user) return false;
  for (const entry of list) if (userPart(entry) === user) return true;
  return false;
}

/**
 * True for a message in the account's own "Message yourself" chat, written by the account: a private chat whose id is
 * one of the ids the transport learnt at login (phone jid or LID), from one of them. On the owner's own number this is
 * the owner's command line (docs/owners/self-chat.md). Config `targetUserIds` do not count: only the transport knows
 * which account it is linked as.
 */
export function isSelfChat(message: { chatId: string; senderId: string; isGroup: boolean }, ownIds: readonly string[]): boolean {
  return !message.isGroup && ownIds.length > 0 && inIdList(message.chatId, ownIds) && inIdList(message.senderId, ownIds);
}
