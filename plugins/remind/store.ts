import { Store, StoreWriteError, Type, type PluginStore, type Static } from '../../core/index.js';
import { describeWriteError } from '../../core/index.js';

/** One reminder as kept on disk. `due` is the next time it fires (epoch ms); `cron` makes it repeat. */
export const ReminderSchema = Type.Object({
  id: Type.String({ minLength: 1 }),
  text: Type.String(),
  creator: Type.String({ minLength: 1 }),
  /** The creator's time zone when it was set: the time is read, shown and repeated in it. */
  zone: Type.String({ minLength: 1 }),
  createdAt: Type.Number(),
  due: Type.Number(),
  cron: Type.Optional(Type.String()),
  label: Type.Optional(Type.String()),
  /** The chat message that set it: when that message is deleted for everyone, the reminder goes with it. */
  messageId: Type.Optional(Type.String()),
  /** A scheduled task (`.schedule`, the schedule_task tool): `text` is a prompt the model runs at its time as `creator`. */
  task: Type.Optional(Type.Boolean()),
  /** The task's last run failed and its creator was told; set until a run works again (told once, not every run). */
  failing: Type.Optional(Type.Boolean()),
});
export type Reminder = Static<typeof ReminderSchema>;

const ChatDocSchema = Type.Object({ chatId: Type.String({ minLength: 1 }), reminders: Type.Array(ReminderSchema) });
type ChatDoc = Static<typeof ChatDocSchema>;
const ZonesDocSchema = Type.Object({ zones: Type.Record(Type.String(), Type.String()) });

/**
 * `data/reminders/<chat>.json` (`{"version": 1, "chatId", "reminders"}`, the layout of earlier versions, kept): one
 * chat's reminders. In `.mydata` (section "reminders") a person's are those of their private chat and those they set
 * in groups; one whose message is deleted for everyone goes with it; they follow a chat moving to a new id.
 */
export const REMINDERS = Store.chatDoc('reminders', ChatDocSchema, (chatId) => ({ chatId, reminders: [] }), {
  path: 'reminders',
  title: 'reminders',
  section: 'reminders',
  // Copied in by hand under another chat's name: kept aside rather than sent to the wrong chat.
  check: (doc, chatId) => (doc.chatId === chatId ? undefined : `names another chat (${doc.chatId.slice(0, 80)}) than its file name`),
  people: { items: (doc) => doc.reminders, author: (r) => r.creator, messageId: (r) => r.messageId, same: (a, b) => a.id === b.id },
});

/** `data/reminders/timezones.json`: each user's own `.timezone` (theirs in `.mydata`, following a chat's new id). */
export const TIME_ZONES = Store.doc('time-zones', ZonesDocSchema, () => ({ zones: {} }), {
  path: 'reminders/timezones.json',
  title: 'reminder time zones',
  section: 'reminders',
  exportAs: 'timeZones',
  people: { byId: (doc) => doc.zones },
});

/** A change that is not on disk: `reason` is a sentence for the user ("the server's disk is full"). */
export class SaveError extends Error {
  constructor(readonly reason: string) {
    super(`could not save the reminders: ${reason}`);
    this.name = 'SaveError';
  }
}

/**
 * The reminders, one document per chat, and each user's time zone, on `host.store` (see REMINDERS, TIME_ZONES): each
 * file is checked on load (one that does not parse or match is set aside with its bytes, named in the log and on the
 * dashboard, and only that chat starts empty); changes are written atomically; a write that fails keeps the change in
 * memory, is logged once, told to the owners, retried, and named at stop.
 *
 * Changing methods resolve once the change is on disk and reject with a SaveError when it could not be written (it
 * stays in memory and is retried), so the user whose action it was can be told. `.mydata`, deletes, messages deleted
 * for everyone and chat moves are the core's, from the declarations; `reload(chatId)` follows what they changed.
 */
export class ReminderStore {
  /** The loaded documents (the store changes them in place), for the synchronous readers. */
  private readonly docs = new Map<string, ChatDoc>();
  private zones: { zones: Record<string, string> } = { zones: {} };

