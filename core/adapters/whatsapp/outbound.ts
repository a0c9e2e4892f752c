import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { generateMessageIDV2, isJidGroup, type AnyMessageContent, type MiscMessageGenerationOptions, type proto, type WAMessage, type WAMessageKey } from '@whiskeysockets/baileys';
import type { Logger } from '../../services/log/logger.js';
import type { OwnerNotifier } from '../../services/notices/owner-notifier.js';
import { mimeFor } from '../../services/media/mime-type.js';
import type { OutgoingContact, OutgoingLocation, OutgoingMedia, OutgoingPoll, SentMessage } from '../../kernel/port/message.js';
import { contactContent, locationContent } from './shared-cards.js';
import type { SendOptions } from '../../kernel/port/transport.js';
import { BoundedMap } from './caches.js';
import type { ChatSettings } from './chat-settings.js';
import type { WhatsAppConnection } from './connection.js';
import type { IdentityLayer } from './identity-layer.js';
import { plainJid } from './message-mapper.js';
import type { PollStore } from './poll-store.js';
import type { WhatsAppTransportOptions } from './options.js';
import type { PluginStores } from '../../services/store/plugin-store.js';
import { ResendStore } from './resend-store.js';
import { SendStatus, type Restriction } from './send-status.js';
import type { WhatsAppSocket } from './socket.js';
import { videoThumbnail } from './video-thumbnail.js';
import { mediaTooLarge } from './media-limits.js';

/** WhatsApp lets a message be edited for 15 minutes after it was sent. */
export const EDIT_WINDOW_MS = 15 * 60_000;

/**
 * The outbound layer (Baileys' messages-send.ts): texts, edits, reactions, media and typing, each addressed where the
 * chat last arrived, quoting and inheriting the chat's disappearing timer; remembers what it sent (for edits, quotes
 * and other devices' retry requests, kept in the store database) and follows what WhatsApp reports of it
 * afterwards (failed deliveries, account restrictions).
 */
export class Outbound {
  private readonly log: Logger;
  private resendStore: ResendStore | undefined;
  /** Recent messages the bot sent (for edits and Baileys' retry `getMessage`), by id. */
  private readonly sent = new BoundedMap<string, WAMessage>(1000);
  /**
   * Ids the bot gave its own messages before sending them: WhatsApp echoes every message of the account (`fromMe`),
   * the bot's own included, possibly before the send resolves; a `fromMe` message with another id was typed by the owner.
   */
  private readonly ownIdsSent = new BoundedMap<string, true>(2000);
  /** Chats the bot is typing in now (`setTyping`): it shows itself offline again once none is left. */
  private readonly typingIn = new Set<string>();
  readonly sendStatus: SendStatus;

  constructor(
    private readonly options: WhatsAppTransportOptions,
    notices: OwnerNotifier,
    private readonly connection: WhatsAppConnection,
    private readonly identity: IdentityLayer,
    private readonly chats: ChatSettings,
    /** Recent inbound messages (for quoting and reacting), by `chat|id`: the inbound layer fills it. */
    private readonly received: BoundedMap<string, WAMessage>,
    /** The polls the bot sent, with their secrets (the inbound layer reads votes with them). */
    private readonly polls: PollStore,
  ) {
    this.log = options.log;
    this.sendStatus = new SendStatus(this.log, notices, async () => {
      // Baileys' answer also arrives as `reachoutTimeLock` in connection.update, which sets or lifts the restriction.
      const socket = this.connection.socket;
      if (!socket?.fetchAccountReachoutTimelock) throw new Error('WhatsApp is not connected');
      return socket.fetchAccountReachoutTimelock();
    });
  }

  /** What the bot sent lately, kept for other devices' retry requests, once opened. */
  get resend(): ResendStore | undefined {
    return this.resendStore;
  }

  async open(stores: PluginStores): Promise<void> {
    this.resendStore = await ResendStore.open(stores, { onError: (err) => this.log.warn({ err }, 'could not save a sent message other devices may ask for again (kept in memory)') });
  }

