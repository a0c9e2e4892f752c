import type { IncomingMessage } from './message.js';
import type { InboundHandler, Transport } from './transport.js';

/*
 * What a transport wrapper that watches the bot from outside (the metrics, the answered-message events) needs: which
 * message each chat is handling now, so a send to that chat belongs to it, and a transport with some methods replaced
 * and every other passing through. One implementation, so the wrappers never disagree on whose send a send was.
 */

/**
 * Per chat, the messages handed to the bot and not finished yet, oldest first, each with the state its watcher keeps.
 * The bot handles a chat's messages strictly in order, so a send to that chat belongs to the oldest one. (Not
 * AsyncLocalStorage: it turns on promise hooks for the whole process, which costs every promise of every message.)
 *
 * @example
 * const inFlight = new InFlightByChat<{ replies: string[] }>();
 * transport.start((message) => inFlight.handle(message, { replies: [] }, onMessage), events);
 * inFlight.oldest(chatId)?.replies.push(text); // in sendText
 */
export class InFlightByChat<S> {
  private readonly chats = new Map<string, S[]>();

  /** Runs `handle(message)` with `state` in flight in the message's chat until it settles (thrown or not). */
  async handle(message: IncomingMessage, state: S, handle: InboundHandler): Promise<void> {
    const queue = this.chats.get(message.chatId);
    if (queue) queue.push(state);
    else this.chats.set(message.chatId, [state]);
    try {
      await handle(message);
    } finally {
      const list = this.chats.get(message.chatId)!;
      list.splice(list.indexOf(state), 1);
      if (!list.length) this.chats.delete(message.chatId);
    }
  }

  /** The state of the oldest message `chatId` is handling, if any: the one a send to that chat answers. */
  oldest(chatId: string): S | undefined {
    return this.chats.get(chatId)?.[0];
  }
}

/**
 * `transport` with `overrides` in place of its own methods; everything else (methods added to a transport later too)
 * passes through untouched, each method bound once rather than on every call (typing, ownIds … run several times per
 * message).
 */
export function withOverrides(transport: Transport, overrides: Partial<Transport>): Transport {
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
