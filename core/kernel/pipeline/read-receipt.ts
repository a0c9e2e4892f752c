import type { MessageContext } from '../plugin/message-context.js';
import type { Transport } from '../port/transport.js';
import type { Middleware } from './compose.js';

/**
 * Marks the message read (WhatsApp blue ticks, see the transport's `markRead`) once the bot takes it up: placed after
 * the access rules and the group filter, so a blocked sender, a held stranger, a chat the owner took over and group
 * talk not meant for the bot are never marked read (read state syncs to the owner's phone, and ticks there would say
 * the bot read what it ignores). Not waited for: the answer never waits on the receipt.
 */
export function markTakenUpRead(transport: () => Transport | undefined): Middleware<MessageContext> {
  return (ctx, next) => {
    transport()?.markRead?.(ctx.message);
    return next();
  };
}
