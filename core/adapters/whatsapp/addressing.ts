import { isLid, userPart } from '../../kernel/port/ids.js';
import type { ChatRoutes } from './chat-routes.js';
import type { IdentityLinks } from './identity-links.js';
import type { LidMappingStore } from './identity.js';

const PHONE_SERVER = '@s.whatsapp.net';

/**
 * Where a private chat's messages are sent, as opposed to the id its data is kept under. The core knows a private
 * chat by one id (the phone jid when known, see `Identity`), but WhatsApp has moved contacts to LIDs: a chat that
 * arrives on `<lid>@lid` must be answered there, or WhatsApp refuses the message (ack 463, no privacy token) or
 * opens a "ghost chat" the person never sees (Baileys #2683). So every reply, reaction, edit and typing state goes
 * to the address the chat last arrived on; a message the bot starts itself (owner notice, reminder) to a phone jid
 * goes to the person's LID when it is known (learnt pairs, then Baileys' own lid-mapping store), else to the phone.
 * The address a chat arrived on is kept in the store (`ChatRoutes`), so answers after a restart go there too.
 *
 * @example
 * addressing.noteArrival('628123@s.whatsapp.net', '98765@lid');
 * await addressing.addressOf('628123@s.whatsapp.net') // '98765@lid'
 */
export class Addressing {
  constructor(
    /** Private chat id (the data key) → the plain jid its last message arrived on, once the stores are open. */
    private readonly routes: () => ChatRoutes | undefined,
    private readonly links: () => IdentityLinks | undefined,
    private readonly lidStore: () => LidMappingStore | undefined,
  ) {}

  /** A message of private chat `chatId` arrived on `jid` (its key's remoteJid, without device). */
  noteArrival(chatId: string, jid: string | undefined): void {
    if (!jid || chatId.endsWith('@g.us') || !(isLid(jid) || jid.endsWith(PHONE_SERVER))) return;
    this.routes()?.set(chatId, { arrivedOn: jid });
  }

  /** The jid to send to for chat `chatId` (groups and LIDs as they are). */
  async addressOf(chatId: string): Promise<string> {
    if (!chatId.endsWith(PHONE_SERVER)) return chatId;
    const arrived = this.routes()?.get(chatId)?.arrivedOn;
    if (arrived) return arrived;
    const learnt = this.links()?.altOf(chatId);
    if (learnt) return learnt;
    const store = this.lidStore();
    const found = store?.getLIDForPN ? await store.getLIDForPN(chatId).catch(() => null) : null;
    return found && isLid(found) ? `${userPart(found)}@lid` : chatId;
  }
}
