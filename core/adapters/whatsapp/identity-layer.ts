import type { GroupMetadata } from '@whiskeysockets/baileys';
import type { Logger } from '../../services/log/logger.js';
import type { PluginStores } from '../../services/store/plugin-store.js';
import { isLid, userPart } from '../../kernel/port/ids.js';
import type { IncomingMessage } from '../../kernel/port/message.js';
import { Addressing } from './addressing.js';
import type { ChatRoutes } from './chat-routes.js';
import { Identity, type LidMappingStore } from './identity.js';
import { IdentityLinks } from './identity-links.js';
import { plainJid } from './message-mapper.js';
import type { WhatsAppSocket } from './socket.js';

/**
 * The identity layer: who is who across WhatsApp's two ids of a person (phone jid and LID). It learns the pairs every
 * socket event reveals (`lid-mapping.update`, history sync, contacts, group members, the account's own), names each
 * incoming sender and private chat by one id (moving a chat's data when it first shows up under the other), and
 * addresses what goes out: a private chat where it last arrived, an `@<digits>` mention as the id it is.
 *
 * @example
 * const people = new IdentityLayer(log, () => connection.socket, (from, to) => events.onChatIdChange?.(from, to));
 * await people.open(stores);
 * await people.canonicalize(message);
 */
export class IdentityLayer {
  private linksFile: IdentityLinks | undefined;
  private identity: Identity | undefined;
  /** Where each private chat's messages go (the address it last arrived on; a LID rather than a phone jid). */
  private readonly addressing = new Addressing(() => this.routes(), () => this.linksFile, () => this.lidStore());

  constructor(
    private readonly log: Logger,
    private readonly socket: () => WhatsAppSocket | undefined,
    /** Announces that a private chat is known by another id from now on (the core moves every store's data). */
    private readonly onChatIdChange: (from: string, to: string) => Promise<void>,
    /** The account's own ids (phone jid, LID), once the credentials name them. */
    private readonly ownIds: () => string[] = () => [],
    /** Where each private chat last arrived (kept in the store), once it is open. */
    private readonly routes: () => ChatRoutes | undefined = () => undefined,
  ) {}

  /** The phone ↔ LID pairs known (in the store database), once opened. */
  get links(): IdentityLinks | undefined {
    return this.linksFile;
  }

  /** Loads the pairs known so far (the adapter's declared stores). */
  async open(stores: PluginStores): Promise<void> {
    this.linksFile = await IdentityLinks.open(stores, (err) => this.log.warn({ err }, 'could not save the phone ↔ LID pairs learnt (kept in memory, tried again)'));
    this.identity = new Identity(
      this.linksFile,
      () => this.lidStore(),
      (phone, lid) => this.learn(phone, lid),
      async (from, to) => {
        await this.onChatIdChange(from, to);
      },
    );
  }

  /**
   * Baileys' own LID store of the session, the source for pairs the bot was never told, with the same guard as what
   * is learnt: an answer pairing the account's own phone or LID with someone else's id is not used (it would name a
   * contact as the account, or send that contact's messages to "Message yourself").
   */
  private lidStore(): LidMappingStore | undefined {
    const store = this.socket()?.signalRepository?.lidMapping;
    if (!store) return undefined;
    const checked = (a: string, b: string | null): string | null => {
      if (!b || !this.namesOwnWithOther(plainJid(a), plainJid(b))) return b;
      this.log.debug({ asked: plainJid(a), answer: plainJid(b) }, "not using a pair of Baileys' LID store that names the account's own id with someone else's");
      return null;
    };
    const getLIDForPN = store.getLIDForPN?.bind(store);
    return {
      getPNForLID: async (lid) => checked(lid, await store.getPNForLID(lid)),
      ...(getLIDForPN ? { getLIDForPN: async (pn: string) => checked(pn, await getLIDForPN(pn)) } : {}),
    };
  }

  /** Learns the pairs a socket's events reveal. */
  attach(socket: WhatsAppSocket): void {
    socket.ev.on('lid-mapping.update', (pair) => this.learn(pair.pn, pair.lid));
    socket.ev.on('messaging-history.set', (history) => {
      for (const pair of history.lidPnMappings ?? []) this.learn(pair.pn, pair.lid);
    });
    const learnContacts = (contacts: Array<{ id?: string; lid?: string; phoneNumber?: string }>) => {
      for (const c of contacts) this.learn(c.phoneNumber ?? (c.id && !isLid(c.id) ? c.id : undefined), c.lid ?? (c.id && isLid(c.id) ? c.id : undefined));
    };
    socket.ev.on('contacts.upsert', learnContacts);
    socket.ev.on('contacts.update', learnContacts);
  }

