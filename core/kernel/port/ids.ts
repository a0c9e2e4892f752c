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
