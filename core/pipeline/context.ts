import type { BotConfig, PluginSection } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import { mentionsBot, stripBotMentions } from '../mentions/mentions-bot.js';
import { isOwnerId, senderIds } from '../plugin/access.js';
import type { AiService, BotContext, PluginHost } from '../plugin/types.js';
import type { HistoryStore } from '../store/history.js';
import type { MemoryStore } from '../store/memory.js';
import type { IncomingMessage, OutgoingMedia, SentMessage } from '../transport/message.js';
import type { Transport } from '../transport/transport.js';
import { splitLongText } from './match.js';

export interface ContextDeps {
  config: () => BotConfig;
  log: Logger;
  ai: AiService;
  histories: HistoryStore;
  memories: MemoryStore;
  botIds: () => string[];
  optionsOf: (plugin: string) => PluginSection;
  host: (plugin: string) => PluginHost;
}

/** The context of one inbound message: replies, history and memory bound to its chat. */
export function createContext(deps: ContextDeps, transport: Transport, message: IncomingMessage, rawText: string): BotContext {
  const botIds = deps.botIds();
  // Child loggers are made on first use: most messages never log, and pino's child() is not free.
  let childLog: Logger | undefined;
  const chatId = message.chatId;
  let incomingRecorded = false;
  const { histories, memories } = deps;
  return {
    message,
    text: stripBotMentions(rawText, botIds).trim(),
    chatId,
    senderId: message.senderId,
    addressed: mentionsBot(message, botIds),
    isOwner: isOwnerId(senderIds(message), deps.config()),
    async reply(replyText, options) {
      const parts = splitLongText(String(replyText));
      let sent: SentMessage = { id: '' };
      for (const [i, part] of parts.entries()) {
        sent = await transport.sendText(chatId, part, { quotedId: options?.quote && i === 0 ? message.id : undefined });
      }
      return sent;
    },
    react: (emoji) => transport.react(chatId, message.id, emoji),
    sendMedia: (media: OutgoingMedia, options) => transport.sendMedia(chatId, media, { quotedId: options?.quote ? message.id : undefined }),
    edit: (sent, newText) => transport.editText(chatId, sent.id, newText),
    typing: (on) => transport.setTyping(chatId, on),
    history: {
      recent: (limit) => histories.recent(chatId, limit),
      append: (entry) => histories.append(chatId, entry),
      async recordIncoming(text, extra) {
        if (incomingRecorded) return;
        incomingRecorded = true;
        await histories.append(chatId, { id: message.id, role: 'user', senderId: message.senderId, senderName: message.senderName, text, at: message.timestamp, ...(extra?.media ? { media: extra.media } : {}) });
      },
      incomingRecorded: () => incomingRecorded,
    },
    memory: {
      facts: () => memories.facts(chatId),
      remember: (fact) => memories.remember(chatId, fact, message.senderId),
    },
    ai: deps.ai,
    options: {},
    host: deps.host('core'),
    get log() {
      return (childLog ??= deps.log.child({ chat: chatId }));
    },
    state: {},
    [VIEWS]: new Map<string, BotContext>(),
  } as WithViews;
}

/** A message's plugin views, by plugin: made once per plugin and message (observers, predicates, tools, handler). */
const VIEWS = Symbol('plugin views');
type WithViews = BotContext & { [VIEWS]?: Map<string, BotContext> };

/**
 * A copy of the context seen through one plugin (its options, host and logger). The same view is handed out again
 * for the same message and plugin; a view of a view is made anew (never cached on another plugin's view).
 */
export function pluginView(deps: Pick<ContextDeps, 'optionsOf' | 'host'>, ctx: BotContext, pluginName: string): BotContext {
  const base = ctx as WithViews;
  const own = Object.prototype.hasOwnProperty.call(base, VIEWS);
  const known = own ? base[VIEWS]!.get(pluginName) : undefined;
  if (known) return known;
  // A descriptor map costs ~1.7x these steps.
  const view = Object.create(ctx) as BotContext;
  Object.defineProperty(view, 'host', { value: deps.host(pluginName) });
  Object.defineProperty(view, 'options', { get: () => deps.optionsOf(pluginName) });
  let log: Logger | undefined;
  Object.defineProperty(view, 'log', { get: () => (log ??= ctx.log.child({ plugin: pluginName })) });
  if (own) base[VIEWS]!.set(pluginName, view);
  return view;
}
