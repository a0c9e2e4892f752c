import type { App } from '../app.js';
import { whatsAppSettings } from '../whatsapp-settings.js';
import { WhatsAppTransport } from '../../core/adapters/whatsapp/whatsapp-transport.js';
import type { WhatsAppTransportOptions } from '../../core/adapters/whatsapp/options.js';

/**
 * The real WhatsApp transport for `app`, from its settings (data folder, `WA_WEBSOCKET_URL`, preferences) as
 * `npm start` makes it (video previews in the app's jail); `overrides` replace transport options (a socket factory of a test, what a download returns…).
 */
export function whatsAppTransportOf(app: App, overrides: Partial<WhatsAppTransportOptions> = {}): WhatsAppTransport {
  return new WhatsAppTransport({ ...whatsAppSettings(app.settings, () => app.config), log: app.log.child({ part: 'whatsapp' }), dailySweeps: app.dailySweeps, printQr: () => undefined, jail: app.bot.jail, ...overrides });
}
