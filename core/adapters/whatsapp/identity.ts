import { rename, stat } from 'node:fs/promises';
import path from 'node:path';
import { safeFileName } from '../../services/store/atomic.js';
import { isLid, userPart } from '../../kernel/port/ids.js';
import type { IdentityLinks } from './identity-links.js';

/** Baileys' own LID ↔ phone store (`sock.signalRepository.lidMapping`), filled from the session's `lid-mapping` keys. */
export interface LidMappingStore {
  getPNForLID(lid: string): Promise<string | null>;
  /** The LID of a phone jid (Baileys may ask WhatsApp when its store does not know it). */
  getLIDForPN?(pn: string): Promise<string | null>;
}

/** Folders under data/ that hold one file per chat id (moved to the chat's one id when it is first seen in the other form). */
export const PER_CHAT_FOLDERS = ['history', 'memory'];

const phoneJid = (digits: string) => `${digits}@s.whatsapp.net`;

/**
 * One answer to "who is this?" for every WhatsApp id: a person's phone jid and LID are the same person, resolved from
 * what the bot learnt (`identity-links.json`: alt jids, contacts, `lid-mapping.update`, group members) and, for a
 * LID nobody told the bot about, from Baileys' own store of the session (`signalRepository.lidMapping`). Every
 * message reaches the core with one canonical sender id — the phone jid when known, else the LID — and the other as
 * `senderAltId`, so owners and allow/block lists written with phone numbers, budgets and per-user data hold whatever
 * form WhatsApp used. A private chat keeps one id the same way; data of the other form is moved over at first sight.
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
    private readonly dataDir: string,
    private readonly onLearn: (phone: string, lid: string) => void,
    private readonly onError: (err: Error, detail: Record<string, unknown>) => void,
    /** Called before the files of `from` move to `to`, so no store keeps writing them under the old id. */
    private readonly beforeMove: (from: string, to: string) => Promise<void> = async () => undefined,
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
   * A private chat is known as `chatId` from now on: per-chat files kept under its other form `otherId` are renamed
   * to it (once per chat and process; when both exist, both are kept and the clash is reported).
   */
  async adoptChatId(chatId: string, otherId: string | undefined): Promise<void> {
    if (!otherId || otherId === chatId || this.migrated.has(otherId)) return;
    this.migrated.add(otherId);
    try {
      await this.beforeMove(otherId, chatId);
    } catch (err) {
      this.onError(err as Error, { from: otherId, to: chatId });
    }
    // `.jsonl`: the history's append-only log of lines not yet folded into the JSON file (after a crash; `beforeMove`
    // folds a running bot's own). An empty file holds nothing to move, nor anything a move would overwrite.
    for (const [folder, suffix] of PER_CHAT_FOLDERS.flatMap((f) => ['.json', '.jsonl'].map((x) => [f, x] as const))) {
      const from = path.join(this.dataDir, folder, `${safeFileName(otherId)}${suffix}`);
      const to = path.join(this.dataDir, folder, `${safeFileName(chatId)}${suffix}`);
      try {
        if (!(await holdsData(from))) continue;
        if (await holdsData(to)) {
          this.onError(new Error('both forms of a private chat have data; kept both'), { from, to });
          continue;
        }
        await rename(from, to);
      } catch (err) {
        this.onError(err as Error, { from, to });
      }
    }
  }
}

async function holdsData(file: string): Promise<boolean> {
  return ((await stat(file).catch(() => undefined))?.size ?? 0) > 0;
}
