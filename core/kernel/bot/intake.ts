import type { BotConfig } from '../../services/config/schema.js';
import type { Logger } from '../../services/log/logger.js';
import type { AccessControl } from '../access/access-control.js';
import type { BotEvents } from '../automation/events.js';
import type { Capabilities } from '../capabilities/capabilities.js';
import type { EffectGuard } from '../guard/effect-guard.js';
import { isMyDataCommand } from '../pipeline/access-gate.js';
import type { BurstTurns } from '../pipeline/burst-turns.js';
import { Bursts } from '../pipeline/bursts.js';
import type { ChatQueue } from '../pipeline/chat-queue.js';
import { createContext, pluginView, type ContextDeps } from '../pipeline/context.js';
import type { DeletedMessages } from '../pipeline/deleted-messages.js';
import { handledText } from '../pipeline/filters.js';
import { messagePath } from '../pipeline/message-path.js';
import { keptAsWatched } from '../pipeline/watched-chats.js';
import type { PluginRegistry } from '../plugin/registry.js';
import type { MessageContext } from '../plugin/message-context.js';
import type { Plugin } from '../plugin/spec.js';
import type { IncomingMessage, MediaKind } from '../port/message.js';
import { boundDownloads } from '../pipeline/media-bounds.js';
import type { ChatChanges } from './chat-changes.js';
import type { StartedMessages } from './started-messages.js';
import type { TransportLink } from './transport-link.js';

export interface IntakeDeps {
  config: () => BotConfig;
  log: Logger;
  queue: ChatQueue;
  link: TransportLink;
  registry: PluginRegistry;
  capabilities: Capabilities;
  access: AccessControl;
  /** Notes which chats wrote (the bot may later write to them first). */
  effects: Pick<EffectGuard, 'noteWrote'>;
  /** The bot's events (`message.received` for webhooks). */
  events: BotEvents;
  burstTurns: BurstTurns;
  deletedMessages: DeletedMessages;
  /** What a message's context is made of (see pipeline/context). */
  contexts: ContextDeps;
  /** Where a long turn's status message is paced. */
  started: Pick<StartedMessages, 'paced'>;
  /** Chat moves that failed part-way: finished before the chat's next message is taken. */
  moves: Pick<ChatChanges, 'unfinishedMoveTo' | 'moveChat'>;
  /** The plugin that answers free text (the `chat` core plugin): the path says so when it is off. */
  fallback: Plugin;
}

/**
 * The way in for inbound messages: a sender's burst of free text as one turn (pipeline/bursts), each chat's messages
 * in order (the queue), watched chats kept read-only, then the message path (pipeline/message-path.ts, read
 * top-down: access, observers, filters, plugin handlers, and what no plugin took).
 */
export class Intake {
  /** A sender's burst of free text (and what they send while it is answered) as one turn. */
  readonly bursts: Bursts;
  private pipeline: ((ctx: MessageContext) => Promise<void>) | undefined;
  /** What ended turns still finish (see `afterTurns`). */
  private readonly turnTails = new Set<Promise<void>>();
  /** The owner's limit for downloads of each media kind (read at each download). */
  private readonly downloadLimit = (kind: MediaKind) => Math.floor(this.deps.config().media.maxDownloadMB[kind] * 1024 * 1024);
  /** The account's own ids, asked only for a message of a watched chat. */
  private readonly ownIds = () => this.deps.link.ownIds();

  constructor(private readonly deps: IntakeDeps) {
    const { config, link, queue, burstTurns } = deps;
    this.bursts = new Bursts({
      windowMs: () => config().conversation.debounceMs ?? link.transport?.defaultDebounceMs ?? 0,
      joinable: (message) => joinsBursts(message, config().prefix),
      queue: (chatId, take) => queue.push(chatId, () => this.process(take())),
      merged: (chatId, messages, turnId) => void burstTurns.note(chatId, messages, turnId),
    });
  }

