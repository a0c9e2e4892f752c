import { readdir, rename } from 'node:fs/promises';
import path from 'node:path';
import { describeWriteError, healthFor, JsonFile, safeFileName, Type, type DataSchema, type Logger, type Static } from '../../core/index.js';

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
});
export type Reminder = Static<typeof ReminderSchema>;

const ChatDocSchema = Type.Object({ chatId: Type.String({ minLength: 1 }), reminders: Type.Array(ReminderSchema) });
type ChatDoc = Static<typeof ChatDocSchema>;
const ZonesDocSchema = Type.Object({ zones: Type.Record(Type.String(), Type.String()) });
type ZonesDoc = Static<typeof ZonesDocSchema>;

/** `data/reminders/<chat>.json` (`{"version": 1, "chatId", "reminders"}`); TypeBox schemas are JSON Schema already. */
export const REMINDERS_SCHEMA: DataSchema = { name: 'reminders', version: 1, schema: ChatDocSchema };
/** `data/reminders/timezones.json`: each user's own `.timezone`. */
export const TIME_ZONES_SCHEMA: DataSchema = { name: 'reminder time zones', version: 1, schema: ZonesDocSchema };

const ZONES_FILE = 'timezones.json';

/** A change that is not on disk: `reason` is a sentence for the user ("the server's disk is full"). */
export class SaveError extends Error {
  constructor(readonly reason: string) {
    super(`could not save the reminders: ${reason}`);
    this.name = 'SaveError';
  }
}

/**
 * The reminders, one file per chat (`data/reminders/<chat>.json`), and each user's time zone
 * (`data/reminders/timezones.json`), on the core's JSON file store: each file is checked against its schema on load
 * (one that does not parse or match is moved aside as `<file>.corrupt-<time>` with its bytes, named in the log and
 * on the dashboard, and only that chat starts empty); changes are written atomically; a write that fails keeps the
 * change in memory, is logged once, told to the owners, retried, and named at stop (the data health).
 *
 * Changing methods resolve once the change is on disk and reject with a SaveError when it could not be written (it
 * stays in memory and is retried), so the user whose action it was can be told.
 */
export class ReminderStore {
  private readonly files = new Map<string, JsonFile<ChatDoc>>();
  /** The loaded documents (JsonFile changes them in place), for the synchronous readers. */
  private readonly docs = new Map<string, ChatDoc>();
  private readonly zonesFile: JsonFile<ZonesDoc>;
  private zones: ZonesDoc = { zones: {} };

  constructor(private readonly dir: string, private readonly log: Logger) {
    this.zonesFile = new JsonFile<ZonesDoc>(path.join(dir, ZONES_FILE), () => ({ zones: {} }), { schema: TIME_ZONES_SCHEMA });
  }

  /** Reads every chat's file and the time zones. Never rejects: what cannot be read starts empty and is reported. */
  async load(): Promise<void> {
    this.zones = await this.zonesFile.get();
    let names: string[] = [];
    try {
      names = await readdir(this.dir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') this.log.error({ err, dir: this.dir }, `remind: the reminders folder cannot be read (${code ?? (err as Error).message}); reminders start empty`);
    }
    for (const name of names) {
      if (!name.endsWith('.json') || name === ZONES_FILE) continue;
      const file = path.join(this.dir, name);
      const loaded = new JsonFile<ChatDoc>(file, () => ({ chatId: '', reminders: [] }), { schema: REMINDERS_SCHEMA });
      const doc = await loaded.get();
      if (!doc.chatId) continue; // set aside (reported by the store): that chat starts empty
      if (`${safeFileName(doc.chatId)}.json` === name) {
        this.files.set(doc.chatId, loaded);
        this.docs.set(doc.chatId, doc);
        continue;
      }
      // Copied in by hand under another chat's name: kept aside rather than sent to the wrong chat.
      const movedTo = `${file}.corrupt-${Date.now()}`;
      await rename(file, movedTo).then(
        () => healthFor(file).corrupt(file, movedTo, `names another chat (${doc.chatId.slice(0, 80)}) than its file name`),
        (err: unknown) => this.log.error({ err, file }, 'remind: a reminders file names another chat than its file name and could not be set aside; ignored'),
      );
    }
  }

  private fileOf(chatId: string): JsonFile<ChatDoc> {
    let file = this.files.get(chatId);
    if (!file) {
      file = new JsonFile<ChatDoc>(path.join(this.dir, `${safeFileName(chatId)}.json`), () => ({ chatId, reminders: [] }), { schema: REMINDERS_SCHEMA });
      this.files.set(chatId, file);
    }
    return file;
  }

  /** Changes a chat's document and waits until it is on disk (SaveError when it could not be written). */
  private async change<T>(chatId: string, change: (doc: ChatDoc) => T): Promise<T> {
    const file = this.fileOf(chatId);
    let result!: T;
    const doc = await file.update((d) => void (result = change(d)));
    this.docs.set(chatId, doc);
    await saved(file);
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

  /** How many reminders `userId` has set, over all chats. */
  countBy(userId: string): number {
    let n = 0;
    for (const doc of this.docs.values()) n += doc.reminders.filter((r) => r.creator === userId).length;
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

  /**
   * The chat is known as `to` from now on: its reminders (and a time zone set under `from`, a person's old id) move
   * there, added to any `to` already has; `from` is left empty. Resolves with the reminders moved once on disk.
   */
  async moveChat(from: string, to: string): Promise<Reminder[]> {
    const moving = this.docs.get(from)?.reminders ?? [];
    if (moving.length) {
      await this.change(to, (doc) => void doc.reminders.push(...moving.filter((r) => !doc.reminders.some((x) => x.id === r.id))));
      await this.removeWhere(from, () => true);
    }
    const zone = this.zones.zones[from];
    if (zone !== undefined) {
      await this.setZones((zones) => {
        zones[to] ??= zone;
        delete zones[from];
      });
    }
    return moving;
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

  /** Removes the zones of the users that match; resolves with how many went once that is on disk. */
  async removeZones(matches: (userId: string) => boolean): Promise<number> {
    const gone = Object.keys(this.zones.zones).filter(matches);
    if (gone.length) await this.setZones((zones) => gone.forEach((userId) => delete zones[userId]));
    return gone.length;
  }

  private async setZones(change: (zones: Record<string, string>) => void): Promise<void> {
    this.zones = await this.zonesFile.update((doc) => void change(doc.zones));
    await saved(this.zonesFile);
  }

  /**
   * Writes everything still pending, retrying failed writes once more (at stop). Rejects when something is still not
   * on disk; the data health has already logged it and names it at stop.
   */
  async flush(): Promise<void> {
    const results = await Promise.allSettled([this.zonesFile, ...this.files.values()].map((f) => f.flush()));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
}

/** Resolves once `file` is on disk; a SaveError saying why when it is not (the change stays in memory, retried). */
async function saved(file: JsonFile<unknown>): Promise<void> {
  try {
    await file.flush();
  } catch (err) {
    throw new SaveError(describeWriteError((err as { cause?: unknown }).cause ?? err));
  }
}
