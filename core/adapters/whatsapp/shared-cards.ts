import type { proto } from '@whiskeysockets/baileys';
import type { OutgoingContact, OutgoingLocation, SharedContact, SharedLocation } from '../../kernel/port/message.js';
import { phoneNumber } from '../../kernel/port/shared.js';

/** A vCard value unescaped (RFC 6350: `\,` `\;` `\\` and `\n`). */
function unescape(value: string): string {
  return value.replace(/\\([,;\\nN])/g, (_, c: string) => (c === 'n' || c === 'N' ? ' ' : c)).trim();
}

/** vCard text escaped for a value. */
function escape(value: string): string {
  return value.replace(/[\r\n]+/g, ' ').replace(/([\\,;])/g, '\\$1');
}

/**
 * The name and phone numbers on a vCard (WhatsApp's `contactMessage.vcard`): `FN` (else `N`, else the card's display
 * name), and every `TEL` — its `waid` (the WhatsApp number) when it has one, else its value — as `+digits`, once each.
 * Folded lines are unfolded first; anything else on the card is left out.
 *
 * @example parseVcard('BEGIN:VCARD\nFN:Ann\nTEL;waid=628123:+62 812 3\nEND:VCARD') // { name: 'Ann', numbers: ['+628123'] }
 */
export function parseVcard(vcard: string, displayName = ''): SharedContact {
  const lines = vcard.replace(/\r?\n[ \t]/g, '').split(/\r?\n/);
  let name = '';
  let structured = '';
  const numbers: string[] = [];
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const [key, ...params] = line.slice(0, colon).split(';');
    const value = line.slice(colon + 1);
    const prop = key.replace(/^item\d+\./i, '').toUpperCase();
    if (prop === 'FN') name = unescape(value);
    else if (prop === 'N') structured = value.split(';').map(unescape).filter(Boolean).reverse().join(' ');
    else if (prop === 'TEL') {
      const waid = params.find((p) => /^waid=/i.test(p))?.slice(5);
      const number = phoneNumber(waid ?? value) ?? phoneNumber(value);
      if (number && !numbers.includes(number)) numbers.push(number);
    }
  }
  return { name: (name || structured || displayName).slice(0, 200), numbers: numbers.slice(0, 20) };
}

/** A vCard for one name and number, with the `waid` WhatsApp uses to offer "Message" on the card. */
export function vcardOf(contact: OutgoingContact): string {
  const number = phoneNumber(contact.number);
  if (!number) throw new Error(`not a phone number: ${contact.number}`);
  const digits = number.slice(1);
  return ['BEGIN:VCARD', 'VERSION:3.0', `FN:${escape(contact.name)}`, `TEL;type=CELL;waid=${digits}:${number}`, 'END:VCARD'].join('\n');
}

/** The contact cards of a message (one card, or a contacts array), or undefined when it carries none. */
export function contactsOf(content: proto.IMessage | null | undefined): SharedContact[] | undefined {
  if (content?.contactMessage) return [parseVcard(content.contactMessage.vcard ?? '', content.contactMessage.displayName ?? '')];
  const many = content?.contactsArrayMessage?.contacts;
  if (many?.length) return many.slice(0, 20).map((c) => parseVcard(c.vcard ?? '', c.displayName ?? ''));
  return undefined;
}

const finite = (n: number | null | undefined): n is number => typeof n === 'number' && Number.isFinite(n);

/** The place a location or live location message points at, or undefined when it carries none (or no coordinates). */
export function locationOf(content: proto.IMessage | null | undefined): SharedLocation | undefined {
  const still = content?.locationMessage;
  if (still && finite(still.degreesLatitude) && finite(still.degreesLongitude)) {
    return {
      latitude: still.degreesLatitude,
      longitude: still.degreesLongitude,
      ...(still.name ? { name: still.name } : {}),
      ...(still.address ? { address: still.address } : {}),
      ...(still.isLive ? { live: true } : {}),
      ...(still.comment ? { caption: still.comment } : {}),
    };
  }
  const live = content?.liveLocationMessage;
  if (live && finite(live.degreesLatitude) && finite(live.degreesLongitude)) {
    return {
      latitude: live.degreesLatitude,
      longitude: live.degreesLongitude,
      live: true,
      ...(live.sequenceNumber ? { sequence: Number(live.sequenceNumber) } : {}),
      ...(live.caption ? { caption: live.caption } : {}),
    };
  }
  return undefined;
}

/** Baileys' content for a location the bot sends. */
export function locationContent(location: OutgoingLocation): { location: proto.Message.ILocationMessage } {
  return { location: { degreesLatitude: location.latitude, degreesLongitude: location.longitude, ...(location.name ? { name: location.name } : {}), ...(location.address ? { address: location.address } : {}) } };
}

/** Baileys' content for a contact card the bot sends. */
export function contactContent(contact: OutgoingContact): { contacts: { displayName: string; contacts: Array<{ displayName: string; vcard: string }> } } {
  return { contacts: { displayName: contact.name, contacts: [{ displayName: contact.name, vcard: vcardOf(contact) }] } };
}
