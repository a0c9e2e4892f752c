import type { MessageContext } from '../plugin/message-context.js';
import type { Middleware } from './compose.js';

/** How long after a live location was answered its further updates are context, not questions. */
export const LIVE_LOCATION_QUIET_MS = 60 * 60 * 1000;
/** Senders remembered at once (the oldest are forgotten first). */
const REMEMBERED = 1000;

/**
 * A live location is answered once: WhatsApp sends its updates as further messages while the person moves (one every
 * few seconds to minutes), and answering each would flood the chat. Its first message (or one after an hour's quiet)
 * is a turn like any shared place; the updates after it are not answered (observers still saw them). What the person
 * types is a message of its own, answered as ever.
 */
export function liveLocationUpdates(now: () => number = Date.now): Middleware<MessageContext> {
  const answered = new Map<string, number>();
  // Not async: nearly every message is no live location and goes on without a frame of its own here.
  return (ctx, next) => {
    const location = ctx.message.location;
    if (!location?.live) return next();
    const key = `${ctx.chatId}|${ctx.senderId}`;
    const at = now();
    const last = answered.get(key);
    if (last !== undefined && at - last < LIVE_LOCATION_QUIET_MS) return undefined;
    answered.delete(key);
    answered.set(key, at);
    if (answered.size > REMEMBERED) answered.delete(answered.keys().next().value as string);
    return next();
  };
}
