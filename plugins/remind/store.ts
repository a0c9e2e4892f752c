import { readdir, readFile, rename } from 'node:fs/promises';
import path from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { Type, safeFileName, writeJsonAtomic, type Logger, type Static, type TObject } from '../../core/index.js';

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
});
export type Reminder = Static<typeof ReminderSchema>;

const ChatFileSchema = Type.Object({
  version: Type.Literal(1),
  chatId: Type.String({ minLength: 1 }),
  reminders: Type.Array(ReminderSchema),
});
type ChatFile = Static<typeof ChatFileSchema>;

const ZonesFileSchema = Type.Object({
  version: Type.Literal(1),
  zones: Type.Record(Type.String(), Type.String()),
});

const ZONES_FILE = 'timezones.json';

/** Thrown when a change could not be written: the user whose action it was is told. */
export class SaveError extends Error {}

/**
 * The reminders, one validated file per chat (`data/reminders/<chat>.json`), and each user's time zone
 * (`data/reminders/timezones.json`). Files are checked against their schema on load: one that does not parse or
 * does not match is moved aside (`<file>.corrupt-<time>`, bytes kept), logged, and only that chat starts empty.
 * Every change is written atomically (temporary file + rename), one write at a time per file.
 */
export class ReminderStore {
  private readonly chats = new Map<string, Reminder[]>();
  private zones: Record<string, string> = {};
  private readonly writes = new Map<string, Promise<void>>();

  constructor(private readonly dir: string, private readonly log: Logger) {}

  /** Reads every chat's file and the time zones. */
  async load(): Promise<void> {
    let names: string[] = [];
    try {
      names = await readdir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    for (const name of names) {
      if (!name.endsWith('.json')) continue;
      const file = path.join(this.dir, name);
      if (name === ZONES_FILE) {
        const doc = await this.read(file, ZonesFileSchema, 'time zones');
        if (doc) this.zones = doc.zones;
        continue;
      }
      const doc = await this.read(file, ChatFileSchema, 'reminders');
      if (doc && safeFileName(doc.chatId) + '.json' === name) this.chats.set(doc.chatId, doc.reminders);
      else if (doc) this.log.warn({ file }, 'a reminders file names another chat than its file name: ignored');
    }
  }

  private async read<S extends TObject>(file: string, schema: S, what: string): Promise<Static<S> | undefined> {
    let reason: string;
    try {
      const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
      if (Value.Check(schema, parsed)) return parsed;
      const first = Value.Errors(schema, parsed).First();
      reason = `does not match the ${what} schema${first ? ` at ${first.path || '/'}: ${first.message}` : ''}`;
    } catch (err) {
      reason = `is not valid JSON: ${(err as Error).message}`;
    }
    const movedTo = `${file}.corrupt-${Date.now()}`;
    try {
      await rename(file, movedTo);
      this.log.warn({ file, movedTo, reason }, `a ${what} file ${reason}: set aside, that chat starts without it`);
    } catch (err) {
      this.log.error({ err, file, reason }, `a ${what} file ${reason} and could not be set aside`);
    }
    return undefined;
  }

  /** Every chat that has reminders, with them. */
  all(): Array<[string, Reminder[]]> {
    return [...this.chats.entries()].filter(([, list]) => list.length > 0);
  }

  /** This chat's reminders, soonest first. */
  list(chatId: string): Reminder[] {
    return [...(this.chats.get(chatId) ?? [])].sort((a, b) => a.due - b.due);
  }

  get(chatId: string, id: string): Reminder | undefined {
    return this.chats.get(chatId)?.find((r) => r.id === id);
  }

  /** How many reminders `userId` has set, over all chats. */
  countBy(userId: string): number {
    let n = 0;
    for (const list of this.chats.values()) n += list.filter((r) => r.creator === userId).length;
    return n;
  }

  async add(chatId: string, reminder: Reminder): Promise<void> {
    const list = this.chats.get(chatId) ?? [];
    list.push(reminder);
    this.chats.set(chatId, list);
    await this.saveChat(chatId);
  }

  /** Changes one reminder (its next due time) and saves. */
  async update(chatId: string, id: string, change: (r: Reminder) => void): Promise<void> {
    const found = this.get(chatId, id);
    if (!found) return;
    change(found);
    await this.saveChat(chatId);
  }

  async remove(chatId: string, ids: string[]): Promise<void> {
    const list = this.chats.get(chatId);
    if (!list) return;
    this.chats.set(chatId, list.filter((r) => !ids.includes(r.id)));
    await this.saveChat(chatId);
  }

  zoneOf(userId: string): string | undefined {
    return this.zones[userId];
  }

  async setZone(userId: string, zone: string | undefined): Promise<void> {
    if (zone) this.zones[userId] = zone;
    else delete this.zones[userId];
    await this.write(ZONES_FILE, () => ({ version: 1, zones: this.zones }));
  }

  /** Resolves once every write started so far is done (or has failed and was logged). */
  async flush(): Promise<void> {
    await Promise.all([...this.writes.values()].map((w) => w.catch(() => undefined)));
  }

  private saveChat(chatId: string): Promise<void> {
    return this.write(`${safeFileName(chatId)}.json`, (): ChatFile => ({ version: 1, chatId, reminders: this.chats.get(chatId) ?? [] }));
  }

  /** Writes after the file's previous write, taking the state at write time, so the last change always lands last. */
  private write(name: string, snapshot: () => unknown): Promise<void> {
    const file = path.join(this.dir, name);
    const previous = this.writes.get(name) ?? Promise.resolve();
    const next = previous
      .catch(() => undefined)
      .then(() => writeJsonAtomic(file, snapshot()))
      .catch((err: unknown) => {
        this.log.error({ err, file }, 'could not save reminders');
        throw new SaveError(`could not save it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
      });
    this.writes.set(name, next);
    void next.catch(() => undefined).finally(() => {
      if (this.writes.get(name) === next) this.writes.delete(name);
    });
    return next;
  }
}
