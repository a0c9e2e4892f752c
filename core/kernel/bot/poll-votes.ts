import type { BotConfig } from '../../services/config/schema.js';
import type { Logger } from '../../services/log/logger.js';
import type { HistoryStore } from '../../services/store/history.js';
import type { PollBook } from '../chat/polls.js';
import type { ChatQueue } from '../pipeline/chat-queue.js';
import { isBlocked } from '../plugin/access.js';
import { userPart } from '../port/ids.js';
import type { IncomingMessage, PollVote } from '../port/message.js';
import type { TransportLink } from './transport-link.js';
import { quotedContent } from '../chat/quoted-content.js';
import { sameChat } from '../guard/policy.js';

export interface PollVotesDeps {
  config: () => BotConfig;
  polls: PollBook;
  histories: HistoryStore;
  queue: ChatQueue;
  link: TransportLink;
  /** Where a vote that settles a question goes: in as a message of the voter. */
  intake: { handle(message: IncomingMessage): Promise<void> };
  log: Logger;
}

/**
 * Votes on the polls the bot sent: on a poll sent to settle a question (`answerOnVote`), a turn of the voter the model
 * answers; on any other, a line in the chat's history the model reads at the next turn.
 */
export class PollVotes {
  constructor(private readonly deps: PollVotesDeps) {}

  /** A voter on the block list is ignored; a turn still goes through who-is-answered like any message. Never rejects. */
  vote(vote: PollVote): Promise<void> {
    if (isBlocked([vote.voterId], this.deps.config())) return Promise.resolve();
    const name = vote.voterName?.trim() || userPart(vote.voterId) || 'someone';
    const at = Date.now();
    const id = `vote-${vote.pollId}-${userPart(vote.voterId)}-${at}`;
    const answered = vote.selected.length ? this.deps.polls.answersOnVote(vote.chatId, vote.pollId) : Promise.resolve(false);
    return Promise.all([answered, this.deps.polls.creatorOf(vote.chatId, vote.pollId)]).then(([answer, by]) => {
      const text = voteText(vote, name, by);
      return answer ? this.answer(vote, id, text, at) : this.keep(vote, id, text, at);
    });
  }

  /** A vote on a poll sent to settle a question: a turn of the voter. */
  private answer(vote: PollVote, id: string, text: string, at: number): Promise<void> {
    const { link, intake } = this.deps;
    const bot = link.botIds()[0] ?? '';
    const message: IncomingMessage = { id, chatId: vote.chatId, senderId: vote.voterId, senderName: vote.voterName, isGroup: link.isGroup(vote.chatId), text, mentions: [], timestamp: at, quoted: { id: vote.pollId, senderId: bot, text: vote.question, fromBot: true }, noChatMessage: true };
    // The person at the console votes as the owner they are when they type.
    if (link.isOperator(vote.voterId)) message.fromOperator = true;
    return intake.handle(message);
  }

  /** A vote kept as context the model reads at the chat's next turn. */
  private keep(vote: PollVote, id: string, text: string, at: number): Promise<void> {
    const { queue, histories, log } = this.deps;
    return queue.behind(
      vote.chatId,
      () => histories.append(vote.chatId, { id, role: 'user', senderId: vote.voterId, senderName: vote.voterName, text, at }),
      (err) => log.error({ err, chat: vote.chatId }, 'could not keep a poll vote in the history'),
    );
  }
}

/**
 * A vote in words. A poll's question and options are the words of the person whose turn sent it: the voter's own when
 * they asked for it, else someone else's — then they are quoted as content, never as the voter's words (an option
 * planted by another member and chosen by the owner must not act as the owner's instruction).
 */
function voteText(vote: PollVote, name: string, by: string | undefined): string {
  const own = by !== undefined && sameChat(by, vote.voterId);
  if (!vote.selected.length) return `${name} took back their vote on the poll "${own ? vote.question : '(quoted before)'}"`;
  if (own) return `${name} voted on the poll "${vote.question}": ${vote.selected.join(', ')}`;
  const words = `Poll: ${vote.question}\nChosen: ${vote.selected.join('\n')}`;
  return `${name} voted on a poll made at someone else's request; its question and the option(s) chosen:\n${quotedContent({ source: 'a poll question and the options chosen', author: 'whoever asked for the poll (not the voter)', text: words })}`;
}
