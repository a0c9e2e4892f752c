import catchup from '../../../plugins/catchup/index.js';
import mydata from '../../../plugins/mydata/index.js';
import { startTestBot, type TestBot, type TestBotOptions } from '../../../app/testing/test-kit.js';
import type { IncomingMessage } from '../../../core/kernel/port/message.js';
import type { Plugin } from '../../../core/kernel/plugin/spec.js';

export const OWN_DIGITS = '6289900000001';
export const OWN = `${OWN_DIGITS}@s.whatsapp.net`;
export const ALICE = '6281200000002@s.whatsapp.net';
export const BOB = '6281200000003@s.whatsapp.net';
export const FAMILY = 'Family@g.us';
export const WORK = 'Work@g.us';

let seq = 0;

/** A line the owner types in "Message yourself", as the WhatsApp adapter hands it over. */
export function selfLine(text: string, at = Date.now()): IncomingMessage {
  return { id: `self-${++seq}`, chatId: OWN, senderId: OWN, isGroup: false, text, mentions: [], timestamp: at, fromOperator: true };
}

/** A message of `from` in group `chat` (or, with `fromMe`, the owner typing there on the phone). */
export function groupLine(chat: string, from: string, name: string, text: string, extra: Partial<IncomingMessage> = {}): IncomingMessage {
  return { id: `g-${++seq}`, chatId: chat, senderId: from, senderName: name, isGroup: true, text, mentions: [], timestamp: Date.now(), ...extra };
}

/** A bot on the owner's own number (self-chat mode) with the catchup and mydata plugins. */
export function ownNumberBot(options: TestBotOptions = {}, plugins: Plugin[] = []): Promise<TestBot> {
  return startTestBot([catchup, mydata, ...plugins], {
    ownIds: [OWN],
    ...options,
    config: { account: { mode: 'self-chat' }, owners: [OWN_DIGITS], access: { mode: 'everyone' }, ...(options.config ?? {}) },
  });
}

/** Texts the bot did anything with in `chat` (texts, reactions, media, polls, edits). */
export function actionsIn(bot: TestBot, chat: string) {
  return bot.transport.actions.filter((a) => a.chatId === chat);
}
