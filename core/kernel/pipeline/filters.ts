import type { Capabilities } from '../capabilities/capabilities.js';
import type { BotConfig } from '../../services/config/schema.js';
import type { Logger } from '../../services/log/logger.js';
import type { ObserverEntry } from '../plugin/instance.js';
import type { PluginRegistry, PluginState } from '../plugin/registry.js';
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
 * failing never stops the others or the reply. Not async while every observer finishes at once (most only note the
 * message): the message goes on without a frame of its own here; the first one that returns a promise is waited for,
 * and the rest after it.
 */
export function observers(registry: PluginRegistry, capabilities: Capabilities, view: (ctx: MessageContext, name: string) => MessageContext): Middleware<MessageContext> {
  return (ctx, next) => {
    const active = registry.active();
    for (let i = 0; i < active.length; i++) {
      const state = active[i]!;
      if (!state.instance?.observers.length || !mayObserve(state, ctx, registry, capabilities)) continue;
      const list = state.instance.observers;
      for (let j = 0; j < list.length; j++) {
        let seen: unknown;
        try {
          seen = runObserver(list[j]!, state, ctx, capabilities, view);
        } catch (err) {
          ctx.log.error({ err, plugin: state.plugin.name }, 'observer plugin failed');
          break;
        }
        if (seen && typeof (seen as PromiseLike<unknown>).then === 'function') return observeRest(seen as PromiseLike<unknown>, active, i, j, ctx, registry, capabilities, view).then(next);
      }
    }
    return next();
  };
}

function mayObserve(state: PluginState, ctx: MessageContext, registry: PluginRegistry, capabilities: Capabilities): boolean {
  return registry.mayUse(state.plugin.name, ctx.message) && !capabilities.lacks(state.plugin.needs ?? []);
}

/** Runs one observer (its own needs withheld while one is missing, as the start log said, like a handler's). */
function runObserver(observer: ObserverEntry, state: PluginState, ctx: MessageContext, capabilities: Capabilities, view: (ctx: MessageContext, name: string) => MessageContext): unknown {
  if (observer.needs?.length && capabilities.lacks(observer.needs)) return undefined;
  return observer.run(view(ctx, state.plugin.name));
}

/** Waits for observer `j` of `active[i]` (it returned `pending`), then runs the observers after it, each waited for. */
async function observeRest(pending: PromiseLike<unknown>, active: PluginState[], i: number, j: number, ctx: MessageContext, registry: PluginRegistry, capabilities: Capabilities, view: (ctx: MessageContext, name: string) => MessageContext): Promise<void> {
  for (; i < active.length; i++, j = -1) {
    const state = active[i]!;
    if (j === -1 && (!state.instance?.observers.length || !mayObserve(state, ctx, registry, capabilities))) continue;
    try {
      if (j !== -1) await pending;
      const list = state.instance!.observers;
      for (j++; j < list.length; j++) {
        const seen = runObserver(list[j]!, state, ctx, capabilities, view);
        if (seen && typeof (seen as PromiseLike<unknown>).then === 'function') await seen;
      }
    } catch (err) {
      ctx.log.error({ err, plugin: state.plugin.name }, 'observer plugin failed');
    }
  }
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
