import { CodedError } from '../../services/coded-error.js';
import type { OutgoingPoll, SentMessage } from '../port/message.js';
import type { SendOptions, Transport } from '../port/transport.js';

/** WhatsApp's bounds for a poll: 2–12 options; a question and options of reasonable length. */
export const POLL_LIMITS = { minOptions: 2, maxOptions: 12, questionChars: 255, optionChars: 100 } as const;

/** A poll as the bot may send it (trimmed), or what is wrong with it as a sentence. */
export function checkPoll(poll: OutgoingPoll): { ok: true; poll: OutgoingPoll } | { ok: false; problem: string } {
  // One line each: a poll shows no line breaks (and the console prints one option a line).
  const question = String(poll.question ?? '').replace(/\s+/g, ' ').trim();
  const options = (Array.isArray(poll.options) ? poll.options : []).map((o) => String(o ?? '').replace(/\s+/g, ' ').trim());
  if (!question) return { ok: false, problem: 'the poll has no question' };
  if (question.length > POLL_LIMITS.questionChars) return { ok: false, problem: `the question is longer than ${POLL_LIMITS.questionChars} characters` };
  if (options.length < POLL_LIMITS.minOptions || options.length > POLL_LIMITS.maxOptions) return { ok: false, problem: `a poll has ${POLL_LIMITS.minOptions} to ${POLL_LIMITS.maxOptions} options (this one has ${options.length})` };
  if (options.some((o) => !o)) return { ok: false, problem: 'an option is empty' };
  if (options.some((o) => o.length > POLL_LIMITS.optionChars)) return { ok: false, problem: `an option is longer than ${POLL_LIMITS.optionChars} characters` };
  if (new Set(options.map((o) => o.toLowerCase())).size !== options.length) return { ok: false, problem: 'two options are the same' };
  return { ok: true, poll: { question, options, multiple: poll.multiple === true } };
}

/** A poll that cannot be sent (bad shape, or a network without polls): `message` says why. */
export class PollRefused extends CodedError {
  /** On the prototype, as every coded error's, so the code is known without an instance. */
  get code() {
    return 'PLUGIN_POLL_REFUSED' as const;
  }
  constructor(message: string) {
    super(message);
    this.name = 'PollRefused';
  }
}

/**
 * The polls the bot sent while it runs, by poll id: which chat, and whether a vote on it is answered as a turn (a poll
 * the model sent to settle a question) or kept as context only. In memory, the newest 1,000: after a restart a vote
 * on an older poll is kept as context.
 */
export class PollBook {
  private readonly polls = new Map<string, { chatId: string; answerOnVote: boolean }>();

  async send(transport: Transport, chatId: string, poll: OutgoingPoll, options: SendOptions & { answerOnVote?: boolean }): Promise<SentMessage> {
    const checked = checkPoll(poll);
    if (!checked.ok) throw new PollRefused(`The poll was not sent: ${checked.problem}.`);
    if (!transport.sendPoll) throw new PollRefused(`The poll was not sent: the ${transport.name} chat cannot show polls.`);
    const sent = await transport.sendPoll(chatId, checked.poll, { quotedId: options.quotedId, answers: options.answers });
    this.polls.set(sent.id, { chatId, answerOnVote: options.answerOnVote === true });
    if (this.polls.size > 1000) this.polls.delete(this.polls.keys().next().value as string);
    return sent;
  }

  /** True when a vote on this poll (of this chat) is answered as a turn. */
  answersOnVote(chatId: string, pollId: string): boolean {
    const poll = this.polls.get(pollId);
    return poll?.chatId === chatId && poll.answerOnVote;
  }
}
