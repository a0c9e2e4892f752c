import type { IncomingMessage } from '../../kernel/port/message.js';
import type { Transport } from '../../kernel/port/transport.js';

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
  const inFlight = new Map<string, Array<{ message: IncomingMessage; replies: string[] }>>();
  const overrides: Partial<Transport> = {
    start: (onMessage, events) =>
      transport.start(async (message) => {
        const state = { message, replies: [] as string[] };
        const queue = inFlight.get(message.chatId);
        if (queue) queue.push(state);
        else inFlight.set(message.chatId, [state]);
        try {
          await onMessage(message);
        } finally {
          const list = inFlight.get(message.chatId)!;
          list.splice(list.indexOf(state), 1);
          if (!list.length) inFlight.delete(message.chatId);
          if (state.replies.length) answered({ chat: message.chatId, id: message.id, sender: message.senderId, replies: state.replies });
        }
      }, events),
    sendText: async (chatId, text, options) => {
      const sent = await transport.sendText(chatId, text, options);
      inFlight.get(chatId)?.[0]?.replies.push(text);
      return sent;
    },
  };
  const bound = new WeakMap<(...args: never[]) => unknown, unknown>();
  return new Proxy(transport, {
    get(target, property) {
      if (Object.prototype.hasOwnProperty.call(overrides, property)) return overrides[property as keyof Transport];
      const value = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      let fn = bound.get(value);
      if (!fn) bound.set(value, (fn = value.bind(target)));
      return fn;
    },
  });
}
