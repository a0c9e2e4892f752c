import { isPrivateChatOf, writtenBy } from '../../services/store/privacy.js';
import type { PersonIds, PrivacyParticipant } from '../../kernel/port/privacy-participant.js';
import type { PollStore, SentPoll } from './poll-store.js';

/** A poll sent in the person's private chat, or answering them. */
function pollConcerns(poll: SentPoll, person: PersonIds): boolean {
  return isPrivateChatOf(poll.chat, person) || writtenBy(poll.about, person);
}

/**
 * The polls the bot sent (the `whatsapp` polls of the store database: question, options and the secret their votes are
 * encrypted with, two months) in the privacy controls: those in the person's private chat and those answering them go
 * (the export leaves the secret out), and they follow a private chat that moves to its phone number. Votes on a poll
 * that went are no longer read. The adapter's other data follows from its declarations (see whatsapp-stores.ts).
 *
 * Kept, because the linked device cannot work without them and they hold no words of anyone: the session in
 * `data/session_auth/` (Signal sessions and sender keys, device lists and Baileys' own LID mapping, which encryption
 * to the person needs) and `data/whatsapp/seen-messages.json` (ids of the last messages handled, so a message
 * delivered twice is answered once).
 */
export function whatsAppPrivacy(stores: () => { polls?: PollStore }): PrivacyParticipant[] {
  return [
    {
      name: 'polls the bot sent',
      exportFor: async (person) => (await stores().polls?.where((p) => pollConcerns(p, person)))?.map(({ secret: _secret, ...poll }) => ({ ...poll, at: new Date(poll.at).toISOString() })) ?? [],
      deleteFor: async (person) => (await stores().polls?.removeWhere((p) => pollConcerns(p, person))) ?? 0,
      moveChat: async (from, to) => stores().polls?.moveChat(from, to),
    },
  ];
}
