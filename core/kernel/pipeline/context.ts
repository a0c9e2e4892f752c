import type { BotConfig } from '../../services/config/schema.js';
import type { Logger } from '../../api/logger.js';
import { mentionsBot, stripBotMentions } from '../mentions/mentions-bot.js';
import { isOwnerMessage } from '../plugin/access.js';
import type { AiService, MessageContext, PluginHost } from '../plugin/message-context.js';
import type { HistoryEntry, HistoryStore } from '../../services/store/history.js';
import type { MemoryStore } from '../../services/store/memory.js';
import type { IncomingMessage, OutgoingMedia, SentMessage } from '../port/message.js';
import type { Transport } from '../port/transport.js';
import type { PollBook } from '../chat/polls.js';
import { splitMessage } from '../../services/sending/split-message.js';
import type { ProgressSlot } from './progress.js';
import { quotedDeletedSentence } from './quoted-deleted.js';

export interface ContextDeps {
  config: () => BotConfig;
  log: Logger;
  ai: AiService;
  histories: HistoryStore;
  memories: MemoryStore;
  botIds: () => string[];
  host: (plugin: string) => PluginHost;
  /** The polls the bot sent (how a vote on each is taken). */
  polls: PollBook;
  /** Spaces each message of an answer (the outbox); without it, messages go straight out. */
  answer?: <T>(chatId: string, send: () => Promise<T>, at: { group: boolean; first: boolean }) => Promise<T>;
}

/**
 * The context of one inbound message: replies, history and memory bound to its chat. A class, not an object literal:
 * a literal with a getter and a symbol key is built through V8's slow runtime path (~0.9 µs a message, 12× a class
 * instance). The reply functions, the history and the memory are made on first use (a `.ping` uses `reply` alone;
 * making all of them was ~20 closures and objects a message) and kept, each a closure bound to this message, so
 * `const { reply } = ctx` still works as before.
 */
class InboundContext implements MessageContext {
  readonly text: string;
  readonly chatId: string;
  readonly senderId: string;
  readonly addressed: boolean;
  readonly isOwner: boolean;
  readonly ai: AiService;
  readonly host: PluginHost;
  readonly state: Record<string, unknown> = {};
  /** This message's plugin views, by plugin: made once per plugin and message (observers, predicates, tools, handler). */
  #views: Map<string, MessageContext> | undefined;
  /** When the turn started (unix ms), for its status message. */
  readonly #startedAt = Date.now();
  /** The turn's status message, when the progress middleware gave it one (pipeline/progress). */
  #progress: ProgressSlot | undefined;
  // Made on first use: most messages never log, and pino's child() is not free.
  #childLog: Logger | undefined;
  readonly #deps: ContextDeps;
  readonly #transport: Transport;
  /** Whether a message of the answer went out yet (only a private chat's first of the turn goes at once). */
  #spoken = false;
  #incomingRecorded = false;
  #incoming: HistoryEntry | undefined;
  #reply: MessageContext['reply'] | undefined;
  #react: MessageContext['react'] | undefined;
  #sendMedia: MessageContext['sendMedia'] | undefined;
  #sendPoll: MessageContext['sendPoll'] | undefined;
  #sendLocation: MessageContext['sendLocation'] | undefined;
  #sendContact: MessageContext['sendContact'] | undefined;
  #edit: MessageContext['edit'] | undefined;
  #typing: MessageContext['typing'] | undefined;
  #setProgress: MessageContext['progress'] | undefined;
  #replyIfQuotedDeleted: MessageContext['replyIfQuotedDeleted'] | undefined;
  #history: MessageContext['history'] | undefined;
  #memory: MessageContext['memory'] | undefined;

  constructor(deps: ContextDeps, transport: Transport, readonly message: IncomingMessage, rawText: string) {
    this.#deps = deps;
    this.#transport = transport;
    // The bot's ids matter only for a text that starts with a mention and for a group message (not per private line).
    const startsWithMention = rawText.trimStart().startsWith('@');
    const botIds = startsWithMention || message.isGroup ? deps.botIds() : [];
    this.text = startsWithMention ? stripBotMentions(rawText, botIds).trim() : rawText.trim();
    this.chatId = message.chatId;
    this.senderId = message.senderId;
    this.addressed = mentionsBot(message, botIds);
    this.isOwner = isOwnerMessage(message, deps.config());
    this.ai = deps.ai;
    this.host = deps.host('core');
  }

