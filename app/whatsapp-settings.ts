import type { BotConfig } from '../core/services/config/schema.js';
import { shownSocketUrl, type Settings } from '../core/services/config/settings.js';
import type { WhatsAppTransportOptions } from '../core/adapters/whatsapp/whatsapp-transport.js';

/** The part of the WhatsApp transport's options that comes from the settings (.env) and config.json. */
export type WhatsAppSettings = Pick<WhatsAppTransportOptions, 'dataDir' | 'socketUrl' | 'baileysLogLevel' | 'pairingPhone' | 'preferences' | 'webAddress' | 'mediaLoopbackForTests'>;

/**
 * Reads what the WhatsApp adapter needs from the settings and the live config, as plain options: the adapter itself
 * imports no config file (the composition root hands it these).
 *
 * @example
 * new WhatsAppTransport({ ...whatsAppSettings(app.settings, () => app.config), log });
 */
export function whatsAppSettings(settings: Settings, config: () => BotConfig): WhatsAppSettings {
  const url = settings.whatsappSocketUrl;
  return {
    dataDir: settings.dataDir,
    ...(url ? { socketUrl: { url, shown: shownSocketUrl(url) } } : {}),
    baileysLogLevel: settings.env.BAILEYS_LOG_LEVEL,
    pairingPhone: settings.env.PAIRING_PHONE,
    ...(settings.egressAllowPrivateHosts ? { mediaLoopbackForTests: true } : {}),
    // Read at each use: the dashboard may change them while the bot runs.
    preferences: () => {
      const { whatsapp, account } = config();
      return { readReceipts: whatsapp?.readReceipts, presence: whatsapp?.presence, selfChat: account?.mode === 'self-chat' };
    },
    webAddress: () => {
      const { host, port } = config();
      return port ? `http://${host.includes(':') ? `[${host}]` : host}:${port}/` : 'the web page (its address is in the "web server listening" line)';
    },
  };
}
