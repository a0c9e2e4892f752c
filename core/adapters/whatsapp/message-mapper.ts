import {
  getContentType,
  isJidBroadcast,
  isJidGroup,
  isJidNewsletter,
  isJidStatusBroadcast,
  jidNormalizedUser,
  normalizeMessageContent,
  proto,
  toNumber,
  type WAMessage,
} from '@whiskeysockets/baileys';
import { inIdList } from '../../kernel/port/ids.js';
import { contactsLine, locationLine } from '../../kernel/port/shared.js';
import { contactsOf, locationOf } from './shared-cards.js';
import type { DownloadOptions, IncomingMedia, IncomingMessage, MediaKind, QuotedMessage, RelayedKind } from '../../kernel/port/message.js';

/**
 * Downloads the bytes of a media message (media-download.ts in production), stopping past `maxBytes` when given (the
 * core always gives the limit of the media's kind).
 */
export type MediaDownloader = (message: WAMessage, limit: DownloadOptions & { kind: MediaKind }) => Promise<Buffer>;

export interface MapContext {
  /** The bot's own ids (phone jid and LID), to tell whether a quoted message is the bot's. */
  ownIds: string[];
  download: MediaDownloader;
  /** Alternative id (phone ↔ LID) of a sender when the message itself does not carry it. */
  altIdOf?: (id: string) => string | undefined;
}

/** Result of mapping: a message, or why it was ignored (for a debug log line). */
export type MapResult = { message: IncomingMessage } | { ignored: string };

/** Message kinds that carry no content a user typed (receipts, key exchange, edits, deletes, reactions …). */
const NOT_CONTENT = new Set([
  'protocolMessage',
  'reactionMessage',
  'senderKeyDistributionMessage',
  'messageContextInfo',
  'pollUpdateMessage',
  'keepInChatMessage',
  'encReactionMessage',
  'pinInChatMessage',
  'deviceSentMessage',
  'callLogMesssage',
  'encEventResponseMessage',
  // A poll is a question to the group, not a prompt for the bot.
  'pollCreationMessage',
  'pollCreationMessageV2',
  'pollCreationMessageV3',
  'pollCreationMessageV5',
]);

/** True when WhatsApp marked the message as view-once (wrapper or flag). */
export function isViewOnce(message: proto.IMessage | null | undefined): boolean {
  if (!message) return false;
  if (message.viewOnceMessage || message.viewOnceMessageV2 || message.viewOnceMessageV2Extension) return true;
  const inner = normalizeMessageContent(message);
  return Boolean(inner?.imageMessage?.viewOnce || inner?.videoMessage?.viewOnce || inner?.audioMessage?.viewOnce);
}

/** A jid without its device suffix (`123:4@s.whatsapp.net` → `123@s.whatsapp.net`); undefined stays undefined. */
export function plainJid(jid: string | null | undefined): string | undefined {
  if (!jid) return undefined;
  return jidNormalizedUser(jid) || undefined;
}

/** The text a user typed in any text-bearing message kind (plain, extended, captions, button and list replies). */
export function textOf(content: proto.IMessage | null | undefined): string {
  if (!content) return '';
  return (
    content.conversation ||
    content.extendedTextMessage?.text ||
    content.imageMessage?.caption ||
    content.videoMessage?.caption ||
    content.documentMessage?.caption ||
    content.buttonsResponseMessage?.selectedDisplayText ||
    content.templateButtonReplyMessage?.selectedDisplayText ||
    content.listResponseMessage?.title ||
    content.interactiveResponseMessage?.body?.text ||
    content.eventMessage?.name ||
    content.contactMessage?.displayName ||
    content.locationMessage?.name ||
    ''
  );
}

/**
 * What the message's text relays rather than says (provenance): the name on a shared contact card, location or event,
 * or a forwarded message's text; undefined for words typed here.
 */
export function relayedOf(content: proto.IMessage | null | undefined, info: proto.IContextInfo | undefined): RelayedKind | undefined {
  if (!content) return undefined;
  if (content.contactMessage || content.contactsArrayMessage) return 'contact card';
  if (content.locationMessage || content.liveLocationMessage) return 'location';
  if (content.eventMessage) return 'event';
  if (info?.isForwarded) return 'forwarded message';
  return undefined;
}

