import { quietSignalConsole } from './signal-console.js';
import { CallLayer } from './calls.js';
import type { WAMessage } from '@whiskeysockets/baileys';
import { plainJid } from './message-mapper.js';
import { logOnlyNotifier } from '../../services/notices/owner-notifier.js';
import type { IncomingMessage, OutgoingContact, OutgoingLocation, OutgoingMedia, OutgoingPoll, SentMessage } from '../../kernel/port/message.js';
import type { DeclaredStores } from '../../kernel/port/privacy-participant.js';
import type { SendOptions, InboundHandler, SessionState, Transport, TransportEvents } from '../../kernel/port/transport.js';
import { AuthStateCorruptError } from './auth-store.js';
import { BoundedMap } from './caches.js';
import { ChatRoutes } from './chat-routes.js';
import { ChatSettings } from './chat-settings.js';
import { WhatsAppConnection } from './connection.js';
import { IdentityLayer } from './identity-layer.js';
import { Inbound } from './inbound.js';
import type { WhatsAppTransportOptions } from './options.js';
import { Outbound } from './outbound.js';
import { PendingWork } from './pending-work.js';
import { PollStore } from './poll-store.js';
import type { Restriction } from './send-status.js';
import { whatsAppStores } from './whatsapp-stores.js';
import type { PluginStores } from '../../services/store/plugin-store.js';

export { AuthStateCorruptError };
export { pairingDigits } from './linking.js';
export { EDIT_WINDOW_MS } from './outbound.js';
export type { WhatsAppPreferences, WhatsAppTransportOptions } from './options.js';
export type { SocketFactory, SocketOptions, WhatsAppSocket } from './socket.js';

/**
 * The WhatsApp transport over Baileys 7, layered as Baileys layers its socket, each layer one file with one job:
 * the connection (socket lifecycle, linking, reconnects, watchdog, credentials), identity (phone ↔ LID), the chats'
 * settings (group metadata, disappearing timers), inbound (upserts → the core's messages, receipts) and outbound
 * (sends, edits, reactions, media, typing). This class only composes them into the core's Transport.
 *
 * @example
 * const transport = new WhatsAppTransport({ ...whatsAppSettings(app.settings, () => app.config), log });
 * await app.connect(transport);
 */
export class WhatsAppTransport implements Transport {
  readonly name = 'whatsapp';
  /** People type in bursts: their lines within 1.5 s are one turn (config `conversation.debounceMs`). */
  readonly defaultDebounceMs = 1500;
  /** A turn running longer than 8 s shows one status message, edited as it goes (`conversation.progressAfterSeconds`). */
  readonly defaultProgressAfterSeconds = 8;
  /** WhatsApp bans accounts that send too fast: an answer's messages are spaced (see the outbox). */
  readonly pacesAnswers = true;
  private readonly connection: WhatsAppConnection;
  private readonly identity: IdentityLayer;
  private readonly chats: ChatSettings;
  private readonly inbound: Inbound;
  private readonly outbound: Outbound;
  private readonly polls: PollStore;
  private readonly calls: CallLayer;
  /** What the adapter keeps in the store database (`whatsapp` namespace). */
  private readonly stores: PluginStores;
  private leaveDailySweeps: (() => void) | undefined;
  /** Each chat's address and disappearing timer, kept across restarts (opened at start). */
  private routes: ChatRoutes | undefined;

