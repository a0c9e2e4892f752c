import type { SharedContact, SharedLocation } from './message.js';

/**
 * The one line a transport puts in `IncomingMessage.text` for a shared location or contact cards (the structured
 * data rides in `location` / `contacts`): what a person would read in the chat, and never empty, so the message is
 * handled like any other relayed text.
 *
 * @example locationLine({ latitude: 48.8584, longitude: 2.2945, name: 'Eiffel Tower' }) // '📍 Eiffel Tower (48.8584, 2.2945)'
 */
export function locationLine(location: SharedLocation): string {
  const where = `${location.latitude}, ${location.longitude}`;
  const label = location.name || location.caption;
  return `📍 ${location.live ? 'live location ' : ''}${label ? `${label} (${where})` : where}`;
}

/** @example contactsLine([{ name: 'Ann', numbers: ['+6281234'] }]) // '👤 Ann +6281234' */
export function contactsLine(contacts: SharedContact[]): string {
  return contacts.map((c) => `👤 ${[c.name, ...c.numbers].filter(Boolean).join(' ')}`).join('\n');
}

/** A phone number as digits with one leading `+` (spaces, dashes, dots and brackets dropped); undefined when it is none. */
export function phoneNumber(text: string): string | undefined {
  const digits = text.replace(/[\s().-]/g, '').replace(/^\+/, '');
  return /^\d{5,16}$/.test(digits) ? `+${digits}` : undefined;
}
