import type { IncomingMessage } from '../../kernel/port/message.js';
import type { Transport } from '../../kernel/port/transport.js';
import { InFlightByChat, withOverrides } from '../../kernel/port/watched-transport.js';

/** A message the bot answered: the chat, the message answered, and the texts the bot sent while handling it. */
export interface AnsweredMessage {
  chat: string;
  id: string;
  sender: string;
  replies: string[];
}

/**
 * Wraps a transport so `answered` hears of each inbound message the bot answered with text (the texts sent to its
 * chat while it was handled; the bot handles a chat's messages strictly in order, so a send belongs to the oldest
 * one in flight there). Told after the handling ended, synchronously: the listener only queues. Everything else
 * passes through untouched.
 *
 * @example await bot.start(observeAnswers(transport, (a) => events.emit('message.answered', a)));
 */
export function observeAnswers(transport: Transport, answered: (answer: AnsweredMessage) => void): Transport {
  // `replies` made with the first reply: a message the bot does not answer makes no list.
  const inFlight = new InFlightByChat<{ message: IncomingMessage; replies: string[] | undefined }>();
  return withOverrides(transport, {
    start: (onMessage, events) =>
      transport.start(async (message) => {
        const state: { message: IncomingMessage; replies: string[] | undefined } = { message, replies: undefined };
        try {
          await inFlight.handle(message, state, onMessage);
        } finally {
          if (state.replies) answered({ chat: message.chatId, id: message.id, sender: message.senderId, replies: state.replies });
        }
      }, events),
    sendText: async (chatId, text, options) => {
      const sent = await transport.sendText(chatId, text, options);
      const current = inFlight.oldest(chatId);
      if (current) (current.replies ??= []).push(text);
      return sent;
    },
  });
}