  /** Follows what WhatsApp reports of sent messages on a socket (failures, restrictions, acks). */
  attach(socket: WhatsAppSocket, isCurrent: () => boolean): void {
    socket.ev.on('connection.update', (update) => {
      if (isCurrent()) this.sendStatus.onConnectionUpdate(update);
    });
    socket.ev.on('messages.update', (updates) => {
      if (!isCurrent()) return;
      this.connection.noteTraffic();
      this.sendStatus.onUpdates(updates);
    });
    socket.ev.on('messages.upsert', ({ messages }) => {
      if (isCurrent()) this.sendStatus.onOwnUpserts(messages.filter((m) => m.key?.fromMe && this.isOwnMessage(m.key.id)));
    });
  }

  /** True when a `fromMe` message with this id is the echo of one the bot sent (not typed by the owner). */
  isOwnMessage(id: string | null | undefined): boolean {
    return !id || Boolean(this.ownIdsSent.get(id) || this.sent.get(id) || this.resendStore?.get(id));
  }

  /** Baileys' `getMessage`: a message sent or received lately, for a device that could not decrypt it. */
  getMessage(key: WAMessageKey): proto.IMessage | undefined {
    if (!key.id) return undefined;
    return this.resendStore?.get(key.id) ?? this.sent.get(key.id)?.message ?? this.received.get(`${plainJid(key.remoteJid)}|${key.id}`)?.message ?? undefined;
  }

  private remember(sent: WAMessage | undefined, chatId: string, answers?: string): SentMessage {
    const id = sent?.key?.id ?? '';
    if (sent && id) this.sent.set(id, sent);
    void this.resendStore?.add(id, chatId, sent?.message, answers);
    this.sendStatus.track(id, chatId);
    return { id };
  }

  /** Options of a new message: the quote, and the chat's disappearing timer (else recipients see "will not disappear"). */
  /** The send options with an id of the bot's choosing, noted first, so WhatsApp's echo of it is known as the bot's. */
  private ownSendOptions(chatId: string, quotedId: string | undefined): MiscMessageGenerationOptions {
    const messageId = generateMessageIDV2(this.connection.ownId());
    this.ownIdsSent.set(messageId, true);
    return { ...this.sendOptions(chatId, quotedId), messageId };
  }

  private sendOptions(chatId: string, quotedId: string | undefined): MiscMessageGenerationOptions | undefined {
    const quoted = quotedId ? this.received.get(`${chatId}|${quotedId}`) ?? this.sent.get(quotedId) : undefined;
    const timer = this.chats.timerOf(chatId);
    if (!quoted && !timer) return undefined;
    return { ...(quoted ? { quoted } : {}), ...(timer ? { ephemeralExpiration: timer } : {}) };
  }

  async sendText(chatId: string, text: string, options?: SendOptions): Promise<SentMessage> {
    const socket = await this.connection.ready();
    const mentions = this.identity.mentionsIn(text, this.connection.ownLid());
    // `linkPreview: null`: Baileys would otherwise fetch a link's page itself (outside the egress guard) and, without its
    // optional preview library, log a stack trace for every text with a URL. WhatsApp shows the link without a card.
    const sent = await socket.sendMessage(await this.identity.addressOf(chatId), { text, linkPreview: null, ...(mentions.length ? { mentions } : {}) }, this.ownSendOptions(chatId, options?.quotedId));
    return this.remember(sent, chatId, options?.answers);
  }