  learn(phone: string | null | undefined, lid: string | null | undefined): void {
    if (this.namesOwnWithOther(plainJid(phone), plainJid(lid))) {
      this.log.debug({ phone: plainJid(phone), lid: plainJid(lid) }, "ignored a phone ↔ LID pair naming the account's own id with someone else's");
      return;
    }
    if (this.linksFile?.add(plainJid(phone), plainJid(lid))) this.log.debug({ phone: plainJid(phone), lid: plainJid(lid) }, 'learnt a phone ↔ LID pair');
  }

  /**
   * True for a pair with the account's own phone or LID on one side only. The account's ids show up where a
   * contact's are expected (the owner typing on the phone: a `fromMe` message names the account as sender), and such
   * a pair would send that contact's reminders and notices to "Message yourself".
   */
  private namesOwnWithOther(a: string | undefined, b: string | undefined): boolean {
    if (!a || !b) return false;
    const own = new Set(this.ownIds().map((id) => userPart(id)));
    return own.has(userPart(a)) !== own.has(userPart(b));
  }

  /**
   * The account's own ids are known (each open): its own pair is learnt, and a pair naming one of them with someone
   * else's id, learnt before this guard (an older version, or before the ids were known), is dropped from the file.
   */
  async learnOwn(phone: string | undefined, lid: string | undefined): Promise<void> {
    const own = new Set([phone, lid].filter((id): id is string => Boolean(id)).map((id) => userPart(id)));
    if (own.size && this.linksFile) {
      const gone = await this.linksFile.removeWhere((pair) => own.has(userPart(pair.phone)) !== own.has(userPart(pair.lid)));
      if (gone) this.log.warn({ removed: gone }, `dropped ${gone} phone ↔ LID pair(s) that named the account's own id as a contact's (messages for those contacts went to "Message yourself")`);
    }
    if (phone && lid) this.learn(phone, lid);
  }

  /** A group's members, as its metadata lists them: each one's pair, and the LIDs among them. */
  learnMembers(meta: GroupMetadata): void {
    for (const p of meta.participants) {
      this.learn(p.phoneNumber ?? (isLid(p.id) ? undefined : p.id), p.lid ?? (isLid(p.id) ? p.id : undefined));
      this.identity?.noteLid(p.lid ?? p.id);
    }
  }

  /** The other id of the same person, when known. */
  altOf(id: string): string | undefined {
    return this.linksFile?.altOf(id);
  }

  /** The canonical id (phone jid when known) and the other form, when known. */
  async resolve(id: string, altHint?: string): Promise<{ id: string; alt?: string }> {
    return this.identity ? this.identity.resolve(id, altHint) : { id };
  }

  /** True once the stores are open (before that, incoming ids stay as they came). */
  get ready(): boolean {
    return Boolean(this.identity);
  }

  /**
   * One sender id per person and one chat id per private chat, whatever form WhatsApp used: the phone jid when it
   * is known (config lists owners by phone), else the LID; the other form becomes `senderAltId`.
   */
  async canonicalize(message: IncomingMessage): Promise<void> {
    if (!this.identity) return;
    if (message.fromMe) {
      // The owner typing on the phone: the chat is named as the contact's incoming messages name it.
      // The sender's alt is the account's own other id, not the chat's: only the chat's own alt (remoteJidAlt) says
      // who the contact is, and that pair was learnt from the key already.
      if (!message.isGroup) message.chatId = (await this.identity.resolve(message.chatId)).id;
      delete message.senderAltId;
      return;
    }
    for (const m of message.mentions) this.identity.noteLid(m);
    const rawSender = message.senderId;
    const who = await this.identity.resolve(rawSender, message.senderAltId);
    message.senderId = who.id;
    if (who.alt && who.alt !== who.id) message.senderAltId = who.alt;
    else delete message.senderAltId;
    if (!message.isGroup) {
      message.chatId = who.id;
      await this.identity.adoptChatId(who.id, who.alt);
    }
  }

  /** A message of private chat `chatId` arrived on `jid`: the chat's answers go there. */
  noteArrival(chatId: string, jid: string | undefined): void {
    this.addressing.noteArrival(chatId, jid);
  }

  /** The jid to send to for chat `chatId`. */
  async addressOf(chatId: string): Promise<string> {
    return this.addressing.addressOf(chatId);
  }

  /** Jids for `@<digits>` mentions in an outgoing text: a known LID stays a LID, anything else is a phone jid. */
  mentionsIn(text: string, ownLid: string | undefined): string[] {
    const jids = new Set<string>();
    for (const match of text.matchAll(/@(\d{5,20})\b/g)) {
      const digits = match[1];
      const isOwnLid = ownLid && userPart(ownLid) === digits;
      // A LID-only user (no phone known) must be mentioned as `<lid>@lid`; as a phone jid the mention is broken.
      jids.add(isOwnLid || this.identity?.isLid(digits) ? `${digits}@lid` : `${digits}@s.whatsapp.net`);
    }
    return [...jids];
  }

  /** Resolves when every pair learnt so far is on disk. */
  async flush(): Promise<void> {
    await this.linksFile?.flush();
  }
}
