import path from 'node:path';
import { JsonFile } from '../../services/store/json-file.js';
import { IDENTITY_LINKS_SCHEMA } from './whatsapp-data-schemas.js';
import { isLid, userPart } from '../../kernel/port/ids.js';

/** `data/whatsapp/identity-links.json`: LID digits → phone digits. Other keys are kept. */
export interface UsersFile {
  lidToPhone?: Record<string, string>;
  [other: string]: unknown;
}

/**
 * The phone ↔ LID pairs WhatsApp reveals (v7 alt jids, `lid-mapping.update`, contacts), kept in memory for
 * `senderAltId` and recorded in `data/whatsapp/identity-links.json`, so a message that carries only one id still
 * reaches plugins with both (the workspace plugin then links them in `data/workspaces/users.json`, which it alone
 * writes: one writer per file, no lost updates).
 *
 * @example
 * const links = await IdentityLinks.open('data');
 * links.add('628123@s.whatsapp.net', '98765@lid');
 * links.altOf('98765@lid') // '628123@s.whatsapp.net'
 */
export class IdentityLinks {
  private readonly lidToPhone = new Map<string, string>();
  private readonly phoneToLid = new Map<string, string>();
  private readonly doc: JsonFile<UsersFile>;
  /** Pairs learnt since the last write was queued: a burst (a big group's members, a history sync) is one update. */
  private pending = new Map<string, string>();
  private writeQueued = false;

  private constructor(readonly file: string, private readonly onError: (err: Error) => void) {
    this.doc = new JsonFile<UsersFile>(file, () => ({}), { schema: IDENTITY_LINKS_SCHEMA, onCorrupt: (_file, _movedTo, err) => onError(err) });
  }

  /** Loads the pairs known so far (a missing file starts empty; a bad one is set aside and reported). */
  static async open(dataDir: string, onError: (err: Error) => void = () => undefined): Promise<IdentityLinks> {
    const links = new IdentityLinks(path.join(dataDir, 'whatsapp', 'identity-links.json'), onError);
    const current = await links.doc.get();
    for (const [lid, phone] of Object.entries(current.lidToPhone ?? {})) links.remember(lid, phone);
    return links;
  }

  private remember(lid: string, phone: string): boolean {
    const before = this.lidToPhone.get(lid);
    if (before === phone) return false;
    // The LID's earlier phone no longer leads to it: one LID, one phone, both ways.
    if (before !== undefined && this.phoneToLid.get(before) === lid) this.phoneToLid.delete(before);
    this.lidToPhone.set(lid, phone);
    this.phoneToLid.set(phone, lid);
    return true;
  }

  /** Records that two ids are the same person (either order: one phone jid, one LID). Returns true when new. */
  add(a: string | null | undefined, b: string | null | undefined): boolean {
    if (!a || !b) return false;
    const lid = isLid(a) ? a : isLid(b) ? b : undefined;
    const phone = lid === a ? b : a;
    if (!lid || isLid(phone) || !phone.endsWith('@s.whatsapp.net')) return false;
    const lidDigits = userPart(lid);
    const phoneDigits = userPart(phone);
    if (!/^\d+$/.test(lidDigits) || !/^\d+$/.test(phoneDigits)) return false;
    if (!this.remember(lidDigits, phoneDigits)) return false;
    this.pending.set(lidDigits, phoneDigits);
    if (!this.writeQueued) {
      this.writeQueued = true;
      queueMicrotask(() => this.writePending());
    }
    return true;
  }

  /** Puts the pairs learnt in this burst into the document, in place (no copy of the whole map per pair). */
  private writePending(): void {
    this.writeQueued = false;
    if (!this.pending.size) return;
    const pairs = this.pending;
    this.pending = new Map();
    this.doc
      .update((d) => {
        const map = (d.lidToPhone ??= {});
        for (const [lid, phone] of pairs) map[lid] = phone;
      })
      .catch((err) => this.onError(err as Error));
  }

  /** The other id of the same person (phone jid for a LID, LID for a phone jid), when known. */
  altOf(id: string): string | undefined {
    const digits = userPart(id);
    if (isLid(id)) {
      const phone = this.lidToPhone.get(digits);
      return phone ? `${phone}@s.whatsapp.net` : undefined;
    }
    const lid = this.phoneToLid.get(digits);
    return lid ? `${lid}@lid` : undefined;
  }

  /** True when the digits are a known LID (used to address outgoing mentions correctly). */
  isKnownLid(digits: string): boolean {
    return this.lidToPhone.has(digits);
  }

  /** Every pair known, as jids (the privacy export). */
  pairs(): Array<{ phone: string; lid: string }> {
    return [...this.lidToPhone].map(([lid, phone]) => ({ phone: `${phone}@s.whatsapp.net`, lid: `${lid}@lid` }));
  }

  /**
   * Forgets the pairs that match (a privacy delete), in memory and on disk; resolves once the file no longer holds
   * them (rejects when it could not be written). Returns how many went.
   */
  async removeWhere(matches: (pair: { phone: string; lid: string }) => boolean): Promise<number> {
    const gone = this.pairs().filter(matches);
    if (!gone.length) return 0;
    const lids = new Set(gone.map((pair) => userPart(pair.lid)));
    for (const lid of lids) {
      const phone = this.lidToPhone.get(lid);
      this.lidToPhone.delete(lid);
      this.pending.delete(lid);
      if (phone !== undefined && this.phoneToLid.get(phone) === lid) this.phoneToLid.delete(phone);
    }
    await this.doc.update((d) => {
      for (const lid of lids) delete d.lidToPhone?.[lid];
    });
    await this.doc.flush();
    return gone.length;
  }

  /** Resolves when everything recorded so far is on disk. */
  async flush(): Promise<void> {
    this.writePending();
    await this.doc.flush();
  }
}
