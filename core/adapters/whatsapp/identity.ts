import { isLid, userPart } from '../../kernel/port/ids.js';
import type { IdentityLinks } from './identity-links.js';

/** Baileys' own LID ↔ phone store (`sock.signalRepository.lidMapping`), filled from the session's `lid-mapping` keys. */
export interface LidMappingStore {
  getPNForLID(lid: string): Promise<string | null>;
  /** The LID of a phone jid (Baileys may ask WhatsApp when its store does not know it). */
  getLIDForPN?(pn: string): Promise<string | null>;
}

const phoneJid = (digits: string) => `${digits}@s.whatsapp.net`;

/**
 * One answer to "who is this?" for every WhatsApp id: a person's phone jid and LID are the same person, resolved from
 * what the bot learnt (`identity-links.json`: alt jids, contacts, `lid-mapping.update`, group members) and, for a
 * LID nobody told the bot about, from Baileys' own store of the session (`signalRepository.lidMapping`). Every
 * message reaches the core with one canonical sender id — the phone jid when known, else the LID — and the other as
 * `senderAltId`, so owners and allow/block lists written with phone numbers, budgets and per-user data hold whatever
 * form WhatsApp used. A private chat keeps one id the same way; the move of its data from the other form is announced at first sight
 * (the stores move their own: the core's privacy participants).
 *
 * @example
 * const who = await identity.resolve('98765@lid'); // { id: '628123@s.whatsapp.net', alt: '98765@lid' }
 */
export class Identity {
  /** LIDs seen without a phone (so a mention of their digits is addressed as a LID). */
  private readonly lidsSeen = new Set<string>();
  private readonly migrated = new Set<string>();

  constructor(
    private readonly links: IdentityLinks,
    private readonly lidStore: () => LidMappingStore | undefined,
    private readonly onLearn: (phone: string, lid: string) => void,
    /**
     * Told once per chat and process that a private chat is known as `to` from now on instead of `from`: every store
     * moves what it keeps under `from` (awaited, so the message that revealed it is handled after the move).
     */
    private readonly onMove: (from: string, to: string) => Promise<void> = async () => undefined,
  ) {}

  /** The canonical id (phone jid when known) and the other form, when known. */
  async resolve(id: string, altHint?: string): Promise<{ id: string; alt?: string }> {
    if (altHint && altHint !== id) this.onLearn(isLid(id) ? altHint : id, isLid(id) ? id : altHint);
    if (!isLid(id)) {
      const lid = this.links.altOf(id);
      return lid ? { id, alt: lid } : { id };
    }
    let phone = this.links.altOf(id);
    if (!phone) {
      const store = this.lidStore();
      const found = store ? await store.getPNForLID(id).catch(() => null) : null;
      if (found) {
        phone = phoneJid(userPart(found));
        this.onLearn(phone, id);
      }
    }
    if (!phone) {
      this.lidsSeen.add(userPart(id));
      return { id };
    }
    return { id: phone, alt: id };
  }

  /** True when the digits belong to a LID (learnt or seen), so an `@<digits>` mention must be `<digits>@lid`. */
  isLid(digits: string): boolean {
    return this.links.isKnownLid(digits) || this.lidsSeen.has(digits);
  }

  noteLid(jid: string | null | undefined): void {
    if (jid && isLid(jid)) this.lidsSeen.add(userPart(jid));
  }

  /**
   * A private chat is known as `chatId` from now on: the move of what is kept under its other form `otherId` is
   * announced (once per chat and process; after a restart the next message announces it again, so a move a crash cut
   * short is finished).
   */
  async adoptChatId(chatId: string, otherId: string | undefined): Promise<void> {
    if (!otherId || otherId === chatId || this.migrated.has(otherId)) return;
    this.migrated.add(otherId);
    await this.onMove(otherId, chatId);
  }
}
