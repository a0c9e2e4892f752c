import type { IncomingMessage } from '../port/message.js';

/**
 * A shared location's or contact cards' data as the model reads it (framed as quoted content by the caller: a card's
 * name or a place's address is someone else's text): one `field: value` line each, so coordinates and numbers reach
 * the model exactly, not only the name WhatsApp shows. Undefined for a message that shares neither.
 *
 * @example
 * sharedDataText({ location: { latitude: 1.5, longitude: 2, name: 'Home' }, … })
 * // 'location\nlatitude: 1.5\nlongitude: 2\nname: Home\nmap: https://www.openstreetmap.org/?mlat=1.5&mlon=2'
 */
export function sharedDataText(message: Pick<IncomingMessage, 'location' | 'contacts'>): string | undefined {
  const { location, contacts } = message;
  if (location) {
    return [
      location.live ? `live location${location.sequence ? ` (update ${location.sequence})` : ''}` : 'location',
      `latitude: ${location.latitude}`,
      `longitude: ${location.longitude}`,
      ...(location.name ? [`name: ${location.name}`] : []),
      ...(location.address ? [`address: ${location.address}`] : []),
      ...(location.caption ? [`caption: ${location.caption}`] : []),
      `map: https://www.openstreetmap.org/?mlat=${location.latitude}&mlon=${location.longitude}`,
    ].join('\n');
  }
  if (contacts?.length) {
    return contacts.map((c, i) => [`contact card${contacts.length > 1 ? ` ${i + 1}` : ''}`, `name: ${c.name}`, `phone numbers: ${c.numbers.length ? c.numbers.join(', ') : '(none)'}`].join('\n')).join('\n\n');
  }
  return undefined;
}
