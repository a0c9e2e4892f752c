import { changeableBy, isPrivateChatOf, writtenBy, type Logger, type PersonIds, type PrivacyParticipant } from '../../core/index.js';
import type { Reminder, ReminderStore } from './store.js';

/** What of a chat's reminders is the person's: every one in their private chat, in groups those they set. */
const ofPerson = (chatId: string, person: PersonIds) => {
  const whole = isPrivateChatOf(chatId, person);
  return (r: Reminder) => whole || writtenBy(r.creator, person);
};

/**
 * The reminders in the privacy controls: `.mydata` exports the person's reminders (every chat) and their own time
 * zone; `.mydata delete` (and the dashboard's delete) cancels and removes them; a message deleted for everyone that
 * set a reminder cancels it (it would otherwise send the deleted words later).
 *
 * `cancelled` stops the timers of reminders that go; `moved` re-arms them under the chat's new id when a private
 * chat moves from its LID to its phone id (the reminders are sent to the new id).
 */
export function remindPrivacy(store: ReminderStore, cancelled: (chatId: string, reminders: Reminder[]) => void, log: Logger, moved: (from: string, to: string, reminders: Reminder[]) => void = () => undefined): PrivacyParticipant {
  return {
    name: 'reminders',
    async exportFor(person) {
      const reminders: Record<string, Reminder[]> = {};
      for (const [chatId, list] of store.all()) {
        const mine = list.filter(ofPerson(chatId, person));
        if (mine.length) reminders[chatId] = mine;
      }
      const timeZones = Object.fromEntries(Object.entries(store.allZones()).filter(([userId]) => writtenBy(userId, person)));
      return { timeZones, reminders };
    },
    /** Rejects (SaveError) when the removal is not on disk, so the user is never told "deleted" for it. */
    async deleteFor(person) {
      let removed = 0;
      let failure: unknown;
      const attempt = async (work: () => Promise<number>) => {
        try {
          removed += await work();
        } catch (err) {
          failure ??= err; // the others still go; the change that failed stays made in memory and is retried
        }
      };
      for (const [chatId] of store.all()) {
        const matches = ofPerson(chatId, person);
        cancelled(chatId, store.list(chatId).filter(matches));
        await attempt(async () => (await store.removeWhere(chatId, matches)).length);
      }
      await attempt(() => store.removeZones((userId) => writtenBy(userId, person)));
      if (failure) throw failure;
      return removed;
    },
    async moveChat(from, to) {
      cancelled(from, store.list(from));
      const reminders = await store.moveChat(from, to);
      moved(from, to, reminders);
    },
    // Only the sender's own delete (or an admin's) cancels: a member's forged delete of another's message must not.
    async revoke(chatId, messageId, author) {
      const matches = (r: Reminder) => r.messageId === messageId && changeableBy(r.creator, author);
      const gone = store.list(chatId).filter(matches);
      if (!gone.length) return 0;
      cancelled(chatId, gone);
      // Gone from memory at once (it never fires); a failed write is retried by the store and reported by the data
      // health, and must not keep the other stores from removing the message.
      await store.removeWhere(chatId, matches).catch((err: unknown) => log.error({ err, chat: chatId }, 'remind: a reminder whose message was deleted for everyone is cancelled but could not be saved yet'));
      log.info({ chat: chatId, count: gone.length }, 'remind: the message that set a reminder was deleted for everyone; the reminder is cancelled');
      return gone.length;
    },
  };
}