  /**
   * Handles one inbound message. Messages of one chat are handled strictly in order; different chats in parallel; a
   * sender's burst of free text within `conversation.debounceMs` is one turn (pipeline/bursts). Never rejects: a
   * failure is logged and, where the user expects an answer, told in a short sentence.
   */
  handle(message: IncomingMessage): Promise<void> {
    const { moves } = this.deps;
    boundDownloads(message, this.downloadLimit);
    // The move is finished first, so the message's own writes never race it. (It never rejects.)
    const movedFrom = moves.unfinishedMoveTo(message.chatId);
    if (movedFrom) return moves.moveChat(movedFrom, message.chatId).then(() => this.bursts.offer(message));
    return this.bursts.offer(message);
  }

  /** The context of one inbound message (see pipeline/context). */
  context(message: IncomingMessage, rawText: string): MessageContext {
    return createContext(this.deps.contexts, this.deps.link.require(), message, rawText);
  }

  /** What plugin `name` sees of a message's context. */
  view(ctx: MessageContext, name: string): MessageContext {
    return pluginView(this.deps.contexts, ctx, name);
  }

  /** Resolves once the work ended turns left running (the last edit of their status messages) is done. */
  async turnsSettled(): Promise<void> {
    while (this.turnTails.size) await Promise.all([...this.turnTails]);
  }

  /** Not async: the queue calls it inside a `then`, where a throw is a rejection; the pipeline's promise is handed on. */
  private process(message: IncomingMessage): Promise<void> | undefined {
    const { config, registry, log, capabilities } = this.deps;
    // A chat the owner watches read-only: its watchers keep the message, and the bot says nothing there.
    // A person's `.mydata` in their own private chat is their right even there (what the bot keeps about them).
    const myData = !message.isGroup && !message.fromMe && isMyDataCommand(message.text.trim(), config().prefix);
    const kept = myData ? false : keptAsWatched(message, registry, this.ownIds, log, capabilities);
    return kept ? kept.then(() => undefined) : this.processUnwatched(message);
  }

  private processUnwatched(message: IncomingMessage): Promise<void> | undefined {
    const { access, effects, events, deletedMessages, log } = this.deps;
    // The owner typing on the phone (not the bot): that chat is theirs for a while; nothing is answered.
    if (message.fromMe) return access.ownerTyped(message);
    effects.noteWrote(message.chatId);
    if (events.heard('message.received')) events.emit('message.received', { chat: message.chatId, sender: message.senderId, id: message.id, text: message.text, ...(message.media ? { media: message.media.kind } : {}) });
    const text = handledText(message, log);
    if (text === undefined) return undefined;
    // A quote of a message deleted for everyone reaches the plugins without its words or media.
    if (message.quoted) return deletedMessages.mark(message.chatId, message.quoted).then((quoted) => this.run({ ...message, quoted }, text));
    return this.run(message, text);
  }

  private run(message: IncomingMessage, text: string): Promise<void> {
    const ctx = this.context(message, text);
    this.pipeline ??= this.composePipeline();
    return this.pipeline(ctx);
  }

  private composePipeline(): (ctx: MessageContext) => Promise<void> {
    const { config, access, registry, capabilities, link, started, fallback } = this.deps;
    return messagePath({
      config,
      access,
      registry,
      capabilities,
      transport: () => link.transport,
      view: (ctx, name) => this.view(ctx, name),
      answersFreeText: () => registry.active().some((s) => s.plugin === fallback),
      paced: (chatId, send, signal) => started.paced(chatId, send, signal),
      after: (work) => this.afterTurns(work),
    });
  }

  /** Work a turn leaves running after it ends (the last edit of its status message), waited for by `turnsSettled()`. */
  private afterTurns(work: Promise<void>): void {
    const tail = work.catch((err: unknown) => this.deps.log.warn({ err }, 'the status message of a long answer could not take its last state')).finally(() => this.turnTails.delete(tail));
    this.turnTails.add(tail);
  }
}

/**
 * Free text or a photo that may wait for the sender's next lines or photos (an album arrives as one message per
 * photo): not the owner's own typing, no other media, not a command (the prefix or a `/` literal, also after a
 * leading @mention, also as a photo's caption).
 */
function joinsBursts(message: IncomingMessage, prefix: string): boolean {
  if (message.fromMe || (message.media && message.media.kind !== 'image')) return false;
  const text = message.text.replace(/^(\s*@\d+)+/, '').trimStart();
  if (text.startsWith(prefix) || text.startsWith('/')) return false;
  return Boolean(text) || Boolean(message.media);
}
