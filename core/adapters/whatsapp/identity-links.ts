import { Type } from '#typebox';
import { PluginStores } from '../../services/store/plugin-store.js';
import type { SqlDoc } from '../../services/store/sql-docs.js';
import { Store } from '../../services/store/store-declarations.js';
import { IDENTITY_LINKS_SCHEMA } from './whatsapp-data-schemas.js';
import { isLid, userPart } from '../../kernel/port/ids.js';

/** The phone ↔ LID pairs: LID digits → phone digits. Other keys are kept. */
export interface UsersFile {
  lidToPhone?: Record<string, string>;
  [other: string]: unknown;
}

/**
 * The pairs as the WhatsApp adapter declares them (`whatsapp` namespace of the store database; earlier versions kept
 * `data/whatsapp/identity-links.json`, taken in once and kept aside). A person's `.mydata` holds and deletes their pair
 * (the entry names both of their ids); the bot learns it again from the next message they send (WhatsApp names both
 * ids on it), so answering them keeps working.
 */
export const IDENTITY_LINKS_STORE = Store.doc('identity-links', Type.Unsafe<UsersFile>(IDENTITY_LINKS_SCHEMA.schema), () => ({}), {
  path: 'whatsapp/identity-links.json',
  title: IDENTITY_LINKS_SCHEMA.name,
  section: 'WhatsApp ids (phone number and LID)',
  exportAs: '',
  people: {
    byId: (d) => (d.lidToPhone ??= {}),
    ids: (lid, phone) => [`${lid}@lid`, `${String(phone)}@s.whatsapp.net`],
  },
});

/**
 * The phone ↔ LID pairs WhatsApp reveals (v7 alt jids, `lid-mapping.update`, contacts), kept in memory for
 * `senderAltId` and recorded in the store database (`IDENTITY_LINKS_STORE`), so a message that carries only one id still
 * reaches plugins with both (the workspace plugin then links them in `data/workspaces/users.json`, which it alone
 * writes: one writer per file, no lost updates).
 *
 * @example
 * const links = await IdentityLinks.open(stores);
 * links.add('628123@s.whatsapp.net', '98765@lid');
 * links.altOf('98765@lid') // '628123@s.whatsapp.net'
 */
export class IdentityLinks {
  private readonly lidToPhone = new Map<string, string>();
  private readonly phoneToLid = new Map<string, string>();
  private readonly doc: SqlDoc<UsersFile>;
  /** Pairs learnt since the last write was queued: a burst (a big group's members, a history sync) is one update. */
  private pending = new Map<string, string>();
  private writeQueued = false;

  private constructor(stores: PluginStores, private readonly onError: (err: Error) => void) {
    this.doc = stores.document(IDENTITY_LINKS_STORE);
  }

  /**
   * Loads the pairs known so far (none stored: empty; the file of an earlier version is taken in, a bad one set aside
   * and reported). `stores`: the adapter's declared stores, or a data folder alone.
   */
  static async open(stores: PluginStores | string, onError: (err: Error) => void = () => undefined): Promise<IdentityLinks> {
    const declared = typeof stores === 'string' ? new PluginStores('whatsapp', stores, [IDENTITY_LINKS_STORE]) : stores;
    const links = new IdentityLinks(declared, onError);
    await links.reload();
    // A person's delete takes their pair from the document itself: the maps follow it.
    declared.onChange(IDENTITY_LINKS_STORE, () => links.reload());
    return links;
  }

  private async reload(): Promise<void> {
    const current = await this.doc.get();
    this.lidToPhone.clear();
    this.phoneToLid.clear();
    for (const [lid, phone] of Object.entries(current.lidToPhone ?? {})) this.remember(lid, phone);
    // Learnt in this tick and not in the document yet.
    for (const [lid, phone] of this.pending) this.remember(lid, phone);
  }

  /** Where earlier versions kept the pairs (its name in messages). */
  get file(): string {
    return this.doc.file;
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
   * Forgets the pairs that match (pairs naming the account itself), in memory and on disk; resolves once no file
   * holds them (the database, its WAL; rejects when it could not be written). Returns how many went.
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
    this.doc.erase();
    return gone.length;
  }

  /** Resolves when everything recorded so far is on disk. */
  async flush(): Promise<void> {
    this.writePending();
    await this.doc.flush();
  }
}
