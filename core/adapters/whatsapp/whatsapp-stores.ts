import { PluginStores } from '../../services/store/plugin-store.js';
import { CHAT_ROUTES_STORE } from './chat-routes.js';
import { IDENTITY_LINKS_STORE } from './identity-links.js';
import { SENT_POLLS_STORE } from './poll-store.js';
import { RESEND_STORE } from './resend-store.js';
import { SEEN_MESSAGES_STORE } from './seen-messages.js';

/** What the WhatsApp adapter keeps in the store database (`whatsapp` namespace), declared as plugins declare theirs. */
export const WHATSAPP_STORES = [SENT_POLLS_STORE, CHAT_ROUTES_STORE, IDENTITY_LINKS_STORE, RESEND_STORE, SEEN_MESSAGES_STORE];

/**
 * The adapter's declared stores of a data folder: one instance per transport, so every part of the adapter reads and
 * changes the same documents, and `.mydata`, deletes and chat moves follow from the declarations (`participants()`).
 */
export function whatsAppStores(dataDir: string): PluginStores {
  return new PluginStores('whatsapp', dataDir, WHATSAPP_STORES);
}
