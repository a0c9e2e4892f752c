import { DataWriteError, describeWriteError, StoreWriteError } from '../../api/errors.js';
import type { DeclaredStores, PersonIds, PrivacyParticipant } from '../../kernel/port/privacy-participant.js';

/**
 * Whether an item written by `senderId` may be changed (edited, deleted for everyone) by a change whose `author` is
 * given: only by its writer. Without an author (the linked account itself, a group admin's delete), yes.
 */
export function changeableBy(senderId: string | undefined, author: PersonIds | undefined): boolean {
  return !author || writtenBy(senderId, author);
}

/**
 * What is kept about a person outside every participant's own files: the files the stores set aside as unreadable
 * (see `SetAsideFiles`). Run after every participant, so a store that moves or removes its own goes first.
 */
export interface LeftoverFiles {
  exportFor(person: PersonIds): Promise<unknown[]>;
  deleteFor(person: PersonIds): Promise<number>;
  moveChat(from: string, to: string): Promise<void>;
}

/** The export's and the delete's section for `LeftoverFiles`. */
export const LEFTOVER_SECTION = 'files set aside as unreadable';

/** Every participant, so the core can answer `.mydata` and deletes across all stores. */
export class PrivacyRegistry {
  private readonly participants = new Map<string, PrivacyParticipant>();
  /** Stores adopted already: adopted again (a transport started anew), their sections would answer twice. */
  private readonly adopted = new WeakSet<DeclaredStores>();

  constructor(private readonly leftovers?: LeftoverFiles) {}

  register(participant: PrivacyParticipant): void {
    this.participants.set(participant.name, participant);
  }

  /**
   * Takes part for declared stores: their sections answer `.mydata`, deletes, deletes for everyone, edits and chat
   * moves as their declarations say. A section named like one taken already (a plugin called "history") never
   * replaces it: it is named `<section> (<namespace>)`. Stores adopted already are skipped.
   */
  adopt(stores: DeclaredStores): void {
    if (this.adopted.has(stores)) return;
    this.adopted.add(stores);
    for (const participant of stores.participants()) {
      const taken = this.participants.has(participant.name);
      this.register(taken ? { ...participant, name: `${participant.name} (${stores.plugin})` } : participant);
    }
  }

  list(): PrivacyParticipant[] {
    return [...this.participants.values()];
  }

