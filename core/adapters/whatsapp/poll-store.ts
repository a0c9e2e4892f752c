import { Type } from '@sinclair/typebox';
import type { PluginStores } from '../../services/store/plugin-store.js';
import type { SqlDoc } from '../../services/store/sql-docs.js';
import { Store } from '../../services/store/store-declarations.js';
import { SENT_POLLS_SCHEMA } from './whatsapp-data-schemas.js';

/** One poll the bot sent: what its votes are read with. */
export interface SentPoll {
  id: string;
  chat: string;
  /** When it was sent (unix ms). */
  at: number;
  question: string;
  /** The options as sent: a vote names them only by their SHA-256. */
  options: string[];
  /** The poll's `messageSecret` (32 bytes, base64): every vote on it is encrypted with a key derived from it. */
  secret: string;
  /** The sender id of the message it answered (their `.mydata` delete removes it), when known. */
  about?: string;
}

/** How long a poll's votes are read: two months, then its secret goes (a later vote is ignored). */
export const POLL_KEEP_MS = 60 * 24 * 60 * 60_000;
/** At most this many polls are kept (the oldest go first). */
export const POLL_KEEP_MAX = 500;

/**
 * The polls the bot sent, as the WhatsApp adapter declares them (`whatsapp` namespace of the store database; earlier
 * versions kept `data/whatsapp/polls.json`, taken in once and kept aside).
 */
export const SENT_POLLS_STORE = Store.doc('polls', Type.Unsafe<{ polls: SentPoll[] }>(SENT_POLLS_SCHEMA.schema), () => ({ polls: [] }), {
  path: 'whatsapp/polls.json',
  title: SENT_POLLS_SCHEMA.name,
  // The schema cannot say it: one id once.
  check: (value) => {
    const ids = value.polls.map((p) => p.id);
    return new Set(ids).size === ids.length ? undefined : 'a poll id is listed twice';
  },
});

/**
 * The polls the bot sent (in the store database, checked against its schema on load: a bad list is set aside with its
 * bytes and polls start empty): a vote arrives encrypted with a key only the poll's secret gives, and names its
 * options only by hash, so both are kept with the poll, across restarts. Bounded by age and count.
 */
export class PollStore {
  private readonly doc: SqlDoc<{ polls: SentPoll[] }>;

  constructor(stores: PluginStores, private readonly now: () => number = Date.now) {
    this.doc = stores.document(SENT_POLLS_STORE);
  }

  private prune(polls: SentPoll[]): SentPoll[] {
    const oldest = this.now() - POLL_KEEP_MS;
    return polls.filter((p) => p.at >= oldest).slice(-POLL_KEEP_MAX);
  }

  /** Keeps a poll just sent; resolves once it is on disk (a vote must find it after a restart). */
  async add(poll: SentPoll): Promise<void> {
    await this.doc.update((d) => ({ polls: this.prune([...d.polls.filter((p) => p.id !== poll.id), poll]) }));
    await this.doc.flush();
  }

  /** The poll of that id, while it is kept. */
  async get(id: string | null | undefined): Promise<SentPoll | undefined> {
    if (!id) return undefined;
    const poll = (await this.doc.get()).polls.find((p) => p.id === id);
    return poll && poll.at >= this.now() - POLL_KEEP_MS ? poll : undefined;
  }

  /** The polls kept that match (the privacy export). */
  async where(matches: (poll: SentPoll) => boolean): Promise<SentPoll[]> {
    return (await this.doc.get()).polls.filter(matches);
  }

  /** Forgets the polls that match; resolves once no file holds them (the database, its WAL). Returns how many went. */
  async removeWhere(matches: (poll: SentPoll) => boolean): Promise<number> {
    let removed = 0;
    await this.doc.update((d) => {
      const kept = d.polls.filter((p) => !matches(p));
      removed = d.polls.length - kept.length;
      return { polls: kept };
    });
    if (removed) {
      await this.doc.flush();
      this.doc.erase();
    }
    return removed;
  }

  /** A private chat is known by `to` from now on: its polls follow (a vote then arrives under the new id). */
  async moveChat(from: string, to: string): Promise<void> {
    const moving = (await this.doc.get()).polls.some((p) => p.chat === from);
    if (!moving) return;
    await this.doc.update((d) => ({ polls: d.polls.map((p) => (p.chat === from ? { ...p, chat: to } : p)) }));
    await this.doc.flush();
    this.doc.erase();
  }

  async flush(): Promise<void> {
    await this.doc.flush();
  }
}
