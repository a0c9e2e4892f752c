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
/** How many chats' lists InFlightByChat keeps before it drops the empty ones. */
const KEPT_CHATS = 1000;

export class InFlightByChat<S> {
  /**
   * A chat's list stays when it empties (an entry added and deleted again at every message cost more than the rest of
   * this class); the empty ones go once lists of more than KEPT_CHATS chats are kept.
   */
  private readonly chats = new Map<string, S[]>();

  /**
   * Runs `handle(message)` with `state` in flight in the message's chat until it settles (thrown or not); `ended` is
   * told then, before the returned promise settles. Chained rather than async (a frame and an await fewer per message
   * and wrapper: this runs twice for every message).
   */
  handle(message: IncomingMessage, state: S, handle: InboundHandler, ended?: (state: S) => void): Promise<void> {
    let queue = this.chats.get(message.chatId);
    if (!queue) {
      if (this.chats.size >= KEPT_CHATS) this.dropEmpty();
      this.chats.set(message.chatId, (queue = []));
    }
    queue.push(state);
    const list = queue;
    const done = (): void => {
      if (list[0] === state) list.shift();
      else list.splice(list.indexOf(state), 1);
      ended?.(state);
    };
    let handling: Promise<void>;
    try {
      handling = handle(message);
    } catch (err) {
      done();
      return Promise.reject(err);
    }
    return Promise.resolve(handling).then(done, (err: unknown) => {
      done();
      throw err;
    });
  }

  private dropEmpty(): void {
    for (const [chatId, list] of this.chats) if (!list.length) this.chats.delete(chatId);
  }

  /** The state of the oldest message `chatId` is handling, if any: the one a send to that chat answers. */
  oldest(chatId: string): S | undefined {
    return this.chats.get(chatId)?.[0];
  }
}

/**
 * Every member of `Transport`, the optional ones too (a transport without `markRead` is asked for it at every
 * message): the compiler fails here when the interface gains one that is not listed.
 */
const TRANSPORT_MEMBERS: Record<keyof Transport, true> = {
  name: true,
  defaultDebounceMs: true,
  defaultProgressAfterSeconds: true,
  pacesAnswers: true,
  start: true,
  onRevoke: true,
  stop: true,
  sendText: true,
  editText: true,
  react: true,
  sendMedia: true,
  sendPoll: true,
  sendLocation: true,
  sendContact: true,
  markRead: true,
  setTyping: true,
  ownIds: true,
  privateChatId: true,
  operatorChatId: true,
  session: true,
  findChats: true,
  isGroupAdmin: true,
  isGroupChat: true,
  declaredStores: true,
  relink: true,
  requestPairingCode: true,
};

/**
 * `transport` with `overrides` in place of its own methods; everything else (methods added to a transport later too)
 * passes through untouched, `this` intact, each method bound once rather than on every call (typing, ownIds … run
 * several times per message). The names the transport has when wrapped are plain accessors of the wrapper (a Proxy
 * trap on each read cost more than the rest of the wrapper); any other name is looked up on the transport as it is
 * then.
 */
export function withOverrides(transport: Transport, overrides: Partial<Transport>): Transport {
  const target = transport as unknown as Record<PropertyKey, unknown>;
  const boundOf = (value: (...args: never[]) => unknown, slot: { fn?: unknown; bound?: unknown }) => {
    if (slot.fn !== value) {
      slot.fn = value;
      slot.bound = value.bind(target);
    }
    return slot.bound;
  };
  // A name the transport gains after it was wrapped is still reached, through the fallback the wrapper inherits from.
  const bound = new WeakMap<object, unknown>();
  const fallback = new Proxy(target, {
    get(_, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      let fn = bound.get(value);
      if (!fn) bound.set(value, (fn = value.bind(target)));
      return fn;
    },
    set(_, property, value) {
      return Reflect.set(target, property, value, target);
    },
  });
  const wrapper = Object.create(fallback) as Record<PropertyKey, unknown>;
  const names = new Set<PropertyKey>(Object.keys(TRANSPORT_MEMBERS));
  for (let o: object | null = target; o && o !== Object.prototype; o = Object.getPrototypeOf(o) as object | null) {
    for (const name of Reflect.ownKeys(o)) if (name !== 'constructor') names.add(name);
  }
  for (const name of names) {
    if (Object.prototype.hasOwnProperty.call(overrides, name)) continue;
    const slot: { fn?: unknown; bound?: unknown } = {};
    Object.defineProperty(wrapper, name, {
      get() {
        const value = target[name];
        return typeof value === 'function' ? boundOf(value as (...args: never[]) => unknown, slot) : value;
      },
      set(value: unknown) {
        target[name] = value;
      },
      enumerable: false,
      configurable: true,
    });
  }
  for (const name of Reflect.ownKeys(overrides)) Object.defineProperty(wrapper, name, { value: (overrides as Record<PropertyKey, unknown>)[name], enumerable: true, configurable: true, writable: true });
  return wrapper as unknown as Transport;
}