/**
 * A change of the chat's disappearing-message setting (seconds, 0 = off): an EPHEMERAL_SETTING protocol message
 * (what Baileys makes of a group's `ephemeral`/`not_ephemeral` notification, and what a phone sends in a private
 * chat) or a CHANGE_EPHEMERAL_SETTING stub; undefined for any other message.
 */
export function timerChangeOf(raw: WAMessage): number | undefined {
  if (raw.messageStubType === proto.WebMessageInfo.StubType.CHANGE_EPHEMERAL_SETTING) {
    const seconds = Number(raw.messageStubParameters?.[0] ?? 0);
    return Number.isFinite(seconds) && seconds > 0 ? seconds : 0;
  }
  const protocol = normalizeMessageContent(raw.message)?.protocolMessage;
  if (protocol && protocol.type === proto.Message.ProtocolMessage.Type.EPHEMERAL_SETTING) return protocol.ephemeralExpiration ?? 0;
  return undefined;
}

/**
 * The disappearing-message timer (seconds, 0 = off) a message reveals: a change of the setting (`timerChangeOf`),
 * or `contextInfo.expiration` of a content message; undefined when it says nothing.
 */
export function expirationOf(raw: WAMessage): number | undefined {
  const change = timerChangeOf(raw);
  if (change !== undefined) return change;
  const content = normalizeMessageContent(raw.message);
  const expiration = contextInfoOf(content)?.expiration;
  return typeof expiration === 'number' && expiration > 0 ? expiration : undefined;
}

/** The contextInfo (mentions, quoted message) of whichever inner message carries it. */
export function contextInfoOf(content: proto.IMessage | null | undefined): proto.IContextInfo | undefined {
  if (!content) return undefined;
  for (const value of Object.values(content)) {
    const info = (value as { contextInfo?: proto.IContextInfo } | null)?.contextInfo;
    if (info) return info;
  }
  return undefined;
}

