import { isGroupId, userPart } from './ids.js';
import type { DeclaredStores } from './privacy-participant.js';
import type { IncomingMessage, OutgoingContact, OutgoingLocation, OutgoingMedia, OutgoingPoll, PollVote, SentMessage } from './message.js';

/** Called by a transport for every inbound message. Resolves when the bot has finished handling it. */
export type InboundHandler = (message: IncomingMessage) => Promise<void>;

/**
 * Who sent an edit or a delete for everyone, as the network authenticated it (never what the change claims about the
 * message it targets): the sender's ids (phone jid and LID where known), or the linked account itself (`fromMe`).
 */
export interface ChangeSender {
  ids: string[];
  fromMe?: boolean;
}

/**
 * Called by a transport when a message was deleted for everyone. Resolves when it is gone from the stored data.
 * `by`: who deleted it (the core honours it only for their own messages, or a group admin's); without it the
 * transport vouches for the delete.
 */
export type RevokeHandler = (chatId: string, messageId: string, by?: ChangeSender) => Promise<void>;
/** An incoming voice or video call (WhatsApp), as the network reported it ringing. */
export interface IncomingCall {
  id: string;
  /** The caller (phone jid or LID). */
  from: string;
  /** The chat to answer in: the caller's private chat, or the group of a group call. */
  chatId: string;
  isGroup: boolean;
  video: boolean;
}

/** What to do with a ringing call: decline it (and then send `message`, when given), or let it ring. Never answered. */
export interface CallAnswer {
  decline: boolean;
  message?: string;
}

/**
 * Changes to earlier messages a transport reports (WhatsApp: edits and deletes for everyone). The core applies them
 * to what it kept (history, archive); a transport without them never calls these.
 */
export interface TransportEvents {
  /** `by`: who edited it (the core applies an edit only to what they wrote themselves). */
  onEdit?(chatId: string, messageId: string, text: string, by?: ChangeSender): void | Promise<void>;
  /** `by`: who deleted it (honoured for their own messages, or from a group admin). */
  onRevoke?(chatId: string, messageId: string, by?: ChangeSender): void | Promise<void>;
  /**
   * A private chat is named `to` from now on instead of `from` (WhatsApp revealed the phone number behind a LID): the
   * core moves what every store keeps under `from` to `to` (its privacy participants). The transport moves no store's
   * files itself; it awaits this before handing on the message that revealed the new id.
   */
  onChatIdChange?(from: string, to: string): void | Promise<void>;
  /** Someone voted on a poll the bot sent (or changed their vote): the options they hold now, by name. */
  onPollVote?(vote: PollVote): void | Promise<void>;
  /** A call rings: the core says whether to decline it and with which message. Without it, calls ring unanswered. */
  onCall?(call: IncomingCall): CallAnswer | Promise<CallAnswer>;
  /** Someone reacted to a message (an owner's 👍/👎 on a held action's message answers it). */
  onReaction?(reaction: InboundReaction): void | Promise<void>;
  /**
   * The link's status (`session().status`) changed from `previous`: the bot tells the automation around it (the event
   * webhooks' `link.changed`). Told synchronously as it happens, never awaited; a transport whose link never changes
   * (the console) never calls it.
   */
  onSessionChange?(status: SessionState['status'], previous: SessionState['status']): void;
}

/** A reaction someone put on a message of a chat, as the network authenticated the reactor. */
export interface InboundReaction {
  chatId: string;
  /** The message reacted to. */
  messageId: string;
  senderId: string;
  senderAltId?: string;
  emoji: string;
}

/**
 * Options of a message the bot sends: `quotedId` quotes that message of the chat; `answers` is the sender id of the
 * message being answered (a transport that keeps what it sent, for resends, files it under that person, so their
 * `.mydata` delete removes it).
 */
export interface SendOptions {
  quotedId?: string;
  answers?: string;
}