  /** The export document: one section per participant (a failing one says so instead of failing the export). */
  async exportFor(person: PersonIds): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = { person, exportedAt: new Date().toISOString() };
    for (const p of this.list()) {
      try {
        out[p.name] = await p.exportFor(person);
      } catch (err) {
        out[p.name] = { error: `could not be read: ${(err as Error).message}` };
      }
    }
    const leftovers = await this.leftovers?.exportFor(person).catch((err: Error) => [{ error: `could not be read: ${err.message}` }]);
    if (leftovers?.length) out[LEFTOVER_SECTION] = leftovers;
    return out;
  }

  /** Deletes across every participant; rejects when one could not delete (so the user is never told "deleted"). */
  async deleteFor(person: PersonIds): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    const failures: string[] = [];
    const details: string[] = [];
    // What the person is told names each part and the cause in words (a full disk, a read-only folder), never a
    // server path or an engine's message; those stay in `details`, for the owner's log.
    const failed = (name: string, err: unknown) => {
      failures.push(`${name}: ${toldOf(err)}`);
      details.push(`${name}: ${(err as Error)?.message ?? String(err)}`);
    };
    for (const p of this.list()) {
      try {
        counts[p.name] = await p.deleteFor(person);
      } catch (err) {
        failed(p.name, err);
      }
    }
    if (this.leftovers) {
      try {
        const removed = await this.leftovers.deleteFor(person);
        if (removed) counts[LEFTOVER_SECTION] = removed;
      } catch (err) {
        failed(LEFTOVER_SECTION, err);
      }
    }
    if (failures.length) throw Object.assign(new Error(`could not delete everything (${failures.join('; ')})`), { details });
    return counts;
  }

  /** A message deleted for everyone: removed from every participant (`author`: see `PrivacyParticipant.revoke`). */
  async revoke(chatId: string, messageId: string, author?: PersonIds): Promise<number> {
    let removed = 0;
    for (const p of this.list()) if (p.revoke) removed += await p.revoke(chatId, messageId, author);
    return removed;
  }

  /**
   * An edited message: its new text replaces the old in every participant (`author`: see `PrivacyParticipant.edit`).
   * One participant failing never keeps the others from applying it; rejects afterwards naming the failures.
   */
  async edit(chatId: string, messageId: string, text: string, author?: PersonIds): Promise<number> {
    let changed = 0;
    const failures: string[] = [];
    for (const p of this.list()) {
      if (!p.edit) continue;
      try {
        changed += await p.edit(chatId, messageId, text, author);
      } catch (err) {
        failures.push(`${p.name}: ${(err as Error).message}`);
      }
    }
    if (failures.length) throw new Error(`could not apply the edit everywhere (${failures.join('; ')})`);
    return changed;
  }

  /**
   * A private chat moved from id `from` to `to`: every participant moves what it keeps (see `moveChatIn`), then the
   * leftovers; one failing never keeps the others from moving theirs.
   */
  async moveChat(from: string, to: string): Promise<void> {
    const moved = await moveChatIn(this.list(), from, to).then(
      () => undefined,
      (err: Error) => err,
    );
    const leftovers = await this.leftovers?.moveChat(from, to).then(
      () => undefined,
      (err: Error) => err,
    );
    if (moved || leftovers) throw new Error([moved?.message, leftovers && `could not move the ${LEFTOVER_SECTION} (${leftovers.message})`].filter(Boolean).join('; '));
  }
}

/**
 * Moves a chat's data from `from` to `to` in every participant. One participant failing never keeps the others from
 * moving theirs; rejects afterwards naming the failures.
 */
export async function moveChatIn(participants: PrivacyParticipant[], from: string, to: string): Promise<void> {
  const failures: string[] = [];
  for (const p of participants) {
    if (!p.moveChat) continue;
    try {
      await p.moveChat(from, to);
    } catch (err) {
      failures.push(`${p.name}: ${(err as Error).message}`);
    }
  }
  if (failures.length) throw new Error(`could not move the chat's data everywhere (${failures.join('; ')})`);
}

/** The digits of a WhatsApp id (`628123:7@s.whatsapp.net` → `628123`). */
const digitsOf = (id: string) => id.split('@')[0].split(':')[0];

/** True when `chatId` is the private chat with the person. */
export function isPrivateChatOf(chatId: string, person: PersonIds): boolean {
  return !chatId.endsWith('@g.us') && person.some((id) => digitsOf(id) === digitsOf(chatId) && id.split('@')[1] === chatId.split('@')[1]);
}

/** True when an entry was written by the person (any of their ids, any device). */
export function writtenBy(senderId: string | undefined, person: PersonIds): boolean {
  if (!senderId) return false;
  return person.some((id) => digitsOf(id) === digitsOf(senderId) && id.split('@')[1] === senderId.split('@')[1]);
}

/**
 * A part's failure as the person is told it: a store's own sentence as it is; a file or database error in words
 * (a full disk, a read-only folder), since its message names server paths or the engine; the core's own refusals
 * (a folder that is not a plain path) as they are.
 */
function toldOf(err: unknown): string {
  if (err instanceof StoreWriteError) return err.message;
  if (err instanceof DataWriteError) return `could not save it: ${describeWriteError(err.cause)}`;
  const code = (err as { code?: unknown })?.code;
  if (typeof code === 'string' && /^(E[A-Z]+|SQLITE_\w+)$/.test(code)) return `could not save it: ${describeWriteError(err)}`;
  return (err as Error)?.message ?? String(err);
}