  constructor(private readonly options: WhatsAppTransportOptions) {
    const notices = options.notices ?? logOnlyNotifier(options.log);
    const pending = new PendingWork();
    /** Recent inbound messages (for quoting, reacting and read receipts), by `chat|id`. */
    const received = new BoundedMap<string, WAMessage>(1000);
    this.connection = new WhatsAppConnection(options, notices, pending, {
      attach: (socket, isCurrent) => {
        this.outbound.attach(socket, isCurrent);
        this.inbound.attach(socket, isCurrent);
        this.identity.attach(socket);
        this.chats.attach(socket);
        this.calls.attach(socket, isCurrent);
      },
      getMessage: (key) => this.outbound.getMessage(key),
      cachedGroupMetadata: (jid) => this.chats.cached(jid, () => this.connection.socket),
      statusChanged: (status, previous) => this.inbound.listeners.onSessionChange?.(status, previous),
      opened: (me) => {
        pending.track(this.identity.learnOwn(me.id, me.lid).catch((err) => options.log.warn({ err }, 'could not drop the phone ↔ LID pairs naming the account itself')));
      },
    });
    this.calls = new CallLayer({ log: options.log, listeners: () => this.inbound.listeners, sendText: (chatId, text) => this.outbound.sendText(chatId, text), track: (work) => pending.track(work) });
    this.identity = new IdentityLayer(
      options.log,
      () => this.connection.socket,
      async (from, to) => {
        await this.inbound.listeners.onChatIdChange?.(from, to);
      },
      () => this.connection.ownIds(),
      () => this.routes,
    );
    this.chats = new ChatSettings(options.groupTtlMs, (meta) => this.identity.learnMembers(meta), () => this.routes);
    this.stores = whatsAppStores(options.dataDir);
    // A list that no longer matches is set aside with its bytes and named by the data health (votes on those polls are no longer read).
    const polls = new PollStore(this.stores);
    this.polls = polls;
    this.outbound = new Outbound(options, notices, this.connection, this.identity, this.chats, received, polls);
    this.inbound = new Inbound(options, this.connection, this.identity, this.chats, this.outbound, received, pending, polls);
  }

  /**
   * Loads the session and starts connecting; resolves once the first socket is created (not when it is linked).
   * Rejects with AuthStateCorruptError (naming the file) when creds.json is corrupt.
   */
  async start(onMessage: InboundHandler, events: TransportEvents = {}): Promise<void> {
    // Before any socket: libsignal prints whole session records (private keys) when a session changes.
    quietSignalConsole(this.options.log);
    this.inbound.listen(onMessage, events);
    this.connection.resume();
    this.routes ??= await ChatRoutes.open(this.stores, (err) => this.options.log.warn({ err }, 'could not save where a chat is answered or its disappearing timer (kept in memory, tried again)'));
    await this.identity.open(this.stores);
    await this.outbound.open(this.stores);
    // Polls the previous version kept as one document are taken in before anything (a .mydata request) reads them.
    await this.polls.ready();
    // Sent messages older than WhatsApp's 14-day resend window go (now, then in the app's daily retention pass).
    this.stores.sweepLogged();
    this.leaveDailySweeps?.();
    const stores = this.stores;
    this.leaveDailySweeps = this.options.dailySweeps?.add('whatsapp', () => stores.sweep());
    await this.inbound.open(this.stores);
    await this.connection.open();
  }

  async stop(): Promise<void> {
    this.leaveDailySweeps?.();
    this.leaveDailySweeps = undefined;
    this.connection.stop();
    await this.inbound.mapped();
    await Promise.all([this.connection.flush(), this.identity.flush(), this.inbound.flush(), this.outbound.flush()]);
    await this.stores.close();
    this.inbound.listen(undefined);
  }

  /** Resolves when every message received so far has been mapped and handled, and the login hook ran (tests, graceful stop). */
  idle(): Promise<void> {
    return this.inbound.idle();
  }

  /** Resolves once what was sent so far is recorded in the store database (written after each send). */
  whenSentRecorded(): Promise<void> {
    return this.outbound.flush();
  }

  /** The owner's "relink" (dashboard): logs this device out, clears the stored session and shows a new QR. */
  relink(): Promise<void> {
    return this.connection.relink();
  }

  /** The owner asked (dashboard) to link with a phone number: a pairing code instead of the QR. */
  requestPairingCode(phone: string): Promise<string> {
    return this.connection.requestPairingCode(phone);
  }

  session(): SessionState {
    return { ...this.connection.session(), ...(this.isRestricted() ? { restricted: this.restriction() } : {}) };
  }

  ownIds(): string[] {
    return this.connection.ownIds();
  }

