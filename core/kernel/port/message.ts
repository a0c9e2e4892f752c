/**
 * The core's transport-neutral message types. Every transport (WhatsApp, console, memory) maps its
 * own messages to these, so plugins never see Baileys objects.
 */

import type { MediaKind } from '../../api/media-kind.js';

/** Kinds of media a message can carry (defined in core/api, where the coded errors name them too). */
export type { MediaKind };

/** How much of a media a download may bring. */
export interface DownloadOptions {
  /**
   * Bytes at most: the download stops as soon as more arrive and rejects with `MediaTooLargeError`. The core also
   * applies the owner's limit for the media's kind (config `media.maxDownloadMB`), whichever is smaller.
   */
  maxBytes?: number;
}

/**
 * Media attached to a message. The bytes are fetched lazily: a plugin that does not need them costs nothing. A
 * download is bounded by the bytes actually received, never by the size the sender claims (`size` is a hint): past
 * the limit for its kind (or `maxBytes`, when smaller) it stops and rejects with `MediaTooLargeError`, whose message
 * says the limit to the user.
 *
 * @example
 * if (ctx.message.media?.kind === 'image') { const bytes = await ctx.message.media.download({ maxBytes: 5_000_000 }); }
 */
export interface IncomingMedia {
  kind: MediaKind;
  mimetype: string;
  fileName?: string;
  /** Size in bytes the sender declared (WhatsApp's `fileLength`): a hint, never a bound. */
  size?: number;
  /** Duration in seconds for audio/video when known. */
  seconds?: number;
  /**
   * The id of the message that carried this media, set when a turn joins several messages (an album, or a photo and
   * the lines after it): the turn's own id is its newest message's, so a plugin keeping the photos for later quotes
   * files each under this id. Absent when the media came in the turn's own message.
   */
  messageId?: string;
  download(options?: DownloadOptions): Promise<Buffer>;
}

/** The message a message replies to (WhatsApp "quoted" message). */
export interface QuotedMessage {
  id: string;
  senderId: string;
  text: string;
  /** True when the quoted message was sent by the bot itself. */
  fromBot: boolean;
  /**
   * True when the quoted message was deleted for everyone (by its sender, an admin or the account): its `text` is
   * empty and its media (kind and type only) refuses to download, so nothing deleted comes back through a quote.
   */
  deleted?: boolean;
  media?: IncomingMedia;
}

/** A place a person shared: a WhatsApp location, or a live location (whose updates come as further messages). */
export interface SharedLocation {
  latitude: number;
  longitude: number;
  /** The place's name, when the sender picked a place. */
  name?: string;
  address?: string;
  /** A live location: the sender's position as it moves; `sequence` grows with each update. */
  live?: boolean;
  sequence?: number;
  /** A live location's caption (what the sender wrote with it). */
  caption?: string;
}

/** A contact card (vCard) a person shared: the name and the phone numbers on it (digits with a leading +). */
export interface SharedContact {
  name: string;
  numbers: string[];
}

/** A place the bot sends (WhatsApp: a location message). */
export interface OutgoingLocation {
  latitude: number;
  longitude: number;
  name?: string;
  address?: string;
}

/** A contact card the bot sends: a name and one phone number (digits, international form, `+` optional). */
export interface OutgoingContact {
  name: string;
  number: string;
}

/** What a relayed text is (see `IncomingMessage.relayed`). */
export type RelayedKind = 'forwarded message' | 'contact card' | 'location' | 'event';

/**
 * One inbound message, as every plugin sees it.
 * Ids are full jids (`123@s.whatsapp.net`, `456@lid`, `name@g.us`); use the helpers of `core/kernel/port/ids.ts` to compare them.
 */
export interface IncomingMessage {
  id: string;
  chatId: string;
  senderId: string;
  /** Alternative id of the same sender when the transport knows it (phone jid ↔ LID). */
  senderAltId?: string;
  senderName?: string;
  isGroup: boolean;
  text: string;
  /** Jids mentioned in the text (WhatsApp `mentionedJid`). */
  mentions: string[];
  quoted?: QuotedMessage;
  media?: IncomingMedia;
  /**
   * Photos that came together with this one and are answered as one turn (a WhatsApp album, or quick photos of one
   * sender within `conversation.debounceMs`), in the order sent; `media` is the first of them. Absent for one photo.
   */
  album?: IncomingMedia[];
  /**
   * The ids of the sender's earlier messages answered in this same turn (a burst of quick lines; `id` is the newest),
   * oldest first; absent for a turn of one message. A transport marks them read with it.
   */
  burstIds?: string[];
  /** Unix time in milliseconds. */
  timestamp: number;
  /**
   * The text is not words the sender typed here: a forwarded message, or the name on a contact card, location or
   * event they shared. The core gives it to the model as content (see `quotedContent`), never as the sender's request.
   */
  relayed?: RelayedKind;
  /** The place a shared location points at (with `relayed: 'location'`; `text` is a line naming it). */
  location?: SharedLocation;
  /** The contact cards shared (with `relayed: 'contact card'`; `text` is a line naming them). */
  contacts?: SharedContact[];
  /** Sent from the bot's own account by a person (the owner typing on the phone), not by the bot. */
  fromMe?: boolean;
  /**
   * Typed by the person at the machine that runs the bot (the console's own default sender): counts as an owner.
   * Only a transport sets it; no chat network can.
   */
  fromOperator?: boolean;
  /**
   * A turn the bot started itself, at a time a person set (a scheduled task, see `host.promptAs`): nobody typed it
   * just now, and there is no chat message of that id to quote or react to. Only the core sets it.
   */
  scheduled?: boolean;
  /** No chat message has this turn's id (a poll vote's turn: the vote itself is not shown as a message): nothing to react to. */
  noChatMessage?: boolean;
}

/** What a transport returns for a sent message, so it can be edited or quoted later. */
export interface SentMessage {
  id: string;
}

/** A poll the bot sends (WhatsApp: a poll message): a question and 2–12 distinct options, one or several choices. */
export interface OutgoingPoll {
  question: string;
  options: string[];
  /** True: a voter may pick several options; false: one. */
  multiple: boolean;
}

/**
 * A vote on a poll the bot sent, as the transport decrypted it: the options the voter holds now (empty when they took
 * their vote back), by name. `voterId` is who voted, as the network authenticated it.
 */
export interface PollVote {
  chatId: string;
  /** The id of the poll message (`SentMessage.id` of `sendPoll`). */
  pollId: string;
  voterId: string;
  voterName?: string;
  question: string;
  selected: string[];
}

/** Media the bot sends. `path` is a local file. */
export interface OutgoingMedia {
  /** `sticker`: a WebP, 512 px on the longer side (WhatsApp's sticker format; the sender makes it so). */
  kind: 'audio' | 'voice' | 'image' | 'video' | 'document' | 'sticker';
  path: string;
  mimetype?: string;
  caption?: string;
  fileName?: string;
  /** A voice note's (or audio's) length in whole seconds, shown before it plays. */
  seconds?: number;
  /** A voice note's waveform: 64 bars of 0–100, as WhatsApp draws it (`audioMessage.waveform`). */
  waveform?: Uint8Array;
}