/** Session state a transport reports (shown on `GET /` and in the dashboard). */
export interface SessionState {
  status: 'connecting' | 'qr' | 'linked' | 'offline';
  /** Current QR payload while waiting for a scan. */
  qr?: string;
  /** Own ids once linked: phone jid and LID. */
  me?: { id?: string; lid?: string; name?: string };
  since?: number;
  /** While disconnected: why the last connection closed. */
  lastError?: string;
  /** While disconnected: when the next connection attempt starts (unix ms). */
  retryAt?: number;
  /** Pairing-code login: the code to type on the phone, only while it can still be typed. */
  pairingCode?: string;
  /** When `pairingCode` runs out (unix ms): WhatsApp drops it with the linking connection, and a new QR follows. */
  pairingCodeExpiresAt?: number;
  /**
   * A condition the owners must act on or know about: `forbidden` (403, the account is banned: not retrying),
   * `bad-session` (500), `client-too-old` (405, refetching the Web version), `silent` (open but nothing arrived, reconnecting).
   */
  problem?: 'forbidden' | 'bad-session' | 'client-too-old' | 'silent';
  /** Set while WhatsApp restricts the account (463 time-lock, message capping): sends may fail; `until` when known (unix ms). */
  restricted?: { reason: string; until?: number };
}

/**
 * The one interface between the core and a chat network.
 * Implementations: `MemoryTransport` (tests, bench), `ConsoleTransport` (`npm run chat`), WhatsApp (Baileys).
 *
 * @example
 * const transport = new MemoryTransport();
 * await bot.start(transport);
 * const replies = await transport.push({ text: '.ping' });
 */
