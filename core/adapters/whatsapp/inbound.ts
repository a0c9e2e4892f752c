import { isJidStatusBroadcast, NO_MESSAGE_FOUND_ERROR_TEXT, normalizeMessageContent, proto as waProto, type BaileysEventMap, type WAMessage } from '@whiskeysockets/baileys';
import type { Logger } from '../../services/log/logger.js';
import type { DownloadOptions, IncomingMessage, MediaKind } from '../../kernel/port/message.js';
import { downloadMedia } from './media-download.js';
import type { ChangeSender, InboundHandler, SendOptions, TransportEvents } from '../../kernel/port/transport.js';
import type { SentMessage } from '../../kernel/port/message.js';
import type { BoundedMap } from './caches.js';
import type { ChatSettings } from './chat-settings.js';
import type { WhatsAppConnection } from './connection.js';
import type { IdentityLayer } from './identity-layer.js';
import { expirationOf, isViewOnce, mapIncoming, plainJid, textOf, timerChangeOf, type MediaDownloader } from './message-mapper.js';
import type { WhatsAppTransportOptions } from './options.js';
import type { PendingWork } from './pending-work.js';
import type { PollStore } from './poll-store.js';
import type { PluginStores } from '../../services/store/plugin-store.js';
import { readPollVote } from './poll-votes.js';
import { SeenMessages } from './seen-messages.js';
import { isSelfChat } from '../../kernel/port/ids.js';
import type { WhatsAppSocket } from './socket.js';

const DEFAULT_MAX_OFFLINE_AGE_MS = 60 * 60_000;

/** What the inbound layer needs of the outbound one: to answer a view-once message, and to know the bot's own echoes. */
export interface OutboundForInbound {
  sendText(chatId: string, text: string, options?: SendOptions): Promise<SentMessage>;
  isOwnMessage(id: string | null | undefined): boolean;
}

/** Past this, a download with no limit of its own stops (the core always gives one; this guards a caller that does not). */
const DOWNLOAD_CEILING_BYTES = 2048 * 1024 * 1024;

function defaultDownload(message: WAMessage, socket: WhatsAppSocket, limit: DownloadOptions & { kind: MediaKind }, extraOrigins: readonly string[] | undefined, loopback: boolean, log: Logger): Promise<Buffer> {
  return downloadMedia(message, {
    kind: limit.kind,
    maxBytes: limit.maxBytes ?? DOWNLOAD_CEILING_BYTES,
    ...(extraOrigins ? { extraOrigins } : {}),
    ...(loopback ? { loopbackForTests: true } : {}),
    // Old media links expire; the phone is asked to upload the media again when the socket can.
    reupload: (m) => {
      log.info({ id: m.key.id }, 'media link expired: asking the phone to upload it again');
      return socket.updateMediaMessage ? socket.updateMediaMessage(m) : Promise.reject(new Error('media link expired'));
    },
  });
}

/**
 * The inbound layer (Baileys' messages-recv.ts): turns each `messages.upsert` into the core's IncomingMessage (one
 * at a time, in order), learning the pairs and timers it carries; hands edits and deletes-for-everyone to the core's
 * listeners; drops duplicates (`data/whatsapp/seen-messages.json`), the bot's own echoes, undecryptable messages and
 * late deliveries past the offline age; refuses view-once media in words; sends read receipts.
 */
