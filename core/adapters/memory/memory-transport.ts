import type { IncomingMedia, IncomingMessage, OutgoingContact, OutgoingLocation, OutgoingMedia, OutgoingPoll, SentMessage } from '../../kernel/port/message.js';
import { contactsLine, locationLine } from '../../kernel/port/shared.js';
import type { ChangeSender, InboundHandler, RevokeHandler, SendOptions, SessionState, Transport, TransportEvents } from '../../kernel/port/transport.js';

/** One thing the bot did, as recorded by the memory transport. */
export type BotAction =
  | { type: 'text'; chatId: string; id: string; text: string; quotedId?: string }
  | { type: 'edit'; chatId: string; id: string; text: string }
  | { type: 'react'; chatId: string; messageId: string; emoji: string }
  | { type: 'media'; chatId: string; id: string; media: OutgoingMedia }
  | { type: 'poll'; chatId: string; id: string; poll: OutgoingPoll }
  | { type: 'location'; chatId: string; id: string; location: OutgoingLocation; quotedId?: string }
  | { type: 'contact'; chatId: string; id: string; contact: OutgoingContact; quotedId?: string }
  | { type: 'typing'; chatId: string; on: boolean };

export interface PushInput {
  text?: string;
  chatId?: string;
  senderId?: string;
  senderAltId?: string;
  senderName?: string;
  isGroup?: boolean;
  mentions?: string[];
  quoted?: IncomingMessage['quoted'];
  media?: IncomingMedia;
  id?: string;
  timestamp?: number;
  /** The text relays a forwarded message, a contact card, a location or an event (see `IncomingMessage.relayed`). */
  relayed?: IncomingMessage['relayed'];
  /** A shared location (relayed as a location; the text, when not given, is the line WhatsApp would show). */
  location?: IncomingMessage['location'];
  /** Shared contact cards (relayed as a contact card; the text, when not given, names them). */
  contacts?: IncomingMessage['contacts'];
}

/**
 * An in-process transport for tests and the benchmark: `push` a message, get back what the bot did.
 *
 * @example
 * const t = new MemoryTransport();
 * await app.connect(t);
 * const actions = await t.push({ text: '.ping' });
 * expect(actions[0]).to.include({ type: 'text' });
 */
export class MemoryTransport implements Transport {
  readonly name = 'memory';
  readonly actions: BotAction[] = [];
  private handler: InboundHandler | undefined;
  private revokeHandler: RevokeHandler | undefined;
  private changeEvents: TransportEvents = {};
  private seq = 0;
  private readonly watchers = new Set<() => void>();
  /** Whether editText succeeds (false imitates a network without edits). */
  canEdit = true;
  /** Record typing indicators (off by default: they clutter assertions). */
  recordTyping = false;

  /** Group admins per group chat id (tests): `transport.groupAdmins.set(groupId, [userId])`. */
  readonly groupAdmins = new Map<string, string[]>();

  constructor(private readonly own: string[] = []) {}

  /** How often `relink` was asked for (dashboard tests). */
  relinks = 0;
  private linked = true;

  async relink(): Promise<void> {
    this.relinks++;
    this.setLinked(false);
  }

  /** The phone linked the account again after `relink` (tests of what waits for the link). */
  linkAgain(): void {
    this.setLinked(true);
  }

  private setLinked(linked: boolean): void {
    if (linked === this.linked) return;
    this.linked = linked;
    this.changeEvents.onSessionChange?.(linked ? 'linked' : 'qr', linked ? 'qr' : 'linked');
  }

  async isGroupAdmin(chatId: string, userId: string): Promise<boolean> {
    return this.groupAdmins.get(chatId)?.includes(userId) ?? false;
  }

