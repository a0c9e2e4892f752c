import type { BotConfig } from '../../services/config/schema.js';
import type { Logger } from '../../services/log/logger.js';
import { sameChat } from '../guard/policy.js';
import { isGroupChatOf, isOperator, privateChatIdOf, type SessionState, type Transport } from '../port/transport.js';

/**
 * The bot's link to its transport: none until `attach`, then the one connected. The collaborators that send, read
 * ids or group roles ask it instead of holding a transport of their own (the transport comes after they are made).
 * It also knows when the bot connected and when it began to stop, so work that needs a transport waits for one
 * without hanging past a stop, and who the bot and its owners are on the network.
 */
export class TransportLink {
  private current: Transport | undefined;
  private markConnected!: () => void;
  private readonly connected = new Promise<void>((resolve) => (this.markConnected = resolve));
  private markStopping!: () => void;
  private readonly stopping = new Promise<void>((resolve) => (this.markStopping = resolve));

  constructor(
    private readonly config: () => BotConfig,
    private readonly log: Logger,
  ) {}

  /** The transport, once attached. */
  get transport(): Transport | undefined {
    return this.current;
  }

  /** The transport; throws before one is attached. */
  require(): Transport {
    if (!this.current) throw new Error('The bot has no transport yet: call bot.start(transport) first');
    return this.current;
  }

  attach(transport: Transport): void {
    this.current = transport;
  }

  /** The transport started: whoever waits in `ready()` goes on. */
  connectedNow(): void {
    this.markConnected();
  }

  /** The bot began to stop: whoever waits in `ready()` goes on (and finds no transport, or one stopping). */
  stoppingNow(): void {
    this.markStopping();
  }

  /** Resolves once a transport is connected, or the bot began to stop. */
  ready(): Promise<void> {
    return Promise.race([this.connected, this.stopping]);
  }

  /** Like `ready()`, telling which came first: true once connected, false when the stop came before any transport. */
  connectedBeforeStop(): Promise<boolean> {
    return Promise.race([this.connected.then(() => true), this.stopping.then(() => false)]);
  }

  /** The ids the transport learnt at login (phone jid, LID); none before. */
  ownIds(): string[] {
    return this.current?.ownIds() ?? [];
  }

  /** The bot's own ids: config `targetUserIds` plus the ids the transport learnt at login (phone jid, LID). */
  botIds(): string[] {
    return [...this.config().targetUserIds, ...this.ownIds()];
  }

  /** The owners' private chats with the bot (config `owners`, and the person at the console). */
  ownerChats(): string[] {
    const transport = this.current;
    const chats = new Set(this.config().owners.map((owner) => privateChatIdOf(transport, owner)));
    const operator = transport?.operatorChatId?.();
    if (operator) chats.add(operator);
    return [...chats];
  }

  /** Whether `chatId` is an owner's private chat with the bot. */
  isOwnerChat(chatId: string): boolean {
    return this.ownerChats().some((c) => sameChat(c, chatId));
  }

  /** The transport's session (link state), or offline before a transport is connected. */
  session(): SessionState {
    return this.current?.session() ?? { status: 'offline', lastError: 'no transport connected yet' };
  }

  /** Whether `chatId` is a group, as the transport names chats. */
  isGroup(chatId: string): boolean {
    return isGroupChatOf(this.current, chatId);
  }

  /** Whether `id` is the person at the machine (see `isOperator`). */
  isOperator(id: string): boolean {
    return isOperator(this.current, id);
  }

  /** True when one of `userIds` is an admin of group `chatId` (false where the transport has no group roles). */
  async isGroupAdmin(chatId: string, userIds: string[]): Promise<boolean> {
    const transport = this.current;
    if (!transport?.isGroupAdmin) return false;
    for (const id of userIds) {
      try {
        if (await transport.isGroupAdmin(chatId, id)) return true;
      } catch (err) {
        this.log.warn({ err, chat: chatId }, 'could not read the group admins');
      }
    }
    return false;
  }
}