export class Inbound {
  private readonly log: Logger;
  private handler: InboundHandler | undefined;
  private events: TransportEvents = {};
  private seen: SeenMessages | undefined;
  private decryptFailures = 0;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly options: WhatsAppTransportOptions,
    private readonly connection: WhatsAppConnection,
    private readonly identity: IdentityLayer,
    private readonly chats: ChatSettings,
    private readonly outbound: OutboundForInbound,
    /** Recent inbound messages (for quoting and reacting), by `chat|id`: filled here, read by the outbound layer. */
    private readonly received: BoundedMap<string, WAMessage>,
    private readonly pending: PendingWork,
    /** The polls the bot sent, with their secrets: a vote is read with its poll's. */
    private readonly polls: PollStore,
  ) {
    this.log = options.log;
  }

  /** Where messages and the core's edit/delete listeners go from now on. */
  listen(handler: InboundHandler | undefined, events: TransportEvents = {}): void {
    this.handler = handler;
    this.events = events;
  }

  /** The core's listeners (an identity move tells `onChatIdChange`). */
  get listeners(): TransportEvents {
    return this.events;
  }

  /** `stores`: the adapter's declared stores (or a data folder alone); a damaged list is set aside by the store and reported. */
  async open(stores: PluginStores | string): Promise<void> {
    this.seen = new SeenMessages(stores, 2000);
  }

  /** Takes a socket's incoming messages, and counts them and receipts as message traffic. */
  attach(socket: WhatsAppSocket, isCurrent: () => boolean): void {
    socket.ev.on('messages.upsert', (upsert) => {
      if (!isCurrent()) return;
      // Only what arrives from elsewhere proves the session receives: the bot's own sends come back as local echoes
      // (the owner typing on the phone does arrive over the network).
      if (upsert.messages.some((m) => !m.key?.fromMe || !this.outbound.isOwnMessage(m.key.id))) this.connection.noteTraffic();
      this.chain = this.chain.then(() => this.onUpsert(upsert)).catch((err) => this.log.error({ err }, 'handling incoming WhatsApp messages failed'));
    });
    // Delivery and read receipts in groups: message traffic too.
    socket.ev.on('message-receipt.update', () => {
      if (isCurrent()) this.connection.noteTraffic();
    });
  }

  /** Resolves when every message received so far has been mapped (not necessarily answered). */
  async mapped(): Promise<void> {
    await this.chain.catch(() => undefined);
  }

  /** Resolves when every message received so far has been mapped and handled, and the login hook ran. */
  async idle(): Promise<void> {
    for (;;) {
      const chain = this.chain;
      await chain.catch(() => undefined);
      await this.pending.settled();
      if (chain === this.chain && this.pending.size === 0) return;
    }
  }

  async flush(): Promise<void> {
    await this.seen?.flush();
  }

  /** Decryption failures since start (WhatsApp delivered a message this device could not decrypt). */
  decryptionFailures(): number {
    return this.decryptFailures;
  }

  /** Edits and deletes-for-everyone of earlier messages, handed to the core's listeners. Returns true when it was one. */
  private async onProtocol(raw: WAMessage): Promise<boolean> {
    const protocol = normalizeMessageContent(raw.message)?.protocolMessage;
    const target = protocol?.key?.id;
    if (!protocol || !target || !raw.key?.remoteJid) return false;
    const Type = waProto.Message.ProtocolMessage.Type;
    if (protocol.type !== Type.REVOKE && protocol.type !== Type.MESSAGE_EDIT) return false;
    // The echo of the bot's own edit (a long turn's status message, edited as it goes): nothing to apply.
    if (raw.key.fromMe && raw.key.id && this.outbound.isOwnMessage(raw.key.id)) return true;
    let chatId = plainJid(raw.key.remoteJid) ?? raw.key.remoteJid;
    const isGroup = chatId.endsWith('@g.us');
    // Who sent the change is the envelope's sender (authenticated by the session), never `protocol.key.participant`,
    // which only claims whose message it targets: the core honours it for the sender's own messages (or an admin's).
    const sender = isGroup ? plainJid(raw.key.participant) : chatId;
    const who = sender && this.identity.ready ? await this.identity.resolve(sender, plainJid(isGroup ? raw.key.participantAlt : raw.key.remoteJidAlt)) : { id: sender };
    if (!isGroup && who.id) chatId = who.id;
    const by: ChangeSender = raw.key.fromMe ? { ids: this.connection.ownIds(), fromMe: true } : { ids: [who.id, 'alt' in who ? who.alt : undefined].filter((id): id is string => Boolean(id)) };
    try {
      if (protocol.type === Type.REVOKE) {
        this.log.debug({ chat: chatId, id: target }, 'a message was deleted for everyone');
        await this.events.onRevoke?.(chatId, target, by);
      } else {
        const text = textOf(normalizeMessageContent(protocol.editedMessage));
        this.log.debug({ chat: chatId, id: target }, 'a message was edited');
        await this.events.onEdit?.(chatId, target, text, by);
      }
    } catch (err) {
      this.log.warn({ err, chat: chatId, id: target }, 'applying an edit or delete failed');
    }
    return true;
  }

  /**
   * A vote on a poll (encrypted, naming options by hash): read with the poll's kept secret and handed to the core's
   * `onPollVote` with the options by name. A vote on a poll the bot did not send (or no longer keeps), from another
   * chat than the poll's, or that does not decrypt, is dropped and logged. Returns true when it was a vote.
   */
  private async onPollUpdate(raw: WAMessage): Promise<boolean> {
    const update = normalizeMessageContent(raw.message)?.pollUpdateMessage;
    if (!update || !raw.key?.remoteJid) return false;
    const key = raw.key;
    const isGroup = key.remoteJid!.endsWith('@g.us');
    const sender = isGroup ? plainJid(key.participant) : plainJid(key.remoteJid);
    const senderAlt = plainJid(isGroup ? key.participantAlt : key.remoteJidAlt);
    const who = key.fromMe ? { id: this.connection.ownIds()[0] ?? '' } : sender ? await this.identity.resolve(sender, senderAlt) : undefined;
    const chatId = isGroup ? plainJid(key.remoteJid)! : key.fromMe ? (plainJid(key.remoteJid) ?? key.remoteJid!) : who?.id;
    const pollId = update.pollCreationMessageKey?.id;
    const poll = await this.polls.get(pollId);
    const context = { chat: chatId, id: key.id, poll: pollId };
    if (!poll || !chatId || !who?.id) {
      this.log.info(context, 'ignored a vote on a poll the bot did not send (or no longer keeps)');
      return true;
    }
    if (poll.chat !== chatId && poll.chat !== this.identity.altOf(chatId)) {
      this.log.warn(context, 'ignored a vote naming a poll of another chat');
      return true;
    }
    if (!(await this.seen!.firstTime(chatId, key.id ?? '', key.participant ?? ''))) return true;
    const read = readPollVote(update, key, poll, this.connection.ownIds());
    if ('ignored' in read) {
      this.log.warn({ ...context, reason: read.ignored }, 'ignored a poll vote that could not be read');
      return true;
    }
    this.log.debug({ ...context, options: read.selected.length }, 'a poll vote arrived');
    try {
      await this.events.onPollVote?.({ chatId: poll.chat, pollId: poll.id, voterId: who.id, ...(raw.pushName ? { voterName: raw.pushName } : {}), question: poll.question, selected: read.selected });
    } catch (err) {
      this.log.warn({ err, ...context }, 'handling a poll vote failed');
    }
    return true;
  }

  /**
   * A reaction (👍 on a message): handed to the core's `onReaction` with the reactor as the network authenticated them
   * (the core answers a held action with an owner's 👍/👎). A reaction taken back (empty emoji) is dropped. Returns true
   * when it was a reaction.
   */
  private async onReaction(raw: WAMessage): Promise<boolean> {
    const reaction = normalizeMessageContent(raw.message)?.reactionMessage;
    if (!reaction || !raw.key?.remoteJid) return false;
    const key = raw.key;
    const target = reaction.key?.id;
    const emoji = reaction.text ?? '';
    if (!target || !emoji) return true;
    const isGroup = key.remoteJid!.endsWith('@g.us');
    const sender = isGroup ? plainJid(key.participant) : plainJid(key.remoteJid);
    const senderAlt = plainJid(isGroup ? key.participantAlt : key.remoteJidAlt);
    const who = key.fromMe ? { id: this.connection.ownIds()[0] ?? '' } : sender ? await this.identity.resolve(sender, senderAlt) : undefined;
    const chatId = isGroup ? plainJid(key.remoteJid)! : key.fromMe ? (plainJid(key.remoteJid) ?? key.remoteJid!) : who?.id;
    if (!chatId || !who?.id) return true;
    if (!(await this.seen!.firstTime(chatId, key.id ?? '', key.participant ?? ''))) return true;
    this.log.debug({ chat: chatId, id: target }, 'a reaction arrived');
    try {
      await this.events.onReaction?.({ chatId, messageId: target, senderId: who.id, ...(senderAlt && senderAlt !== who.id ? { senderAltId: senderAlt } : {}), emoji });
    } catch (err) {
      this.log.warn({ err, chat: chatId, id: target }, 'handling a reaction failed');
    }
    return true;
  }

  private async onUpsert(upsert: BaileysEventMap['messages.upsert']): Promise<void> {
    for (const raw of upsert.messages) {
      try {
        await this.onRaw(raw, upsert.type);
      } catch (err) {
        this.log.error({ err, id: raw.key?.id }, 'an incoming WhatsApp message could not be handled');
      }
    }
  }

  private async onRaw(raw: WAMessage, type: BaileysEventMap['messages.upsert']['type']): Promise<void> {
    const key = raw.key;
    this.identity.learn(key?.participant, key?.participantAlt);
    this.identity.learn(key?.remoteJid, key?.remoteJidAlt);
    this.identity.learn(key?.participantAlt, key?.participant);
    this.identity.learn(key?.remoteJidAlt, key?.remoteJid);
    const timer = expirationOf(raw);
    if (timer !== undefined && key?.remoteJid) {
      const chat = plainJid(key.remoteJid) ?? key.remoteJid;
      this.chats.setTimer(chat, timer);
      const other = this.identity.altOf(chat);
      if (other) this.chats.setTimer(other, timer);
      // A group's new setting goes into its cached metadata too: else the next (partial) metadata update would
      // bring the old timer back, and Baileys' `cachedGroupMetadata` would disagree for up to the cache's 6 h.
      if (chat.endsWith('@g.us') && timerChangeOf(raw) !== undefined) this.chats.groups.applyUpdates([{ id: chat, ephemeralDuration: timer }]);
    }
    if (raw.messageStubType === waProto.WebMessageInfo.StubType.CIPHERTEXT && raw.messageStubParameters?.[0] === NO_MESSAGE_FOUND_ERROR_TEXT) {
      // A placeholder, not a failure: the message came without content for this device (an ad's message, one sent
      // from another device) and Baileys asks the phone for it; the content arrives later as its own message.
      this.log.debug({ id: key?.id, chat: key?.remoteJid }, 'a message arrived as a placeholder; its content is asked for from the phone');
      return;
    }
    if (raw.messageStubType === waProto.WebMessageInfo.StubType.CIPHERTEXT) {
      this.decryptFailures++;
      this.log.warn({ id: key?.id, chat: key?.remoteJid, sender: key?.participant ?? key?.remoteJid, reason: raw.messageStubParameters?.[0], total: this.decryptFailures }, 'a WhatsApp message could not be decrypted (WhatsApp retries it; if this repeats, the session keys with that contact are out of step)');
      return;
    }
    if (await this.onProtocol(raw)) return;
    if (await this.onPollUpdate(raw)) return;
    if (await this.onReaction(raw)) return;
    if (key?.fromMe && this.outbound.isOwnMessage(key.id)) {
      this.log.debug({ id: key.id }, 'ignored a message sent by the bot itself');
      return;
    }
    const socket = this.connection.socket;
    const download: MediaDownloader = (m, limit) => {
      if (this.options.download) return this.options.download(m, socket as WhatsAppSocket, limit);
      if (!socket) return Promise.reject(new Error('WhatsApp is not connected, so the media cannot be downloaded right now'));
      return defaultDownload(m, socket, limit, this.options.mediaOriginsForTests, this.options.mediaLoopbackForTests === true, this.log);
    };
    const result = mapIncoming(raw, { ownIds: this.connection.ownIds(), download, altIdOf: (id) => this.identity.altOf(id) });
    if ('ignored' in result) {
      this.log.debug({ id: key?.id, chat: key?.remoteJid, reason: result.ignored }, 'ignored a WhatsApp message');
      // Linked devices never receive view-once media: say so in a private chat instead of staying silent.
      // Baileys 7 (rc14) marks view-once media sent to a linked device on the key (`isViewOnce`) and leaves no body.
      if ((isViewOnce(raw.message) || key?.isViewOnce) && key?.remoteJid && !key.remoteJid.endsWith('@g.us') && !isJidStatusBroadcast(key.remoteJid)) {
        const work = this.refuseViewOnce(raw).catch((err) => this.log.warn({ err }, 'could not answer a view-once message'));
        this.pending.track(work);
      }
      return;
    }
    const message = result.message;
    // "Message yourself" is named by the own ids already: no contact's identity to resolve or learn there.
    const selfChat = isSelfChat(message, this.connection.ownIds());
    if (!selfChat) await this.identity.canonicalize(message);
    if (!message.isGroup && !message.fromMe && !selfChat) this.identity.noteArrival(message.chatId, plainJid(key.remoteJid));
    if (timer !== undefined) this.chats.setTimer(message.chatId, timer);
    if (!(await this.seen!.firstTime(message.chatId, message.id, key.participant ?? ''))) {
      this.log.debug({ id: message.id, chat: message.chatId, type }, 'ignored a duplicate delivery of a message already handled');
      return;
    }
    this.received.set(`${message.chatId}|${message.id}`, raw);
    const maxAge = this.options.maxOfflineAgeMs ?? DEFAULT_MAX_OFFLINE_AGE_MS;
    // Also for `notify`: placeholder resends of messages up to 14 days old arrive as notify.
    if (Date.now() - message.timestamp > maxAge) {
      this.log.info({ id: message.id, chat: message.chatId, ageMinutes: Math.round((Date.now() - message.timestamp) / 60_000) }, 'not answering a message that arrived while the bot was offline and is too old');
      return;
    }
    await this.deliver(message);
  }

  private async refuseViewOnce(raw: WAMessage): Promise<void> {
    const chatId = plainJid(raw.key.remoteJid) ?? raw.key.remoteJid!;
    if (!(await this.seen!.firstTime(chatId, raw.key.id ?? '', 'view-once'))) return;
    this.log.info({ chat: chatId, id: raw.key.id }, 'refused a view-once message (linked devices cannot open it)');
    await this.outbound.sendText(chatId, 'I cannot open view-once photos, videos or voice notes (WhatsApp shows them only on the phone). Please send it again as a normal message.', { quotedId: undefined }).catch((err) => this.log.warn({ err }, 'could not answer a view-once message'));
  }

  private async deliver(message: IncomingMessage): Promise<void> {
    const handler = this.handler;
    if (!handler) return;
    // Queue, don't wait: the bot orders messages per chat itself, and one slow answer must not hold up others.
    const work = handler(message).catch((err) => this.log.error({ err, chat: message.chatId }, 'the bot failed on a WhatsApp message'));
    this.pending.track(work);
  }

  /**
   * Blue ticks on a message the bot took up (config `whatsapp.readReceipts`), with the key it arrived under, and on
   * every earlier line of its burst (one receipt for all: each line shows read, not only the last).
   */
  markRead(message: IncomingMessage): void {
    const socket = this.connection.socket;
    if (!socket || !this.connection.isLinked()) return;
    if (this.options.preferences?.().readReceipts === false) return;
    const keys = [...(message.burstIds ?? []), message.id]
      .map((id) => this.received.get(`${message.chatId}|${id}`)?.key)
      .filter((key): key is NonNullable<typeof key> => Boolean(key) && !key!.fromMe);
    if (!keys.length) return;
    // Not waited for: Baileys first asks WhatsApp for the account's privacy settings, and the answer must not wait on it.
    const work = socket.readMessages(keys).catch((err) => this.log.debug({ err, chat: message.chatId }, 'read receipt failed'));
    this.pending.track(work);
  }

}