  /** Groups whose subject is `name` (case aside), from WhatsApp's list of the account's groups. */
  async findChats(name: string): Promise<Array<{ id: string; name: string }>> {
    const socket = this.connection.socket;
    if (!socket?.groupFetchAllParticipating) return [];
    const wanted = name.trim().toLowerCase();
    const groups = await socket.groupFetchAllParticipating();
    return Object.values(groups)
      .filter((g) => g?.id && typeof g.subject === 'string' && g.subject.trim().toLowerCase() === wanted)
      .map((g) => ({ id: g.id, name: g.subject }));
  }

  /**
   * In self-chat mode the person at the phone is the account itself: their chat is "Message yourself" (the own phone
   * jid), where what the owners are told arrives and whose messages count as an owner's.
   */
  operatorChatId(): string | undefined {
    if (this.options.preferences?.().selfChat !== true) return undefined;
    return plainJid(this.connection.ownId());
  }

  sendText(chatId: string, text: string, options?: SendOptions): Promise<SentMessage> {
    return this.outbound.sendText(chatId, text, options);
  }

  editText(chatId: string, messageId: string, text: string): Promise<boolean> {
    return this.outbound.editText(chatId, messageId, text);
  }

  react(chatId: string, messageId: string, emoji: string, author?: string): Promise<void> {
    return this.outbound.react(chatId, messageId, emoji, author);
  }

  sendMedia(chatId: string, media: OutgoingMedia, options?: SendOptions): Promise<SentMessage> {
    return this.outbound.sendMedia(chatId, media, options);
  }

  sendLocation(chatId: string, location: OutgoingLocation, options?: SendOptions): Promise<SentMessage> {
    return this.outbound.sendLocation(chatId, location, options);
  }

  sendContact(chatId: string, contact: OutgoingContact, options?: SendOptions): Promise<SentMessage> {
    return this.outbound.sendContact(chatId, contact, options);
  }

  sendPoll(chatId: string, poll: OutgoingPoll, options?: SendOptions): Promise<SentMessage> {
    return this.outbound.sendPoll(chatId, poll, options);
  }

  setTyping(chatId: string, typing: boolean): Promise<void> {
    return this.outbound.setTyping(chatId, typing);
  }

  /** Blue ticks on a message the bot took up (config `whatsapp.readReceipts`), with the key it arrived under. */
  markRead(message: IncomingMessage): void {
    this.inbound.markRead(message);
  }

  /** Admin of a group, from its (cached) metadata; a participant may be listed by phone jid or by LID. */
  isGroupAdmin(chatId: string, userId: string): Promise<boolean> {
    const ids = [userId, this.identity.altOf(userId)].filter((id): id is string => Boolean(id));
    return this.chats.isAdmin(chatId, ids, this.connection.socket);
  }

  /**
   * The adapter's declared stores (whatsapp-stores.ts), which the core adopts into the privacy controls: `.mydata`,
   * deletes, edits and chat moves reach them by declaration alone. Outside them, because the linked
   * device cannot work without them and they hold no words of anyone: the session in `data/session_auth/` (Signal
   * sessions and sender keys, device lists and Baileys' own LID mapping, which encryption to the person needs) and
   * `data/whatsapp/seen-messages.json` (ids of the last messages handled, so a message delivered twice is answered once).
   */
  declaredStores(): DeclaredStores {
    return this.stores;
  }

  /** Decryption failures since start (WhatsApp delivered a message this device could not decrypt). */
  decryptionFailures(): number {
    return this.inbound.decryptionFailures();
  }

  /** True while WhatsApp restricts the account (463 / reach-out time-lock): sending should pause. */
  isRestricted(): boolean {
    return this.outbound.isRestricted();
  }

  /** The restriction in force, if any. */
  restriction(): Restriction | undefined {
    return this.outbound.restriction();
  }

  /** Called with the restriction when WhatsApp restricts the account, and with undefined when it is lifted; returns the remover. */
  onRestrictionChange(listener: (restriction: Restriction | undefined) => void): () => void {
    this.outbound.sendStatus.events.on('restricted', listener);
    return () => this.outbound.sendStatus.events.off('restricted', listener);
  }

  /** Sends WhatsApp reported as failed after the fact, by error code (for metrics). */
  sendFailures(): Record<string, number> {
    return this.outbound.sendStatus.failureCounts();
  }
}