  async editText(chatId: string, messageId: string, text: string): Promise<boolean> {
    if (!messageId) return false;
    try {
      const original = this.sent.get(messageId);
      const sentAt = original?.messageTimestamp ? Number(original.messageTimestamp) * 1000 : undefined;
      if (sentAt && Date.now() - sentAt > EDIT_WINDOW_MS) {
        // WhatsApp drops edits past its window silently; report the failure so the caller sends anew.
        this.log.info({ chat: chatId, id: messageId, ageMinutes: Math.round((Date.now() - sentAt) / 60_000) }, 'not editing a message older than WhatsApp\'s 15-minute edit window');
        return false;
      }
      const socket = await this.connection.ready();
      // An edit goes where the original went.
      const to = original?.key?.remoteJid ?? (await this.identity.addressOf(chatId));
      const key: WAMessageKey = original?.key ?? { remoteJid: to, id: messageId, fromMe: true };
      // Under an id known as the bot's own before it goes: its echo is then skipped, not taken for the owner's edit.
      const editId = generateMessageIDV2(this.connection.ownId());
      this.ownIdsSent.set(editId, true);
      const edit = await socket.sendMessage(to, { text, edit: key, linkPreview: null }, { messageId: editId });
      // Filed under whoever the edited message answered (its new text is about them as much as the old).
      void this.resendStore?.add(edit?.key?.id, chatId, edit?.message, this.resendStore.answered(messageId));
      return true;
    } catch (err) {
      this.log.warn({ err, chat: chatId }, 'editing a WhatsApp message failed; sending anew');
      return false;
    }
  }

  async react(chatId: string, messageId: string, emoji: string, author?: string): Promise<void> {
    const socket = await this.connection.ready();
    const to = await this.identity.addressOf(chatId);
    const key: WAMessageKey = this.received.get(`${chatId}|${messageId}`)?.key ?? this.sent.get(messageId)?.key ?? { remoteJid: to, id: messageId, fromMe: false, ...(isJidGroup(to) && author ? { participant: this.participantOf(author) } : {}) };
    const reaction = await socket.sendMessage(to, { react: { text: emoji, key } });
    void this.resendStore?.add(reaction?.key?.id, chatId, reaction?.message);
  }

  /** A group member as a message key names them: by LID when known (WhatsApp's groups address members so now). */
  private participantOf(author: string): string {
    if (author.endsWith('@lid')) return author;
    const alt = this.identity.altOf(author);
    return alt?.endsWith('@lid') ? alt : author;
  }

  async sendMedia(chatId: string, media: OutgoingMedia, options?: SendOptions): Promise<SentMessage> {
    const info = await stat(media.path).catch(() => undefined);
    if (!info?.isFile()) throw new Error(`cannot send the ${media.kind}: file not found: ${media.path}`);
    // Said before any upload: WhatsApp would take the bytes and then fail the message, or show it broken.
    const tooLarge = mediaTooLarge(media.kind, info.size);
    if (tooLarge) throw new Error(tooLarge);
    const socket = await this.connection.ready();
    const file = { url: media.path };
    let content: AnyMessageContent;
    switch (media.kind) {
      case 'voice':
        // WhatsApp plays voice notes only as Ogg/Opus; other formats arrive as a broken voice note.
        // With its length and waveform when the sender measured them (else Baileys tries, and needs optional packages).
        content = { audio: file, ptt: true, mimetype: media.mimetype ?? 'audio/ogg; codecs=opus', ...(media.seconds ? { seconds: media.seconds } : {}), ...(media.waveform ? { waveform: media.waveform } : {}) };
        break;
      case 'audio':
        content = { audio: file, ptt: false, mimetype: media.mimetype ?? mimeFor(media.path, 'audio/mpeg') };
        break;
      case 'image':
        content = { image: file, ...(media.caption ? { caption: media.caption } : {}), ...(media.mimetype ? { mimetype: media.mimetype } : {}) };
        break;
      case 'video': {
        const thumb = await videoThumbnail(this.options.jail, this.options.ffmpegPath, media.path);
        if ('missing' in thumb) this.log.warn({ chat: chatId, file: path.basename(media.path) }, `sending the video without a preview picture: ${thumb.missing}`);
        // An empty preview, not none: with none Baileys would run the ffmpeg on PATH itself, unjailed.
        content = { video: file, mimetype: media.mimetype ?? mimeFor(media.path, 'video/mp4'), ...(media.caption ? { caption: media.caption } : {}), jpegThumbnail: 'jpegThumbnail' in thumb ? thumb.jpegThumbnail : '' };
        break;
      }
      case 'sticker':
        content = { sticker: file, mimetype: 'image/webp' };
        break;
      case 'document':
        content = { document: file, mimetype: media.mimetype ?? mimeFor(media.path), fileName: media.fileName ?? path.basename(media.path), ...(media.caption ? { caption: media.caption } : {}) };
        break;
      default:
        throw new Error(`cannot send media of kind ${String((media as { kind: unknown }).kind)}`);
    }
    const sent = await socket.sendMessage(await this.identity.addressOf(chatId), content, this.ownSendOptions(chatId, options?.quotedId));
    return this.remember(sent, chatId, options?.answers);
  }