  /** Every message of the answer goes through the outbox's spacing; only a private chat's first of the turn at once. */
  #spaced<T>(send: () => Promise<T>): Promise<T> {
    const first = !this.#spoken;
    this.#spoken = true;
    const answer = this.#deps.answer;
    return answer ? answer(this.chatId, send, { group: this.message.isGroup, first }) : send();
  }

  /** A status message still on its way goes first; one not yet due never comes (what is said now answers). */
  #beforeSpeaking(): Promise<void> | undefined {
    return this.#progress?.current?.beforeSpeaking();
  }

  get reply(): MessageContext['reply'] {
    return (this.#reply ??= async (replyText, options) => {
      const { chatId, message } = this;
      const transport = this.#transport;
      // Nothing to say (a model that chose silence) sends nothing; a long text goes as several messages.
      const parts = String(replyText).trim() ? splitMessage(String(replyText)) : [];
      if (parts.length) await this.#beforeSpeaking();
      let sent: SentMessage = { id: '' };
      for (let i = 0; i < parts.length; i++) {
        const part = parts[i]!;
        sent = await this.#spaced(() => transport.sendText(chatId, part, { quotedId: options?.quote && i === 0 ? message.id : undefined, answers: message.senderId }));
      }
      return sent;
    });
  }

  get react(): MessageContext['react'] {
    // A turn with no chat message of its own (a poll vote's turn, a scheduled one) has nothing to react to.
    return (this.#react ??= (emoji) => (this.message.scheduled || this.message.noChatMessage ? Promise.resolve() : this.#transport.react(this.chatId, this.message.id, emoji, this.message.senderId)));
  }

  get sendMedia(): MessageContext['sendMedia'] {
    return (this.#sendMedia ??= async (media: OutgoingMedia, options) => {
      await this.#beforeSpeaking();
      return this.#spaced(() => this.#transport.sendMedia(this.chatId, media, { quotedId: options?.quote ? this.message.id : undefined, answers: this.message.senderId }));
    });
  }

  get sendPoll(): MessageContext['sendPoll'] {
    return (this.#sendPoll ??= async (poll, options) => {
      await this.#beforeSpeaking();
      return this.#spaced(() => this.#deps.polls.send(this.#transport, this.chatId, poll, { answers: this.message.senderId, answerOnVote: options?.answerOnVote }));
    });
  }

  get sendLocation(): MessageContext['sendLocation'] {
    return (this.#sendLocation ??= async (location, options) => {
      const transport = this.#transport;
      if (!transport.sendLocation) throw new Error(`the ${transport.name} chat cannot show locations`);
      await this.#beforeSpeaking();
      return this.#spaced(() => transport.sendLocation!(this.chatId, location, { quotedId: options?.quote ? this.message.id : undefined, answers: this.message.senderId }));
    });
  }

  get sendContact(): MessageContext['sendContact'] {
    return (this.#sendContact ??= async (contact, options) => {
      const transport = this.#transport;
      if (!transport.sendContact) throw new Error(`the ${transport.name} chat cannot show contact cards`);
      await this.#beforeSpeaking();
      return this.#spaced(() => transport.sendContact!(this.chatId, contact, { quotedId: options?.quote ? this.message.id : undefined, answers: this.message.senderId }));
    });
  }

  get edit(): MessageContext['edit'] {
    return (this.#edit ??= (sent, newText) => this.#transport.editText(this.chatId, sent.id, newText));
  }

  get typing(): MessageContext['typing'] {
    return (this.#typing ??= (on) => this.#transport.setTyping(this.chatId, on));
  }

  get progress(): MessageContext['progress'] {
    return (this.#setProgress ??= (phrase) => {
      const slot = this.#progressSlot();
      slot.phrase = phrase;
      slot.current?.set(phrase);
    });
  }

  get replyIfQuotedDeleted(): MessageContext['replyIfQuotedDeleted'] {
    return (this.#replyIfQuotedDeleted ??= async (what) => {
      const quoted = this.message.quoted;
      if (!quoted?.deleted) return false;
      await this.reply(quotedDeletedSentence(quoted, what));
      return true;
    });
  }

  get history(): MessageContext['history'] {
    if (this.#history) return this.#history;
    const { chatId, message } = this;
    const { histories } = this.#deps;
    const incomingRemoved = () => this.#incoming !== undefined && histories.wasRemoved(this.#incoming);
    return (this.#history = {
      recent: (limit) => histories.recent(chatId, limit),
      // The bot's answer is filed under whom and which message it answers: their `.mydata` delete and a delete for
      // everyone of that message remove it (it may repeat their words). An answer to a message such a delete (or an
      // edit) removed while the answer was made is not kept: it would bring the removed words back.
      append: async (entry, options) => {
        if (entry.role === 'assistant' && incomingRemoved()) return;
        const kept = entry.role === 'assistant' && !entry.answers ? answerFiledUnder(entry, message) : entry;
        if (kept.role === 'user' && kept.id !== undefined && kept.id === message.id) this.#incoming = kept;
        await histories.append(chatId, kept, options);
      },
      recordIncoming: async (text, extra) => {
        if (this.#incomingRecorded) return;
        this.#incomingRecorded = true;
        const incoming: HistoryEntry = { id: message.id, role: 'user', senderId: message.senderId, senderName: message.senderName, text, at: message.timestamp, ...(extra?.media ? { media: extra.media } : {}) };
        this.#incoming = incoming;
        await histories.append(chatId, incoming);
      },
      incomingRecorded: () => this.#incomingRecorded,
      incomingRemoved,
    });
  }

  get memory(): MessageContext['memory'] {
    if (this.#memory) return this.#memory;
    const { chatId, message } = this;
    const { memories } = this.#deps;
    return (this.#memory = {
      facts: () => memories.facts(chatId),
      remember: (fact) => memories.remember(chatId, fact, message.senderId),
    });
  }

  get log(): Logger {
    return (this.#childLog ??= this.#deps.log.child({ chat: this.chatId }));
  }

  #progressSlot(): ProgressSlot {
    return (this.#progress ??= { current: undefined, startedAt: this.#startedAt, phrase: undefined });
  }

  /** The slot for the status message of `ctx`'s turn, when `ctx` is a message's own context. */
  static progressOf(ctx: MessageContext): ProgressSlot | undefined {
    return #progress in ctx ? (ctx as InboundContext).#progressSlot() : undefined;
  }

  /** The views map of `ctx` when it is a message's own context (not a view or a narrowed context made from one). */
  static viewsOf(ctx: MessageContext): Map<string, MessageContext> | undefined {
    // A private field is never inherited: a context made with `Object.create(ctx)` has no views of its own.
    return #views in ctx ? ((ctx as InboundContext).#views ??= new Map()) : undefined;
  }
}

/**
 * The bot's answer `entry` filed under the message it answers (its sender, and its id unless the entry names one).
 * `Object.assign` then plain stores, not `{ ...entry, answers, ... }`: V8 adds keys after a leading spread through its
 * slow path (~0.6 KB of garbage per answer instead of ~0.1 KB).
 */
function answerFiledUnder(entry: HistoryEntry, message: IncomingMessage): HistoryEntry {
  const kept: HistoryEntry = Object.assign({}, entry);
  kept.answers = message.senderId;
  if (message.id && !entry.answersMessage) kept.answersMessage = message.id;
  return kept;
}

/** The slot for the status message of `ctx`'s turn (a message's own context only; see pipeline/progress). */
export function progressSlotOf(ctx: MessageContext): ProgressSlot | undefined {
  return InboundContext.progressOf(ctx);
}

/** The context of one inbound message: replies, history and memory bound to its chat. */
export function createContext(deps: ContextDeps, transport: Transport, message: IncomingMessage, rawText: string): MessageContext {
  return new InboundContext(deps, transport, message, rawText);
}

/**
 * The context of one message seen through one plugin: its host and logger; everything else is the
 * message's own context. A class of getters, not `Object.create(ctx)`: V8 turns every object used as a prototype into
 * a prototype map, a cost paid again for each message's new context.
 */
class PluginView implements MessageContext {
  private childLog: Logger | undefined;
  constructor(
    private readonly base: MessageContext,
    private readonly deps: Pick<ContextDeps, 'host'>,
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
  get sendPoll() {
    return this.base.sendPoll;
  }
  get sendLocation() {
    return this.base.sendLocation;
  }
  get sendContact() {
    return this.base.sendContact;
  }
  get edit() {
    return this.base.edit;
  }
  get typing() {
    return this.base.typing;
  }
  get progress() {
    return this.base.progress;
  }
  get replyIfQuotedDeleted() {
    return this.base.replyIfQuotedDeleted;
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
  get log() {
    return (this.childLog ??= this.base.log.child({ plugin: this.plugin }));
  }
}

/**
 * The context seen through one plugin (its host and logger). The same view is handed out again for the same
 * message and plugin; a view of a view (or of a narrowed context) is made anew, never cached on it.
 */
export function pluginView(deps: Pick<ContextDeps, 'host'>, ctx: MessageContext, pluginName: string): MessageContext {
  const views = InboundContext.viewsOf(ctx);
  let view = views?.get(pluginName);
  if (view) return view;
  view = new PluginView(ctx, deps, pluginName, deps.host(pluginName));
  views?.set(pluginName, view);
  return view;
}
