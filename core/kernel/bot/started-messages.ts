import { OutboxClosedError, RecipientRefused } from '../../api/errors.js';
import type { BotConfig } from '../../services/config/schema.js';
import type { Logger } from '../../services/log/logger.js';
import { SendCancelledError } from '../../services/sending/outbox.js';
import { splitMessage } from '../../services/sending/split-message.js';
import type { HistoryStore } from '../../services/store/history.js';
import type { AccessControl } from '../access/access-control.js';
import { withoutNoReply } from '../chat/ai-service.js';
import type { EffectGuard } from '../guard/effect-guard.js';
import { sameChat } from '../guard/policy.js';
import { refusalFor } from '../guard/recipients.js';
import { botAnswers, isBlocked } from '../plugin/access.js';
import type { PollBook } from '../chat/polls.js';
import type { OutgoingMedia, OutgoingPoll, SentMessage } from '../port/message.js';
import type { Transport } from '../port/transport.js';
import type { TransportLink } from './transport-link.js';

/** Where `host.send` / `host.sendMedia` go: the paced outbox (core/services/sending/outbox.ts). */
export interface BotInitiatedSender {
  sendText(chatId: string, text: string): Promise<SentMessage>;
  sendMedia(chatId: string, media: OutgoingMedia): Promise<SentMessage>;
  /** One send or edit at the same pace (a long turn's status message); dropped when `signal` aborts before its turn. */
  paced<T>(chatId: string, send: (transport: Transport) => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** One message of an answer within a turn, spaced per chat and overall (a private chat's first goes at once). */
  answer?<T>(chatId: string, send: () => Promise<T>, at: { group: boolean; first: boolean }): Promise<T>;
}

export interface StartedMessagesDeps {
  config: () => BotConfig;
  link: TransportLink;
  /** The safe-sending limiter; without one, straight to the transport. */
  outbox: BotInitiatedSender | undefined;
  access: AccessControl;
  /** Which chats wrote to the bot, and which recipients the owner approved. */
  effects: Pick<EffectGuard, 'approvedRecipient' | 'hasWritten'>;
  histories: HistoryStore;
  /** Sends a poll and keeps what its votes need. */
  polls: Pick<PollBook, 'send'>;
  log: Logger;
}

/**
 * Messages the bot starts on its own (not a reply in the chat that asked): the recipient rule first
 * (guard/recipients.ts), then the outbox's pacing. Owner notices, `host.send`, a held action's outcome.
 */
export class StartedMessages {
  constructor(private readonly deps: StartedMessagesDeps) {}

  /** A text the bot starts: a long text goes as several messages, cut at paragraphs; the no-reply token never goes. */
  async text(chatId: string, text: string): Promise<SentMessage> {
    const { outbox, link, log } = this.deps;
    let sent: SentMessage = { id: '' };
    // The no-reply token is never sent, alone or as a line of a longer text (a model's answer handed on as it was).
    const said = withoutNoReply(text);
    if (!said.trim()) {
      log.info({ chat: chatId }, 'a message the bot started was only the no-reply token: nothing is sent');
      return sent;
    }
    await this.checkRecipient(chatId);
    for (const part of splitMessage(said)) sent = await this.saidIfStopping(chatId, () => (outbox ? outbox.sendText(chatId, part) : link.require().sendText(chatId, part)));
    return sent;
  }

  /** Media the bot starts: the same rule and pacing as `text`. */
  async media(chatId: string, media: OutgoingMedia): Promise<SentMessage> {
    const { outbox, link } = this.deps;
    await this.checkRecipient(chatId);
    return this.saidIfStopping(chatId, () => (outbox ? outbox.sendMedia(chatId, media) : link.require().sendMedia(chatId, media)));
  }

  /** A poll the bot starts (an automation's): the same rule and pacing; a vote on it is kept as context, not answered. */
  poll(chatId: string, poll: OutgoingPoll): Promise<SentMessage> {
    return this.own(chatId, (transport) => this.deps.polls.send(transport, chatId, poll, {}));
  }

  /**
   * A send of the caller's own making the bot starts (`send` gets the transport when its turn came: a file written
   * only for the time of its send): the same rule and pacing as `text`.
   */
  async own<T>(chatId: string, send: (transport: Transport) => Promise<T>): Promise<T> {
    const { outbox, link } = this.deps;
    await this.checkRecipient(chatId);
    return this.saidIfStopping(chatId, () => (outbox ? outbox.paced(chatId, send) : send(link.require())));
  }

  /**
   * Tells every owner (config `owners`, and the person at the console) in their private chat, paced like every
   * message the bot starts on its own. Resolves once each was sent or failed (failures are logged).
   */
  async tellOwners(text: string): Promise<Array<{ chatId: string; messageId: string }>> {
    const sent: Array<{ chatId: string; messageId: string }> = [];
    await Promise.all(
      this.deps.link.ownerChats().map((chatId) =>
        this.text(chatId, text)
          .then((message) => void sent.push({ chatId, messageId: message.id }))
          .catch((err: unknown) => this.deps.log.warn({ err, chat: chatId }, 'could not tell an owner')),
      ),
    );
    return sent;
  }

  /**
   * A send or an edit the bot makes on its own in a chat (a long turn's status message): through the outbox's pacing
   * when there is one; without one at once, unless `signal` was aborted.
   */
  paced<T>(chatId: string, send: (transport: Transport) => Promise<T>, signal: AbortSignal): Promise<T> {
    const { outbox, link } = this.deps;
    if (outbox) return outbox.paced(chatId, send, signal);
    if (signal.aborted) return Promise.reject(new SendCancelledError());
    return send(link.require());
  }

  /** A bot-started send the stop cut short is said in the log (the caller gets `OutboxClosedError`), never dropped silently. */
  private async saidIfStopping<T>(chatId: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (err) {
      if (err instanceof OutboxClosedError) this.deps.log.warn({ chat: chatId }, 'a message the bot started was not sent: the bot is stopping');
      throw err;
    }
  }

  /**
   * Rejects with `RecipientRefused` unless the bot may write first to `chatId`; with `OutboxClosedError` ("the bot is
   * stopping") when the stop came while it waited for a transport to check against.
   */
  private async checkRecipient(chatId: string): Promise<void> {
    const { link, effects, histories, log } = this.deps;
    // Who the owners are in the console, and which chats are let in, is known once a transport is connected.
    const connected = await link.connectedBeforeStop();
    if (!connected) {
      log.warn({ chat: chatId }, 'a message the bot started was not sent: the bot is stopping');
      throw new OutboxClosedError();
    }
    const refusal = await refusalFor(chatId, {
      ownerChat: (id) => link.isOwnerChat(id),
      approved: (id) => effects.approvedRecipient(id),
      letIn: (id) => this.letIn(id),
      // Noted as messages arrive; a chat whose history shows it wrote (before this version) counts too.
      wrote: async (id) => (await effects.hasWritten(id)) || (await histories.recent(id, 200)).some((e) => e.role === 'user' && !!e.senderId && !link.botIds().some((b) => sameChat(b, e.senderId!))),
    });
    if (!refusal) return;
    log.warn({ chat: chatId }, `a message the bot started was not sent: ${refusal}`);
    throw new RecipientRefused(chatId, refusal);
  }

  /** The access rules let this chat in now: a group the bot takes part in, a private chat whose person is answered. */
  private letIn(chatId: string): boolean {
    const { config, link, access } = this.deps;
    const cfg = config();
    if (link.isGroup(chatId)) return (access.activation(chatId) ?? (cfg.groups.policy === 'open' ? 'mention' : 'off')) !== 'off';
    const ids = [chatId];
    if (isBlocked(ids, cfg)) return false;
    return botAnswers(ids, cfg) || (cfg.access.mode !== 'owners' && access.isApproved(ids));
  }
}
