/**
 * `@openclaw/crabline`'s WhatsApp Web wire-level server on 127.0.0.1: the kit's (`wa-assistant-bot/testing/whatsapp`),
 * under the name the wire tests know it by.
 *
 * @example
 * const wa = await CrablineWhatsApp.start(dir);
 * await wa.inbound({ from: '15551234567@s.whatsapp.net', text: 'hi' });
 * await wa.waitForSend((s) => s.text === 'hi back');
 */
export { WhatsAppServer as CrablineWhatsApp, type WireSend } from '../../app/testing/whatsapp.js';
