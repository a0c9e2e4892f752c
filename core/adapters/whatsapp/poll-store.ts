import { Type } from '#typebox';
import type { BoundedRecord } from '../../services/store/bounded-record.js';
import { databaseFor } from '../../services/store/database.js';
import type { PluginStores } from '../../services/store/plugin-store.js';
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

const SENT_POLL_ITEM = (SENT_POLLS_SCHEMA.schema as { properties: { polls: { items: object } } }).properties.polls.items;

/**
 * The polls the bot sent, as the WhatsApp adapter declares them (`whatsapp` namespace of the store database; earlier
 * versions kept `data/whatsapp/polls.json`, taken in once and kept aside), two months and at most 500. A person's
 * `.mydata` holds (without the secret) and deletes the polls of their private chat and those answering them; they
 * follow a private chat that moves to its phone number. Votes on a poll that went are no longer read.
 */
export const SENT_POLLS_STORE = Store.chatRecord('polls', Type.Unsafe<SentPoll>(SENT_POLL_ITEM), {
  path: 'whatsapp/polls.json',
  title: SENT_POLLS_SCHEMA.name,
  section: 'polls the bot sent',
  exportAs: '',
  chatOf: (poll) => poll.chat,
  withChat: (poll, chat) => ({ ...poll, chat }),
  keepMs: POLL_KEEP_MS,
  keepCount: POLL_KEEP_MAX,
  people: { author: (poll) => poll.about },
  exported: ({ secret: _secret, ...poll }) => ({ ...poll, at: new Date(poll.at).toISOString() }),
});

/** Where the previous version kept the polls in the database: one `Store.doc` row (`{ polls: [...] }`). */
const EARLIER_TABLE = 'doc:whatsapp:polls';

/**
 * The polls the bot sent (in the store database): a vote arrives encrypted with a key only the poll's secret gives,
 * and names its options only by hash, so both are kept with the poll, across restarts. Bounded by age and count.
 */
export class PollStore {
  private readonly record: BoundedRecord<SentPoll>;
  private takenIn: Promise<void> | undefined;

  constructor(private readonly stores: PluginStores) {
    this.record = stores.record(SENT_POLLS_STORE);
  }

  /**
   * Takes in the polls the previous version kept as one document row (each poll once: a later note of the same chat
   * and id replaces it, so a crash before the row goes only takes them in again), then removes that row.
   */
  ready(): Promise<void> {
    this.takenIn ??= (async () => {
      const db = databaseFor(this.stores.dataDir);
      if (!db.get("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?", [EARLIER_TABLE])) return;
      const row = db.get<{ value: string }>(`SELECT value FROM "${EARLIER_TABLE}" WHERE key = ''`);
      const polls = row ? ((JSON.parse(row.value) as { polls?: SentPoll[] }).polls ?? []) : [];
      const valid = polls.filter((p) => p && typeof p.id === 'string' && typeof p.chat === 'string' && typeof p.at === 'number' && typeof p.secret === 'string');
      if (valid.length) await this.record.add(valid.map(({ id, chat, at, question, options, secret, about }) => ({ id, chat, at, question, options, secret, ...(about ? { about } : {}) })));
      db.exec(`DROP TABLE "${EARLIER_TABLE}"`);
      db.erase();
    })();
    return this.takenIn;
  }

  /** Keeps a poll just sent; resolves once it is on disk (a vote must find it after a restart). */
  async add(poll: SentPoll): Promise<void> {
    await this.ready();
    await this.record.add([poll]);
  }

  /** The poll of that id, while it is kept. */
  async get(id: string | null | undefined): Promise<SentPoll | undefined> {
    if (!id) return undefined;
    await this.ready();
    return (await this.record.entries()).find((p) => p.id === id && p.at >= Date.now() - POLL_KEEP_MS);
  }

  async flush(): Promise<void> {
    await this.record.flush();
  }
}
