import { type PersonIds, type PrivacyParticipant } from '../../core/index.js';
import { changeableBy, isPrivateChatOf, writtenBy } from '../../core/storage.js';
import type { LoggedMessage, RecallStore } from './log-store.js';

/** What of a chat's log is about the person: the private chat with them whole (both sides), in groups what they wrote and the bot's answers to it. */
const aboutPerson = (chatId: string, person: PersonIds) => {
  const whole = isPrivateChatOf(chatId, person);
  // The bot's answers to the person may repeat their words: they go with them.
  return (entry: LoggedMessage) => whole || (entry.role === 'user' ? writtenBy(entry.senderId, person) : writtenBy(entry.answers, person));
};

/**
 * The recall log in the privacy controls: `.mydata` exports the person's part of every chat's log, `.mydata delete`
 * (and the dashboard's delete) removes it from disk and from the search index, a message deleted for everyone
 * leaves the log of its chat, and an edited message's new text replaces the old (on disk and in the index).
 */
export function recallPrivacy(logs: RecallStore, beforeUse: () => void = () => undefined): PrivacyParticipant {
  return {
    name: 'recall log',
    async exportFor(person) {
      beforeUse();
      const out: Record<string, LoggedMessage[]> = {};
      for (const chatId of await logs.chatIds()) {
        const entries = await logs.chat(chatId).where(aboutPerson(chatId, person));
        if (entries.length) out[chatId] = entries;
      }
      return out;
    },
    async deleteFor(person) {
      beforeUse();
      let removed = 0;
      for (const chatId of await logs.chatIds()) removed += await logs.chat(chatId).removeWhere(aboutPerson(chatId, person));
      return removed;
    },
    // A private chat moved from its LID to its phone id: its log goes with it (merged in time order when both hold one).
    moveChat: (from, to) => {
      beforeUse();
      return logs.moveChat(from, to);
    },
    revoke: (chatId, messageId, author) => {
      beforeUse();
      return logs.chat(chatId).removeWhere((entry) => entry.id === messageId && changeableBy(entry.senderId, author));
    },
    // What people wrote only: the bot's own answers carry no message id of theirs.
    edit: (chatId, messageId, text, author) => {
      beforeUse();
      return logs.chat(chatId).changeWhere((entry) => entry.id === messageId && entry.role === 'user' && changeableBy(entry.senderId, author), (entry) => ({ ...entry, text }));
    },
  };
}
