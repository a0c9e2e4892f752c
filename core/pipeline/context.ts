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

/** A message's plugin views, by plugin: made once per plugin and message (observers, predicates, tools, handler). */
const VIEWS = Symbol('plugin views');
type WithViews = BotContext & { [VIEWS]?: Map<string, BotContext> };

/** The context of one inbound message: replies, history and memory bound to its chat. */
export function createContext(deps: ContextDeps, transport: Transport, message: IncomingMessage, rawText: string): BotContext {
  // The bot's ids matter only for a text that starts with a mention and for a group message (not per private line).
  const startsWithMention = rawText.trimStart().startsWith('@');
  const botIds = startsWithMention || message.isGroup ? deps.botIds() : [];
  // Child loggers are made on first use: most messages never log, and pino's child() is not free.
  let childLog: Logger | undefined;
  const chatId = message.chatId;
  let incomingRecorded = false;
  const { histories, memories } = deps;
  return {
    message,
    text: startsWithMention ? stripBotMentions(rawText, botIds).trim() : rawText.trim(),
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
      append: (entry, options) => histories.append(chatId, entry, options),
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

/**
 * The context of one message seen through one plugin: its options, host and logger; everything else is the
 * message's own context. A class of getters, not `Object.create(ctx)`: V8 turns every object used as a prototype into
 * a prototype map, a cost paid again for each message's new context.
 */
class PluginView implements BotContext {
  private childLog: Logger | undefined;
  constructor(
    private readonly base: BotContext,
    private readonly deps: Pick<ContextDeps, 'optionsOf' | 'host'>,
    private readonly plugin: string,
    readonly host: PluginHost,
  ) {}
  get message() {
    return this.base.message;
  }
  get text() {
    return this.base.text;
  }
  get chatId() {
    return this.base.chatId;
  }
  get senderId() {
    return this.base.senderId;
  }
  get addressed() {
    return this.base.addressed;
  }
  get isOwner() {
    return this.base.isOwner;
  }
  get reply() {
    return this.base.reply;
  }
  get react() {
    return this.base.react;
  }
  get sendMedia() {
    return this.base.sendMedia;
  }
  get edit() {
    return this.base.edit;
  }
  get typing() {
    return this.base.typing;
  }
  get history() {
    return this.base.history;
  }
  get memory() {
    return this.base.memory;
  }
  get ai() {
    return this.base.ai;
  }
  get state() {
    return this.base.state;
  }
  get options() {
    return this.deps.optionsOf(this.plugin);
  }
  get log() {
    return (this.childLog ??= this.base.log.child({ plugin: this.plugin }));
  }
}

/**
 * The context seen through one plugin (its options, host and logger). The same view is handed out again for the same
 * message and plugin; a view of a view (or of a narrowed context) is made anew, never cached on it.
 */
export function pluginView(deps: Pick<ContextDeps, 'optionsOf' | 'host'>, ctx: BotContext, pluginName: string): BotContext {
  const views = Object.prototype.hasOwnProperty.call(ctx, VIEWS) ? (ctx as WithViews)[VIEWS] : undefined;
  let view = views?.get(pluginName);
  if (view) return view;
  view = new PluginView(ctx, deps, pluginName, deps.host(pluginName));
  views?.set(pluginName, view);
  return view;
}
