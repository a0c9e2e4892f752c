import type { Capabilities } from '../capabilities/capabilities.js';
import type { BotConfig } from '../../services/config/schema.js';
import type { Logger } from '../../services/log/logger.js';
import type { PluginRegistry } from '../plugin/registry.js';
import type { MessageContext } from '../plugin/message-context.js';
import type { IncomingMessage } from '../port/message.js';
import type { Middleware } from './compose.js';
import { looksBinary } from './match.js';

/** Longest text the bot will read; longer messages get a clear refusal instead of a silent cut. */
export const MAX_INBOUND_CHARS = 16_000;

/**
 * The text of a message worth handling at all: not empty, not binary junk; else undefined. (A `fromMe` message, the
 * owner typing on the phone, never comes here: core/access takes it.)
 */
export function handledText(message: IncomingMessage, log: Logger): string | undefined {
  const text = typeof message.text === 'string' ? message.text : '';
  if (!text.trim() && !message.media) return undefined;
  if (looksBinary(text)) {
    log.debug({ chat: message.chatId }, 'ignored a binary message');
    return undefined;
  }
  return text;
}

/**
 * Observers see every message of a chat the bot takes part in (they run after the chat rules), addressed or not; one
 * failing never stops the others or the reply.
 */
export function observers(registry: PluginRegistry, capabilities: Capabilities, view: (ctx: MessageContext, name: string) => MessageContext): Middleware<MessageContext> {
  return async (ctx, next) => {
    for (const state of registry.active()) {
      if (!state.instance?.observers.length) continue;
      if (!registry.mayUse(state.plugin.name, ctx.message)) continue;
      if (capabilities.lacks(state.plugin.needs ?? [])) continue;
      try {
        for (const observer of state.instance.observers) {
          // An observer's own needs: withheld while one is missing (the start log said so), like a handler's.
          if (observer.needs?.length && capabilities.lacks(observer.needs)) continue;
          const seen = observer.run(view(ctx, state.plugin.name));
          // An observer that finished at once (most only note the message) is not waited for a turn.
          if (seen && typeof (seen as PromiseLike<unknown>).then === 'function') await seen;
        }
      } catch (err) {
        ctx.log.error({ err, plugin: state.plugin.name }, 'observer plugin failed');
      }
    }
    await next();
  };
}

/**
 * Groups: only messages that mention or reply to the bot (or that a chat rule lets through, see core/access) go further (group context is still kept); an addressed
 * message longer than MAX_INBOUND_CHARS is refused in words.
 */
export function addressedOnly(config: () => BotConfig): Middleware<MessageContext> {
  return (ctx, next) => {
    const { prefix, groups } = config();
    if (!ctx.addressed && ctx.state.answerWithoutMention !== true && !(groups.commandsWithoutMention && (ctx.text.startsWith(prefix) || /^\/\w/.test(ctx.text)))) {
      return ctx.message.isGroup && ctx.text ? ctx.history.recordIncoming(ctx.text) : undefined;
    }
    if (ctx.text.length > MAX_INBOUND_CHARS) {
      return ctx.reply(`That message is too long for me (${ctx.text.length} characters; the limit is ${MAX_INBOUND_CHARS}). Please send it in smaller parts.`).then(() => undefined);
    }
    return next();
  };
}