export interface Transport {
  readonly name: string;
  /**
   * How long (ms) the core waits for more of a sender's messages before answering them as one turn, when config
   * `conversation.debounceMs` is unset. Optional: without it, 0 (every message its own turn).
   */
  readonly defaultDebounceMs?: number;
  /**
   * After how many seconds a turn still running shows a status message, when config
   * `conversation.progressAfterSeconds` is unset. Optional: without it, 0 (no status messages).
   */
  readonly defaultProgressAfterSeconds?: number;
  /**
   * True where sending too much too fast gets the account banned (WhatsApp): the messages of an answer are then spaced
   * by the outbox (a private chat's first at once, a group's stream spread). Unset: answers go straight out.
   */
  readonly pacesAnswers?: boolean;
  /**
   * False where a message once sent cannot be changed (the console prints lines): a long turn's status is shown once and
   * nothing waits to edit it. Unset: edits are tried (`editText` answers false where one fails).
   */
  readonly editsMessages?: boolean;
  /** `events` (optional) receives edits and deletes of earlier messages where the network has them. */
  start(onMessage: InboundHandler, events?: TransportEvents): Promise<void>;
  /** Registers the handler for messages deleted for everyone (the memory transport; WhatsApp uses `events`). */
  onRevoke?(handler: RevokeHandler): void;
  stop(): Promise<void>;
  sendText(chatId: string, text: string, options?: SendOptions): Promise<SentMessage>;
  /** Edits a message the bot sent. Returns false when the transport cannot edit (the caller then sends anew). */
  editText(chatId: string, messageId: string, text: string): Promise<boolean>;
  /** `author`: who wrote the message (a group's member): WhatsApp needs it to find a group message the transport no longer knows. */
  react(chatId: string, messageId: string, emoji: string, author?: string): Promise<void>;
  sendMedia(chatId: string, media: OutgoingMedia, options?: SendOptions): Promise<SentMessage>;
  /**
   * Sends a poll. The transport keeps what it needs to read the votes (WhatsApp: the poll's secret, with the sent
   * message) and reports them through `events.onPollVote`. Optional: a network without polls leaves it out, and the
   * core says so instead of sending.
   */
  sendPoll?(chatId: string, poll: OutgoingPoll, options?: SendOptions): Promise<SentMessage>;
  /** Sends a location. Optional: a network without locations leaves it out, and the core says so instead of sending. */
  sendLocation?(chatId: string, location: OutgoingLocation, options?: SendOptions): Promise<SentMessage>;
  /** Sends a contact card (WhatsApp: a vCard). Optional, like `sendLocation`. */
  sendContact?(chatId: string, contact: OutgoingContact, options?: SendOptions): Promise<SentMessage>;
  /**
   * The bot took this message up (the access rules let it through and it is meant for the bot): shows the sender it
   * was read (WhatsApp: blue ticks, unless config `whatsapp.readReceipts` is false). Never waits on the network, never
   * throws. Optional: a transport without read receipts leaves it out.
   */
  markRead?(message: IncomingMessage): void;
  /** Shows/hides "typing…" in a chat; a no-op where the network has none. */
  setTyping(chatId: string, typing: boolean): Promise<void>;
  /** The bot's own ids learnt at login (phone jid, LID); empty until linked. */
  ownIds(): string[];
  /**
   * The private chat id of a user given by digits (config `owners`), for messages the bot starts (owner notices).
   * Optional: without it, `<digits>@s.whatsapp.net`.
   */
  privateChatId?(id: string): string;
  /**
   * The private chat of the person at the machine running the bot (the console's own sender), who counts as an owner
   * and is told what the owners are told. Optional: a chat network has no such person.
   */
  operatorChatId?(): string | undefined;
  session(): SessionState;
  /**
   * Chats whose name matches `name` (case aside), for an owner naming a chat in words (`.watch Family`): WhatsApp
   * matches group subjects. Optional: without it, `name` is taken as a group named so (`<name>@g.us`, the console's).
   */
  findChats?(name: string): Promise<Array<{ id: string; name: string }>>;
  /**
   * Whether `userId` is an admin of group `chatId` (`.reset`/`.forget` in groups). Optional: a transport without
   * group roles leaves it out and only owners may use those commands in its groups. WhatsApp reads group metadata;
   * the memory transport answers from its `groupAdmins` list; the console has no group admins.
   */
  isGroupAdmin?(chatId: string, userId: string): Promise<boolean>;
  /**
   * Whether `chatId` names a group. Optional: without it, a group is a WhatsApp group jid (`…@g.us`), as the console
   * and memory transports name theirs. The core asks `isGroupChatOf`, never the id's shape itself.
   */
  isGroupChat?(chatId: string): boolean;
  /**
   * What the transport itself keeps about people (WhatsApp: the messages it sent, kept for resends; phone ↔ LID
   * pairs), as its declared stores (`Store.*` under its own namespace), so `.mydata`, its delete, deletes for
   * everyone, edits and chat moves reach them by declaration. Optional: the core adopts them with the core's and the
   * plugins' stores when the transport starts; a transport that keeps nothing leaves it out.
   */
  declaredStores?(): DeclaredStores;
  /**
   * Logs the linked device out and starts a new link (a new QR). Optional: the dashboard offers "relink" only when
   * the transport has it.
   */
  relink?(): Promise<void>;
  /**
   * Asks the network for a pairing code to link with the phone number `phone` (digits, international form) instead
   * of scanning the QR; resolves with the code, which `session().pairingCode` shows from then on. Rejects with a
   * message for people when it cannot (already linked, not connected yet, not a phone number). Optional: the
   * dashboard offers it only when the transport has it (WhatsApp; the console and memory transports have no link).
   */
  requestPairingCode?(phone: string): Promise<string>;
}

/**
 * True when `id` is the person at the machine (`operatorChatId`): an owner wherever the bot acts for them (a vote, a
 * scheduled task), not only in what they type.
 */
export function isOperator(transport: Transport | undefined, id: string): boolean {
  const operator = transport?.operatorChatId?.();
  return operator !== undefined && privateChatIdOf(transport, userPart(id)) === operator;
}

/** The chats named `name` (see `Transport.findChats`); a transport without names: the group `<name>@g.us`. */
export async function findChatsOf(transport: Transport | undefined, name: string): Promise<Array<{ id: string; name: string }>> {
  const wanted = name.trim();
  if (!wanted) return [];
  if (transport?.findChats) return transport.findChats(wanted);
  return [{ id: `${wanted}@g.us`, name: wanted }];
}

/** Whether `chatId` names a group, as `transport` says (see `Transport.isGroupChat`). */
export function isGroupChatOf(transport: Transport | undefined, chatId: string): boolean {
  return transport?.isGroupChat?.(chatId) ?? isGroupId(chatId);
}

/** The private chat of `id` (digits) as `transport` names it. */
export function privateChatIdOf(transport: Transport | undefined, id: string): string {
  return transport?.privateChatId?.(id) ?? `${id}@s.whatsapp.net`;
}
