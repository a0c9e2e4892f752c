import { decryptPollVote, getAggregateVotesInPollMessage, jidNormalizedUser, type proto, type WAMessageKey } from '@whiskeysockets/baileys';
import type { SentPoll } from './poll-store.js';

/** A jid without its device part (`123:4@lid` → `123@lid`), or nothing. */
function plain(jid: string | null | undefined): string | undefined {
  return jid ? jidNormalizedUser(jid) || undefined : undefined;
}

/**
 * The ids a vote may have been encrypted under. A phone derives the vote's key from the poll creator's id and its own,
 * and which form it uses (phone number or LID) differs between chats and WhatsApp versions (Baileys issue #2342:
 * the creator's LID with the voter's phone number in private chats), so every pair of the ids the network
 * authenticated is tried; only the right one passes AES-GCM's check, so trying several admits no forged vote.
 */
export function voteIdCandidates(voteKey: WAMessageKey, ownIds: string[]): { creators: string[]; voters: string[] } {
  const unique = (ids: Array<string | null | undefined>) => [...new Set(ids.map(plain).filter((id): id is string => Boolean(id)))];
  const creators = unique(ownIds);
  const isGroup = voteKey.remoteJid?.endsWith('@g.us');
  const voters = voteKey.fromMe ? creators : unique(isGroup ? [voteKey.participantAlt, voteKey.participant] : [voteKey.remoteJidAlt, voteKey.remoteJid]);
  return { creators, voters };
}

/**
 * Decrypts one `pollUpdateMessage` on a poll the bot sent, with Baileys' own `decryptPollVote`, and names the
 * options the voter holds now with Baileys' `getAggregateVotesInPollMessage` (a vote carries only their SHA-256).
 * Returns the options (empty: the vote was taken back), or why the vote is not read: it does not decrypt with this
 * poll's secret (forged, or meant for another poll), or it names an option the poll does not have.
 */
export function readPollVote(update: proto.Message.IPollUpdateMessage, voteKey: WAMessageKey, poll: SentPoll, ownIds: string[]): { selected: string[] } | { ignored: string } {
  const encrypted = update.vote;
  if (!encrypted?.encPayload?.length || !encrypted.encIv?.length) return { ignored: 'the vote carries no encrypted payload' };
  const pollEncKey = Buffer.from(poll.secret, 'base64');
  const { creators, voters } = voteIdCandidates(voteKey, ownIds);
  let vote: proto.Message.PollVoteMessage | undefined;
  for (const pollCreatorJid of creators) {
    for (const voterJid of voters) {
      try {
        vote = decryptPollVote({ encPayload: encrypted.encPayload, encIv: encrypted.encIv }, { pollCreatorJid, pollMsgId: poll.id, pollEncKey, voterJid });
        break;
      } catch {
        // Not this pair of ids (AES-GCM refuses a wrong key): try the next.
      }
    }
    if (vote) break;
  }
  if (!vote) return { ignored: 'the vote does not decrypt with the poll\'s secret (forged, or meant for another poll)' };
  const tally = getAggregateVotesInPollMessage({ message: { pollCreationMessage: { options: poll.options.map((optionName) => ({ optionName })) } }, pollUpdates: [{ pollUpdateMessageKey: voteKey, vote }] });
  // The poll's own options come first, in order; a hash no option has is added after them.
  if (tally.slice(poll.options.length).some((entry) => entry.voters.length)) return { ignored: 'the vote names an option the poll does not have' };
  return { selected: tally.slice(0, poll.options.length).filter((entry) => entry.voters.length).map((entry) => entry.name) };
}
