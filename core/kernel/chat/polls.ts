import { Type } from '#typebox';
import type { BoundedRecord } from '../../services/store/bounded-record.js';
import type { DataSchema } from '../../services/store/schemas.js';
import { dataSchemaOf, Store } from '../../services/store/store-declarations.js';
import type { OutgoingPoll, SentMessage } from '../port/message.js';
import type { SendOptions, Transport } from '../port/transport.js';
import { PollRefused } from '../../api/errors.js';

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

/** How many polls are remembered, and for how long (a vote on an older one is kept as context, not answered). */
export const POLLS_KEPT = 1000;
export const POLLS_KEPT_MS = 60 * 24 * 60 * 60 * 1000;

/** One poll the bot sent: where, and whether a vote on it is answered as a turn. No words: ids only. */
export interface SentPoll {
  id: string;
  chatId: string;
  answerOnVote: boolean;
  at: number;
  /** Whose turn sent it (`SendOptions.answers`): its options are that person's words, anyone else's vote only chooses among them. */
  by?: string;
}

/** Where earlier versions kept it, under DATA_DIR (taken in once, then kept aside under `data/migrated/`). */
export const POLL_BOOK_PATH = 'polls/sent.json';

/**
 * The polls sent, as the core declares them (`core` namespace of the store database). A private chat's polls belong
 * to its person (a group's polls name no one): `.mydata` lists them (id, chat, time) and deletes them; they move with
 * the chat.
 */
export const POLL_BOOK_STORE = Store.chatRecord(
  'polls',
  Type.Object({ id: Type.String(), chatId: Type.String(), answerOnVote: Type.Boolean(), at: Type.Number(), by: Type.Optional(Type.String()) }),
  {
    path: POLL_BOOK_PATH,
    title: 'poll-book',
    section: 'polls sent',
    exportAs: '',
    chatOf: (p) => p.chatId,
    withChat: (p, chatId) => ({ ...p, chatId }),
    keepMs: POLLS_KEPT_MS,
    keepCount: POLLS_KEPT,
    exported: ({ id, chatId, at }) => ({ id, chatId, at }),
  },
);

/** The earlier file's schema (the backup manifest names it). */
export const POLL_BOOK_SCHEMA: DataSchema = dataSchemaOf(POLL_BOOK_STORE, 'core');

/**
 * The polls the bot sent, by poll id: which chat, and whether a vote on it is answered as a turn (a poll the model
 * sent to settle a question) or kept as context only. Kept on disk (`data/polls/sent.json`: the newest 1,000, two
 * months), so a vote that comes after a restart is still answered. Takes part in the privacy controls: a private
 * chat's polls go with its person's delete and move with the chat.
 *
 * @example
 * const book = new PollBook(coreStores(dataDir, { histories, memories }).record(POLL_BOOK_STORE));
 * const sent = await book.send(transport, chatId, { question: 'Pie?', options: ['kiwi', 'mango'] }, { answerOnVote: true });
 * await book.answersOnVote(chatId, sent.id); // true
 */
export class PollBook {
  /** `record`: the core's stores' `POLL_BOOK_STORE` (core-stores.ts), whose declaration puts it in the privacy controls. */
  constructor(private readonly record: BoundedRecord<SentPoll>, private readonly now: () => number = Date.now) {}

  async send(transport: Transport, chatId: string, poll: OutgoingPoll, options: SendOptions & { answerOnVote?: boolean }): Promise<SentMessage> {
    const checked = checkPoll(poll);
    if (!checked.ok) throw new PollRefused(`The poll was not sent: ${checked.problem}.`);
    if (!transport.sendPoll) throw new PollRefused(`The poll was not sent: the ${transport.name} chat cannot show polls.`);
    const sent = await transport.sendPoll(chatId, checked.poll, { quotedId: options.quotedId, answers: options.answers });
    // The poll is sent: a file that cannot be read only means a vote on it is kept as context, not answered.
    await this.record.add([{ id: sent.id, chatId, answerOnVote: options.answerOnVote === true, at: this.now(), ...(options.answers ? { by: options.answers } : {}) }]).catch(() => undefined);
    return sent;
  }

  /** Whose turn sent this poll (of this chat), when known. */
  async creatorOf(chatId: string, pollId: string): Promise<string | undefined> {
    return (await this.record.get(chatId, pollId))?.by;
  }

  /** True when a vote on this poll (of this chat) is answered as a turn. */
  async answersOnVote(chatId: string, pollId: string): Promise<boolean> {
    return (await this.record.get(chatId, pollId))?.answerOnVote === true;
  }

  flush(): Promise<void> {
    return this.record.flush();
  }

}
