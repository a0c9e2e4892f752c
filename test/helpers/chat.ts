import { expect } from 'chai';
import type { TestBot } from '../../app/testing/index.js';
import type { AnswerPacing } from '../../core/services/sending/answer-spacing.js';
import type { SendingLimits } from '../../core/services/sending/outbox.js';

/** People, chats and the bot's own id that chat tests share (digits of no real number). */
export const ALICE = '6281100000001@s.whatsapp.net';
export const BOB = '6281100000002@s.whatsapp.net';
export const CAROL = '6281100000003@s.whatsapp.net';
export const GROUP = '120363000000000001@g.us';
export const OTHER_GROUP = '120363000000000002@g.us';
export const BOT = '10000000000@s.whatsapp.net';

/** Bot-initiated sends paced fast enough for a test (the limiter still carries them). */
export const FAST_SENDING = { perChatPerMinute: 60, globalPerMinute: 60, jitterMs: 0 };

/**
 * Answers of a turn sent as soon as they are ready, for tests about something else than their spacing (that is
 * answer-pacing.test.ts's, on a fake clock): a group's next answer would wait 4 s of real time otherwise.
 */
export const UNPACED_ANSWERS: AnswerPacing = { privateGapMs: 0, groupGapMs: 0, overallGapMs: 0, jitterMs: 0 };

/**
 * The bot's own messages (notices, errands, reminders) sent at once, in order, for tests about something else than
 * their pace (that is safe-sending.test.ts's): config.json's fastest, one a second per chat and overall, waits real time.
 */
export const UNPACED_SENDS: SendingLimits = { perChatPerMinute: Infinity, globalPerMinute: Infinity, jitterMs: 0 };

/**
 * Sends `text` as ALICE (or `from.senderId`), in her private chat or, with `from.chatId`, in that group mentioning
 * the bot, and resolves with the one text the bot answered (a test fails when it answered none or several).
 */
export async function say(bot: TestBot, text: string, from: { senderId?: string; chatId?: string; id?: string; senderName?: string } = {}): Promise<string> {
  const said = await bot.send({ text, id: from.id, senderId: from.senderId ?? ALICE, chatId: from.chatId, senderName: from.senderName, mentions: from.chatId ? [BOT] : undefined });
  expect(said, `one answer to ${text}`).to.have.length(1);
  return said[0]!;
}
