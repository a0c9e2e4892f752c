import type { IncomingMessage } from '../../kernel/port/message.js';
import type { Transport } from '../../kernel/port/transport.js';
import { InFlightByChat, withOverrides } from '../../kernel/port/watched-transport.js';
import type { BotMetrics } from './bot-metrics.js';

/** A message in flight, so a send to its chat while it is handled counts it as answered. */
interface Handling {
  answered: boolean;
}

type SendType = 'text' | 'media' | 'reaction' | 'edit';

/** The kind label of an inbound message: its media kind, else `text`. Never content or ids. */
export function messageKind(message: IncomingMessage): string {
  return message.media?.kind ?? 'text';
}

/**
 * Wraps a transport so the metrics see every message without the bot pipeline knowing: inbound messages (received,
 * handling time, queue depth, answered when anything was sent to that chat while the message was handled) and
 * every send (by type, failures apart). Everything else, including methods added to a transport later (restriction
 * state, …), passes through untouched.
 *
 * @example await bot.start(instrumentTransport(transport, metrics));
 */
export function instrumentTransport(transport: Transport, metrics: BotMetrics): Transport {
  // A send to a chat while one of its messages is handled answers the oldest of them.
  const inFlight = new InFlightByChat<Handling>();

  const counted = <A extends unknown[], R>(type: SendType, send: (chatId: string, ...rest: A) => Promise<R>) =>
    async (chatId: string, ...rest: A): Promise<R> => {
      try {
        const result = await send.call(transport, chatId, ...rest);
        // editText answers false when the network cannot edit: nothing was sent (the caller sends anew).
        if ((result as unknown) === false) return result;
        metrics.countSent(type);
        const current = inFlight.oldest(chatId);
        if (current) current.answered = true;
        return result;
      } catch (err) {
        metrics.sendFailures.inc({ type });
        throw err;
      }
    };

  const overrides: Partial<Transport> = {
    // The events (deleted for everyone, edits, a chat's new id) go through untouched: dropping them loses privacy.
    start: (onMessage, events) =>
      transport.start(async (message) => {
        const kind = messageKind(message);
        metrics.countReceived(kind);
        metrics.queued(1);
        const started = performance.now();
        const state: Handling = { answered: false };
        try {
          await inFlight.handle(message, state, onMessage);
        } finally {
          metrics.observeHandling(kind, (performance.now() - started) / 1000);
          metrics.queued(-1);
          if (state.answered) metrics.countAnswered(kind);
        }
      }, events),
    sendText: counted('text', transport.sendText),
    sendMedia: counted('media', transport.sendMedia),
    react: counted('reaction', transport.react),
    editText: counted('edit', transport.editText),
  };

  return withOverrides(transport, overrides);
}