  async start(onMessage: InboundHandler, events: TransportEvents = {}): Promise<void> {
    this.handler = onMessage;
    this.changeEvents = events;
  }
  onRevoke(handler: RevokeHandler): void {
    this.revokeHandler = handler;
  }
  /**
   * Delivers "deleted for everyone" for a message, as WhatsApp does; resolves when the bot has handled it. `by`: who
   * deleted it (without it, the transport vouches for the delete).
   */
  async revoke(chatId: string, messageId: string, by?: ChangeSender): Promise<void> {
    if (!this.revokeHandler) throw new Error('MemoryTransport: start the bot with this transport before revoking messages');
    await this.revokeHandler(chatId, messageId, by);
  }
  /** Delivers an edit of an earlier message (`by`: who edited it); resolves when the bot has applied it. */
  async edit(chatId: string, messageId: string, text: string, by?: ChangeSender): Promise<void> {
    if (!this.changeEvents.onEdit) throw new Error('MemoryTransport: start the bot with this transport before editing messages');
    await this.changeEvents.onEdit(chatId, messageId, text, by);
  }
  async stop(): Promise<void> {
    this.handler = undefined;
  }

  /** Builds a full message from a partial one (private chat of sender 10000000001 by default). */
  message(input: PushInput): IncomingMessage {
    const senderId = input.senderId ?? '10000000001@s.whatsapp.net';
    const isGroup = input.isGroup ?? (input.chatId?.endsWith('@g.us') ?? false);
    return {
      id: input.id ?? `in-${++this.seq}`,
      chatId: input.chatId ?? senderId,
      senderId,
      senderAltId: input.senderAltId,
      senderName: input.senderName,
      isGroup,
      text: input.text ?? (input.location ? locationLine(input.location) : input.contacts ? contactsLine(input.contacts) : ''),
      mentions: input.mentions ?? [],
      quoted: input.quoted,
      media: input.media,
      timestamp: input.timestamp ?? Date.now(),
      ...(input.relayed ? { relayed: input.relayed } : input.location ? { relayed: 'location' as const } : input.contacts ? { relayed: 'contact card' as const } : {}),
      ...(input.location ? { location: input.location } : {}),
      ...(input.contacts ? { contacts: input.contacts } : {}),
    };
  }

  /**
   * Delivers a message and resolves with the actions the bot took while handling it (with other messages in flight at
   * once, theirs too: every action between this one's delivery and its end).
   */
  async push(input: PushInput | IncomingMessage): Promise<BotAction[]> {
    const before = this.actions.length;
    await this.deliver(input);
    return this.actions.slice(before);
  }

  /**
   * Delivers a message and resolves once the bot handled it, without collecting what it did (see `actions`). For many
   * messages in flight at once (the bench): `push` copies every action taken while each one was handled, which for
   * N messages at once is N²/2 copies, more than the bot's own work.
   */
  async deliver(input: PushInput | IncomingMessage): Promise<void> {
    if (!this.handler) throw new Error('MemoryTransport: start the bot with this transport before pushing messages');
    const message = 'mentions' in input && 'timestamp' in input && 'id' in input && typeof input.id === 'string' && 'chatId' in input && 'senderId' in input && 'isGroup' in input
      ? (input as IncomingMessage)
      : this.message(input as PushInput);
    await this.handler(message);
  }

  /**
   * Resolves once `check` holds, tried now and again after each action the bot takes, with what it returned: a test
   * awaits what the bot does on its own (a reminder firing, a notice to the owner) instead of polling or sleeping.
   * @example await transport.until(() => transport.texts().includes('⏰ Reminder: tea'));
   */
  until<T>(check: () => T | undefined | null | false): Promise<T> {
    const now = check();
    if (now) return Promise.resolve(now);
    return new Promise<T>((resolve) => {
      const off = this.onAction(() => {
        const hit = check();
        if (!hit) return;
        off();
        resolve(hit);
      });
    });
  }

  /** Calls `listener` after each action the bot takes from now on; returns the function that stops it. */
  onAction(listener: (action: BotAction) => void): () => void {
    const watcher = () => listener(this.actions.at(-1)!);
    this.watchers.add(watcher);
    return () => void this.watchers.delete(watcher);
  }

  /** Records what the bot did and tells the `until` callers. */
  private record(action: BotAction): void {
    this.actions.push(action);
    for (const watcher of [...this.watchers]) watcher();
  }