  constructor(private readonly store: PluginStore) {}

  /** Reads every chat's document and the time zones. Never rejects: what cannot be read starts empty and is reported. */
  async load(): Promise<void> {
    this.zones = await this.store.doc(TIME_ZONES).get();
    for (const chatId of await this.store.chats(REMINDERS)) await this.reload(chatId);
  }

  /** Reads one chat's document again (after the core changed or moved it). */
  async reload(chatId: string): Promise<void> {
    this.docs.set(chatId, await this.store.chat(chatId).doc(REMINDERS).get());
  }

  /** Changes a chat's document and waits until it is on disk (SaveError when it could not be written). */
  private async change<T>(chatId: string, change: (doc: ChatDoc) => T): Promise<T> {
    let result!: T;
    const doc = await saved(this.store.chat(chatId).doc(REMINDERS).save((d) => void (result = change(d))));
    this.docs.set(chatId, doc);
    return result;
  }

  /** Every chat that has reminders, with them. */
  all(): Array<[string, Reminder[]]> {
    return [...this.docs.entries()].filter(([, doc]) => doc.reminders.length > 0).map(([chatId, doc]) => [chatId, doc.reminders]);
  }

  /** This chat's reminders, soonest first. */
  list(chatId: string): Reminder[] {
    return [...(this.docs.get(chatId)?.reminders ?? [])].sort((a, b) => a.due - b.due);
  }

  get(chatId: string, id: string): Reminder | undefined {
    return this.docs.get(chatId)?.reminders.find((r) => r.id === id);
  }

  /** How many reminders (or, with `tasks`, scheduled tasks) `userId` has set, over all chats. */
  countBy(userId: string, tasks = false): number {
    let n = 0;
    for (const doc of this.docs.values()) n += doc.reminders.filter((r) => r.creator === userId && Boolean(r.task) === tasks).length;
    return n;
  }

  async add(chatId: string, reminder: Reminder): Promise<void> {
    await this.change(chatId, (doc) => void doc.reminders.push(reminder));
  }

  /** Changes one reminder (its next due time) and saves. */
  async update(chatId: string, id: string, change: (r: Reminder) => void): Promise<void> {
    if (!this.get(chatId, id)) return;
    await this.change(chatId, (doc) => {
      const found = doc.reminders.find((r) => r.id === id);
      if (found) change(found);
    });
  }

  /** Removes the reminders of `chatId` that match; resolves with them once that is on disk. */
  async removeWhere(chatId: string, matches: (r: Reminder) => boolean): Promise<Reminder[]> {
    if (!this.docs.get(chatId)?.reminders.some(matches)) return [];
    return this.change(chatId, (doc) => {
      const gone = doc.reminders.filter(matches);
      doc.reminders = doc.reminders.filter((r) => !matches(r));
      return gone;
    });
  }

  async remove(chatId: string, ids: string[]): Promise<void> {
    await this.removeWhere(chatId, (r) => ids.includes(r.id));
  }

  zoneOf(userId: string): string | undefined {
    return this.zones.zones[userId];
  }

  /** Every user's own zone (`.timezone`), by user id. */
  allZones(): Record<string, string> {
    return { ...this.zones.zones };
  }

  async setZone(userId: string, zone: string | undefined): Promise<void> {
    await this.setZones((zones) => {
      if (zone) zones[userId] = zone;
      else delete zones[userId];
    });
  }

  private async setZones(change: (zones: Record<string, string>) => void): Promise<void> {
    this.zones = await saved(this.store.doc(TIME_ZONES).save((doc) => void change(doc.zones)));
  }

  /**
   * Writes everything still pending, retrying failed writes once more (at stop). Rejects when something is still not
   * on disk; the data health has already logged it and names it at stop.
   */
  flush(): Promise<void> {
    return this.store.flush();
  }
}

/** Resolves once a change is on disk; a SaveError saying why when it is not (the change stays in memory, retried). */
async function saved<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    throw new SaveError(err instanceof StoreWriteError ? err.reason : describeWriteError((err as { cause?: unknown }).cause ?? err));
  }
}