  /**
   * Sends a poll (Baileys: a pollCreationMessage, V3 for a single choice) with a fresh 32-byte secret, and keeps the
   * secret and options (in the store database before this resolves), so votes decrypt after a restart.
   */
  async sendPoll(chatId: string, poll: OutgoingPoll, options?: SendOptions): Promise<SentMessage> {
    const socket = await this.connection.ready();
    const messageSecret = randomBytes(32);
    const content: AnyMessageContent = { poll: { name: poll.question, values: poll.options, selectableCount: poll.multiple ? 0 : 1, messageSecret } };
    const sent = await socket.sendMessage(await this.identity.addressOf(chatId), content, this.ownSendOptions(chatId, options?.quotedId));
    const result = this.remember(sent, chatId, options?.answers);
    // The secret Baileys put in the message is the one votes use (ours, unless a future Baileys makes its own).
    const secret = Buffer.from(sent?.message?.messageContextInfo?.messageSecret ?? messageSecret);
    if (result.id) await this.polls.add({ id: result.id, chat: chatId, at: Date.now(), question: poll.question, options: poll.options, secret: secret.toString('base64'), ...(options?.answers ? { about: options.answers } : {}) });
    return result;
  }

  /** Sends a location message (coordinates, and the place's name and address when given). */
  async sendLocation(chatId: string, location: OutgoingLocation, options?: SendOptions): Promise<SentMessage> {
    const socket = await this.connection.ready();
    const sent = await socket.sendMessage(await this.identity.addressOf(chatId), locationContent(location), this.ownSendOptions(chatId, options?.quotedId));
    return this.remember(sent, chatId, options?.answers);
  }

  /** Sends a contact card: a vCard with the name and the number (its `waid`, so the phone offers to message it). */
  async sendContact(chatId: string, contact: OutgoingContact, options?: SendOptions): Promise<SentMessage> {
    const content = contactContent(contact);
    const socket = await this.connection.ready();
    const sent = await socket.sendMessage(await this.identity.addressOf(chatId), content, this.ownSendOptions(chatId, options?.quotedId));
    return this.remember(sent, chatId, options?.answers);
  }

  async setTyping(chatId: string, typing: boolean): Promise<void> {
    const socket = this.connection.socket;
    if (!socket || !this.connection.isLinked()) return;
    const to = await this.identity.addressOf(chatId);
    // Config `whatsapp.presence`: "online" while typing (some phones show "typing…" only then), offline again after,
    // so the owner's phone keeps its notifications (the bot connects as offline: markOnlineOnConnect is false).
    // Offline only once no chat is being typed in any more.
    const presence = this.options.preferences?.().presence !== false;
    const failed = (err: unknown) => this.log.debug({ err }, 'typing indicator failed');
    if (typing) this.typingIn.add(chatId);
    else this.typingIn.delete(chatId);
    if (typing && presence) await socket.sendPresenceUpdate('available').catch(failed);
    await socket.sendPresenceUpdate(typing ? 'composing' : 'paused', to).catch(failed);
    if (!typing && presence && this.typingIn.size === 0) await socket.sendPresenceUpdate('unavailable').catch(failed);
  }

  /** True while WhatsApp restricts the account (463 / reach-out time-lock): sending should pause. */
  isRestricted(): boolean {
    return Boolean(this.sendStatus.current());
  }

  /** The restriction in force, if any. */
  restriction(): Restriction | undefined {
    return this.sendStatus.current();
  }

  /** Resolves when what was sent so far is on disk. */
  async flush(): Promise<void> {
    await this.resendStore?.flush();
  }
}