  /** Texts the bot sent, in order (all chats). */
  texts(): string[] {
    return this.actions.filter((a): a is Extract<BotAction, { type: 'text' }> => a.type === 'text').map((a) => a.text);
  }

  async sendText(chatId: string, text: string, options?: { quotedId?: string }): Promise<SentMessage> {
    const id = `out-${++this.seq}`;
    this.record({ type: 'text', chatId, id, text, quotedId: options?.quotedId });
    return { id };
  }
  async editText(chatId: string, messageId: string, text: string): Promise<boolean> {
    if (!this.canEdit) return false;
    this.record({ type: 'edit', chatId, id: messageId, text });
    return true;
  }
  async react(chatId: string, messageId: string, emoji: string): Promise<void> {
    this.record({ type: 'react', chatId, messageId, emoji });
  }
  async sendMedia(chatId: string, media: OutgoingMedia): Promise<SentMessage> {
    const id = `out-${++this.seq}`;
    this.record({ type: 'media', chatId, id, media });
    return { id };
  }
  async sendLocation(chatId: string, location: OutgoingLocation, options?: SendOptions): Promise<SentMessage> {
    const id = `out-${++this.seq}`;
    this.record({ type: 'location', chatId, id, location, ...(options?.quotedId ? { quotedId: options.quotedId } : {}) });
    return { id };
  }
  async sendContact(chatId: string, contact: OutgoingContact, options?: SendOptions): Promise<SentMessage> {
    const id = `out-${++this.seq}`;
    this.record({ type: 'contact', chatId, id, contact, ...(options?.quotedId ? { quotedId: options.quotedId } : {}) });
    return { id };
  }
  async sendPoll(chatId: string, poll: OutgoingPoll): Promise<SentMessage> {
    const id = `out-${++this.seq}`;
    this.record({ type: 'poll', chatId, id, poll });
    return { id };
  }
  /**
   * Votes on a poll the bot sent (options by number, from 1; none takes the vote back), as WhatsApp reports a vote;
   * resolves with the actions the bot took while handling it.
   */
  async vote(pollId: string, voterId: string, choices: number[], voterName?: string): Promise<BotAction[]> {
    const sent = this.actions.find((a): a is Extract<BotAction, { type: 'poll' }> => a.type === 'poll' && a.id === pollId);
    if (!sent) throw new Error(`MemoryTransport: no poll ${pollId} was sent`);
    if (!this.changeEvents.onPollVote) throw new Error('MemoryTransport: start the bot with this transport before voting');
    const before = this.actions.length;
    await this.changeEvents.onPollVote({ chatId: sent.chatId, pollId, voterId, voterName, question: sent.poll.question, selected: choices.map((n) => sent.poll.options[n - 1]) });
    return this.actions.slice(before);
  }
  /**
   * Reacts to a message as `senderId` (an owner's 👍 on a held action's message, say), as WhatsApp reports a reaction;
   * resolves with the actions the bot took while handling it. `messageId` defaults to the bot's last message in `chatId`.
   */
  async reactTo(emoji: string, senderId: string, chatId: string = senderId, messageId?: string): Promise<BotAction[]> {
    if (!this.changeEvents.onReaction) throw new Error('MemoryTransport: start the bot with this transport before reacting');
    const sent = this.actions.filter((a): a is Extract<BotAction, { type: 'text' | 'media' | 'poll' }> => (a.type === 'text' || a.type === 'media' || a.type === 'poll') && a.chatId === chatId);
    const target = messageId ?? sent.at(-1)?.id;
    if (!target) throw new Error(`MemoryTransport: the bot sent nothing to ${chatId} to react to`);
    const before = this.actions.length;
    await this.changeEvents.onReaction({ chatId, messageId: target, senderId, emoji });
    return this.actions.slice(before);
  }
  async setTyping(chatId: string, on: boolean): Promise<void> {
    if (this.recordTyping) this.record({ type: 'typing', chatId, on });
  }
  ownIds(): string[] {
    return this.own;
  }
  session(): SessionState {
    return this.linked ? { status: 'linked', me: { id: this.own[0] } } : { status: 'qr', qr: 'memory-transport-relink-qr' };
  }
}