function size(value: number | Long | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  const n = toNumber(value as never);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

type Long = { toNumber(): number };

/** Describes the media of a message (kind, mimetype, size, duration) with a lazy download; undefined for none. */
export function mediaOf(content: proto.IMessage | null | undefined, raw: WAMessage, download: MediaDownloader): IncomingMedia | undefined {
  if (!content) return undefined;
  const pick = (kind: MediaKind, m: { mimetype?: string | null; fileLength?: number | Long | null; seconds?: number | null; fileName?: string | null }, fallbackMime: string): IncomingMedia => ({
    kind,
    mimetype: m.mimetype || fallbackMime,
    ...(m.fileName ? { fileName: m.fileName } : {}),
    ...(size(m.fileLength) ? { size: size(m.fileLength) } : {}),
    ...(m.seconds ? { seconds: m.seconds } : {}),
    download: (options) => download({ ...raw, message: content }, { ...options, kind }),
  });
  if (content.audioMessage) return pick(content.audioMessage.ptt ? 'voice' : 'audio', content.audioMessage, 'audio/ogg; codecs=opus');
  if (content.imageMessage) return pick('image', content.imageMessage, 'image/jpeg');
  if (content.videoMessage) return pick('video', content.videoMessage, 'video/mp4');
  if (content.documentMessage) return pick('document', content.documentMessage, 'application/octet-stream');
  if (content.stickerMessage) return pick('sticker', content.stickerMessage, 'image/webp');
  if (content.ptvMessage) return pick('video', content.ptvMessage, 'video/mp4');
  return undefined;
}

/**
 * Maps one Baileys message to the core's IncomingMessage. Wrappers (ephemeral, view-once, edited, document with
 * caption) are unwrapped first. Status broadcasts, newsletters, stubs and protocol/reaction/key-exchange messages are
 * ignored with a reason. Sender ids and mentions keep their form (phone `@s.whatsapp.net` or `@lid`);
 * `senderAltId` comes from v7's `participantAlt` / `remoteJidAlt`.
 *
 * @example
 * const result = mapIncoming(waMessage, { ownIds: ['628123@s.whatsapp.net'], download });
 * if ('message' in result) await onMessage(result.message);
 */
export function mapIncoming(raw: WAMessage, context: MapContext): MapResult {
  const key = raw.key;
  const chatJid = key?.remoteJid;
  if (!key || !chatJid || !key.id) return { ignored: 'message without chat or id' };
  if (isJidStatusBroadcast(chatJid)) return { ignored: 'status broadcast' };
  if (isJidBroadcast(chatJid)) return { ignored: 'broadcast list' };
  if (isJidNewsletter(chatJid)) return { ignored: 'newsletter' };
  const content = normalizeMessageContent(raw.message);
  if (!content) return { ignored: raw.messageStubType ? `stub message ${raw.messageStubType}` : 'message without content' };
  const type = getContentType(content);
  if (!type || NOT_CONTENT.has(type)) return { ignored: `not a content message (${type ?? (Object.keys(content).join(',') || 'empty')})` };

  const isGroup = Boolean(isJidGroup(chatJid));
  // The account writing in its own "Message yourself" chat (addressed by its phone jid or its LID): the owner's
  // command line, named by the own phone jid whichever address it came on, and never the owner taking a chat over.
  const selfChat = Boolean(key.fromMe) && !isGroup && context.ownIds.length > 0 && inIdList(plainJid(chatJid), context.ownIds);
  const chatId = selfChat ? plainJid(context.ownIds[0])! : plainJid(chatJid) ?? chatJid;
  const senderRaw = isGroup ? key.participant || raw.participant : chatJid;
  const senderId = key.fromMe ? plainJid(context.ownIds[0]) ?? plainJid(senderRaw) ?? chatId : plainJid(senderRaw) ?? chatId;
  const altRaw = isGroup ? key.participantAlt : key.remoteJidAlt;
  const senderAltId = selfChat ? plainJid(context.ownIds[1]) : plainJid(altRaw) ?? context.altIdOf?.(senderId);

  // A shared place or card: its data rides along, and the text is the line a person reads for it (never empty).
  const location = locationOf(content);
  const contacts = location ? undefined : contactsOf(content);
  const text = location ? locationLine(location) : contacts ? contactsLine(contacts) : textOf(content);
  const info = contextInfoOf(content);
  const mentions = [...new Set((info?.mentionedJid ?? []).map((j) => plainJid(j)).filter((j): j is string => Boolean(j)))];
  const media = mediaOf(content, raw, context.download);
  if (!text && !media) return { ignored: `no text or media in ${type}` };

  let quoted: QuotedMessage | undefined;
  if (info?.quotedMessage && info.stanzaId) {
    const quotedContent = normalizeMessageContent(info.quotedMessage);
    // In a private chat WhatsApp may omit the quoted participant: then it is the other person or the bot.
    const quotedSender = plainJid(info.participant) ?? (isGroup ? '' : chatId);
    const quotedRaw: WAMessage = { key: { remoteJid: chatJid, id: info.stanzaId, participant: info.participant ?? undefined, fromMe: inIdList(quotedSender, context.ownIds) }, message: quotedContent };
    const quotedMedia = mediaOf(quotedContent, quotedRaw, context.download);
    quoted = {
      id: info.stanzaId,
      senderId: quotedSender,
      text: textOf(quotedContent),
      fromBot: Boolean(quotedSender) && inIdList(quotedSender, context.ownIds),
      ...(quotedMedia ? { media: quotedMedia } : {}),
    };
  }

  const seconds = raw.messageTimestamp ? toNumber(raw.messageTimestamp as never) : 0;
  const message: IncomingMessage = {
    id: key.id,
    chatId,
    senderId,
    ...(senderAltId && senderAltId !== senderId ? { senderAltId } : {}),
    ...(raw.pushName ? { senderName: raw.pushName } : {}),
    isGroup,
    text,
    mentions,
    ...(quoted ? { quoted } : {}),
    ...(media ? { media } : {}),
    timestamp: seconds > 0 ? seconds * 1000 : Date.now(),
    ...(selfChat ? { fromOperator: true } : key.fromMe ? { fromMe: true } : {}),
    ...(relayedOf(content, info) ? { relayed: relayedOf(content, info) } : {}),
    ...(location ? { location } : {}),
    ...(contacts ? { contacts } : {}),
  };
  return { message };
}
