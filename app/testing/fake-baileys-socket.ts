import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { stat } from 'node:fs/promises';
import { Boom } from '@hapi/boom';
import { addTransactionCapability, aesEncryptGCM, DisconnectReason, generateWAMessageContent, hmacSign, jidEncode, proto, sha256, type AnyMessageContent, type GroupMetadata, type MiscMessageGenerationOptions, type WAMessage, type WAMessageKey, type WAPresence } from '@whiskeysockets/baileys';
import { LIDMappingStore } from '@whiskeysockets/baileys/lib/Signal/lid-mapping.js';
import pino from 'pino';
import type { SocketOptions, WhatsAppSocket } from '../../core/adapters/whatsapp/whatsapp-transport.js';

const silent = pino({ level: 'silent' });
/** The content keys of a media message (Baileys' MEDIA_KEYS but ptv). */
const MEDIA_KINDS = ['image', 'video', 'audio', 'document', 'sticker'] as const;

/** One thing the transport sent through the fake socket. */
export interface SentRecord {
  jid: string;
  content: AnyMessageContent;
  options?: MiscMessageGenerationOptions;
  id: string;
  /** The message as Baileys would have built it (for edits, reactions, quotes, texts, polls and media). */
  message?: proto.IMessage;
}

let sentSeq = 0;

/**
 * A fake Baileys socket: an EventEmitter on `ev` (like Baileys' event emitter) that the test drives with
 * `connection.update` / `messages.upsert` events built from Baileys' own `proto`, and that records what is sent.
 *
 * @example
 * const sockets = new FakeSocketFactory();
 * const transport = new WhatsAppTransport({ …, makeSocket: sockets.make });
 * sockets.last.qr('2@abc'); sockets.last.open();
 */
export class FakeBaileysSocket implements WhatsAppSocket {
  readonly ev = new EventEmitter();
  /** Stands for Baileys' websocket, which emits `frame` for every frame WhatsApp sends. */
  readonly ws = new EventEmitter();
  readonly sent: SentRecord[] = [];
  readonly presences: Array<{ type: WAPresence; jid?: string }> = [];
  readonly pairingRequests: string[] = [];
  ended = false;
  private sentWaiters: Array<{ count: number; resolve: () => void }> = [];

  /** Baileys' real LID ↔ phone store over the transport's key store, as `makeWASocket` builds it. */
  readonly signalRepository: { lidMapping: LIDMappingStore };

  constructor(readonly options: SocketOptions) {
    const keys = addTransactionCapability(options.auth.keys, silent, { maxCommitRetries: 1, delayBetweenTriesMs: 1 });
    this.signalRepository = { lidMapping: new LIDMappingStore(keys, silent) };
  }

  end(_error: Error | undefined): void {
    this.ended = true;
    this.signalRepository.lidMapping.close();
  }

  async sendMessage(jid: string, content: AnyMessageContent, options?: MiscMessageGenerationOptions): Promise<WAMessage> {
    // Like Baileys' relayMessage: a group send asks cachedGroupMetadata and queries the group on a miss.
    if (jid.endsWith('@g.us')) {
      const cached = await this.options.cachedGroupMetadata?.(jid);
      if (!cached || !Array.isArray(cached.participants)) await this.groupMetadata(jid);
    }
    // Baileys sends under the id the caller chose (`messageId`), else one of its own.
    const id = options?.messageId ?? `BOTMSG${++sentSeq}`;
    const record: SentRecord = { jid, content, options, id };
    this.sent.push(record);
    const text = 'text' in content && typeof content.text === 'string' ? content.text : undefined;
    // What Baileys' generateWAMessage makes of an edit and a reaction.
    const message: proto.IMessage =
      MEDIA_KINDS.some((kind) => kind in content)
        ? // Baileys' own media builder: reads and encrypts the file, "uploads" it here, and makes the
          // documentMessage/imageMessage/… with its mimetype, file name, length and SHA-256, as the phone receives it.
          await generateWAMessageContent(content, { upload: this.upload, logger: silent } as never)
        : ('poll' in content && content.poll) || ('location' in content && content.location) || ('contacts' in content && content.contacts)
        ? // Baileys' own content builder: a pollCreationMessage (V3 for one choice) with its messageSecret, a
          // locationMessage, a contactMessage with its vCard.
          await generateWAMessageContent(content, { upload: () => Promise.reject(new Error('no uploads in a poll, location or contact card')) } as never)
        : 'edit' in content && content.edit
        ? { protocolMessage: { key: content.edit, type: proto.Message.ProtocolMessage.Type.MESSAGE_EDIT, editedMessage: { conversation: text }, timestampMs: Date.now() } }
        : 'react' in content && content.react
          ? { reactionMessage: { key: content.react.key, text: content.react.text, senderTimestampMs: Date.now() } }
          : text && options?.quoted?.key
            ? // Baileys' generateWAMessageFromContent: a quoted reply carries the quoted message and its sender.
              { extendedTextMessage: { text, contextInfo: { stanzaId: options.quoted.key.id, participant: options.quoted.key.fromMe ? BOT_ME.id : (options.quoted.key.participant ?? options.quoted.key.remoteJid), quotedMessage: options.quoted.message } } }
            : text
              ? { conversation: text }
              : {};
    record.message = message;
    for (const w of this.sentWaiters.filter((w) => this.sent.length >= w.count)) w.resolve();
    const sent = proto.WebMessageInfo.fromObject({ key: { remoteJid: jid, id, fromMe: true }, message, messageTimestamp: Math.floor(Date.now() / 1000) }) as WAMessage;
    // Like Baileys with emitOwnEvents: the account's own message comes back as an upsert before the send resolves.
    // The echo is handled while the send is still under way (Baileys relays to the other devices after it).
    if (this.echoOwnSends) {
      this.ev.emit('messages.upsert', { messages: [sent], type: 'append' });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return sent;
  }

  /** Every media upload Baileys made while building a sent message: its kind and the encrypted length. */
  readonly uploads: Array<{ mediaType: string; encryptedBytes: number }> = [];

  /** Stands for WhatsApp's media servers: takes the encrypted file and answers where it lives. */
  private readonly upload = async (encryptedFile: string, { mediaType, fileEncSha256B64 }: { mediaType: string; fileEncSha256B64: string }) => {
    this.uploads.push({ mediaType, encryptedBytes: (await stat(encryptedFile)).size });
    const directPath = `/v/t62.fake/${encodeURIComponent(fileEncSha256B64)}`;
    return { mediaUrl: `https://mmg.whatsapp.net${directPath}`, directPath };
  };

  /** Emit every sent message back as a `fromMe` upsert, as Baileys does (off by default: most tests count upserts). */
  echoOwnSends = false;

  /** Reasons of every logout asked for (Baileys' `logout`). */
  readonly logouts: string[] = [];

  /** Like Baileys' logout: WhatsApp removes the device, then the socket closes with 401 (logged out). */
  async logout(reason?: string): Promise<void> {
    this.logouts.push(reason ?? '');
    await new Promise((resolve) => setImmediate(resolve));
    this.close(DisconnectReason.loggedOut, 'Intentional Logout');
  }

  /** The calls declined (Baileys' rejectCall), in order. */
  readonly rejectedCalls: Array<{ id: string; from: string }> = [];

  async rejectCall(id: string, from: string): Promise<void> {
    this.rejectedCalls.push({ id, from });
  }

  /**
   * A call rings, as Baileys reports one (`call` event, status `offer`): from `from` (a private call), or in `group`.
   * Returns the call's id.
   */
  ring(o: { from: string; video?: boolean; group?: string; id?: string }): string {
    const id = o.id ?? `CALL${++sentSeq}`;
    this.ev.emit('call', [{ chatId: o.group ?? o.from, from: o.from, id, date: new Date(), status: 'offer', offline: false, ...(o.video ? { isVideo: true } : {}), ...(o.group ? { isGroup: true, groupJid: o.group } : {}) }]);
    return id;
  }

  /** Resolves once at least `count` messages were sent. */
  waitForSent(count: number): Promise<void> {
    if (this.sent.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.sentWaiters.push({ count, resolve }));
  }

  /**
   * The next message sent from this call on that `matches` (default: a text that is not an edit), to `jid` when
   * given. Call it before delivering what it answers: what was sent already does not count.
   *
   * @example
   * const answer = socket.nextSent();
   * socket.deliver([waText('hello', { from: ALICE })]);
   * expect(sentText(await answer)).to.equal('model: hello');
   */
  async nextSent(matches: (record: SentRecord) => boolean = isSentText, jid?: string): Promise<SentRecord> {
    const wanted = (record: SentRecord) => matches(record) && (!jid || record.jid === jid);
    const before = this.sent.filter(wanted).length;
    for (;;) {
      const found = this.sent.filter(wanted);
      if (found.length > before) return found.at(-1)!;
      await this.waitForSent(this.sent.length + 1);
    }
  }

  async sendPresenceUpdate(type: WAPresence, jid?: string): Promise<void> {
    this.presences.push({ type, jid });
  }

  /** Every read receipt asked for (Baileys' `readMessages`), one entry per call. */
  readonly reads: WAMessageKey[][] = [];

  async readMessages(keys: WAMessageKey[]): Promise<void> {
    this.reads.push(keys);
  }

  /** The code the next pairing-code request answers. */
  nextPairingCode = 'ABCD1234';

  /**
   * Like Baileys' requestPairingCode: writes the code and the phone asked for into the session's `me` at once (before
   * any phone linked) and announces it in creds.update, then WhatsApp answers.
   */
  async requestPairingCode(phone: string): Promise<string> {
    this.pairingRequests.push(phone);
    const creds = this.options.auth.creds;
    creds.pairingCode = this.nextPairingCode;
    creds.me = { id: jidEncode(phone, 's.whatsapp.net'), name: '~' };
    this.ev.emit('creds.update', creds);
    await new Promise((resolve) => setImmediate(resolve));
    return this.nextPairingCode;
  }

  /** Every group metadata query made (WhatsApp answers rate-overlimit when there are too many). */
  readonly groupQueries: string[] = [];
  /** Metadata WhatsApp answers per group (default: an empty group named "test group"). */
  groupAnswers = new Map<string, Partial<GroupMetadata>>();

  async groupMetadata(jid: string): Promise<GroupMetadata> {
    this.groupQueries.push(jid);
    await new Promise((resolve) => setImmediate(resolve));
    return { id: jid, subject: 'test group', participants: [], ...this.groupAnswers.get(jid) } as unknown as GroupMetadata;
  }

  /** How many times the account's group list was fetched (Baileys' groupFetchAllParticipating). */
  groupListFetches = 0;

  /** Like Baileys' groupFetchAllParticipating: every group in `groupAnswers`, by id (an empty object without any). */
  async groupFetchAllParticipating(): Promise<Record<string, GroupMetadata>> {
    this.groupListFetches++;
    await new Promise((resolve) => setImmediate(resolve));
    return Object.fromEntries([...this.groupAnswers].map(([jid, meta]) => [jid, { id: jid, subject: 'test group', participants: [], ...meta } as unknown as GroupMetadata]));
  }

  /** What WhatsApp answers Baileys' reach-out time-lock query (an Error: the query fails). */
  reachoutTimelock: { isActive: boolean; timeEnforcementEnds?: Date; enforcementType?: string } | Error = { isActive: false };
  /** How many times the transport asked whether the account is restricted. */
  timelockChecks = 0;

  /** Like Baileys' fetchAccountReachoutTimelock: queries WhatsApp, emits the answer in connection.update, returns it. */
  async fetchAccountReachoutTimelock(): Promise<unknown> {
    this.timelockChecks++;
    await new Promise((resolve) => setImmediate(resolve));
    if (this.reachoutTimelock instanceof Error) throw this.reachoutTimelock;
    this.ev.emit('connection.update', { reachoutTimeLock: this.reachoutTimelock });
    return this.reachoutTimelock;
  }

  /** WhatsApp's later verdict on a sent message (Baileys: a bad ack becomes messages.update with status ERROR). */
  sendFailed(jid: string, id: string, code: string, text?: string): void {
    this.ev.emit('messages.update', [{ key: { remoteJid: jid, id, fromMe: true }, update: { status: proto.WebMessageInfo.Status.ERROR, messageStubParameters: text ? [code, text] : [code] } }]);
  }

  // ---- driving the transport like WhatsApp does ----

  qr(code = `2@fake-qr-${Math.random().toString(36).slice(2)}`): string {
    this.ev.emit('connection.update', { qr: code });
    return code;
  }

  /** Pairing succeeded on the phone (Baileys: creds.update with `me`, then isNewLogin). */
  paired(me: { id: string; lid?: string; name?: string }): void {
    this.ev.emit('creds.update', { me, registered: true });
    this.ev.emit('connection.update', { isNewLogin: true, qr: undefined });
  }

  /** The connection opened; `me` (with the LID) arrives in creds.update just before, as in Baileys. */
  open(me?: { id: string; lid?: string; name?: string }): void {
    if (me) this.ev.emit('creds.update', { me });
    this.ev.emit('connection.update', { connection: 'open' });
  }

  /** The connection closed with a Baileys DisconnectReason code (undefined: a plain network error). */
  close(statusCode?: number, message = 'Connection Failure'): void {
    // Baileys ends the socket itself before it reports the close.
    this.ended = true;
    const error = statusCode === undefined ? Object.assign(new Error('getaddrinfo ENOTFOUND web.whatsapp.com'), { code: 'ENOTFOUND' }) : new Boom(message, { statusCode });
    this.ev.emit('connection.update', { connection: 'close', lastDisconnect: { error, date: new Date() } });
  }

  /** A frame arrived from WhatsApp (a keep-alive answer, a receipt …). */
  frame(): void {
    this.ws.emit('frame', { tag: 'iq', attrs: {} });
  }

  deliver(messages: WAMessage[], type: 'notify' | 'append' = 'notify'): void {
    this.ev.emit('messages.upsert', { messages, type });
  }
}

/** Makes fake sockets for the transport and keeps them, so tests can see that only one is alive. */
export class FakeSocketFactory {
  readonly sockets: FakeBaileysSocket[] = [];
  private waiters: Array<{ count: number; resolve: () => void }> = [];

  readonly make = (options: SocketOptions): FakeBaileysSocket => {
    const socket = new FakeBaileysSocket(options);
    this.sockets.push(socket);
    // Wake waiters only after the transport has attached to the socket (it awaits the factory's result).
    const ready = this.waiters.filter((w) => this.sockets.length >= w.count);
    if (ready.length) setImmediate(() => ready.forEach((w) => w.resolve()));
    return socket;
  };

  get last(): FakeBaileysSocket {
    const socket = this.sockets.at(-1);
    if (!socket) throw new Error('no socket was made yet');
    return socket;
  }

  /** Sockets that were not ended by the transport. */
  alive(): FakeBaileysSocket[] {
    return this.sockets.filter((s) => !s.ended);
  }

  /** Resolves once `count` sockets were made. */
  waitForSockets(count: number): Promise<void> {
    if (this.sockets.length >= count) return new Promise((resolve) => setImmediate(resolve));
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }
}

export { DisconnectReason };

// ---- message builders (real proto objects) ----

export const BOT_PHONE = '6289900000001';
export const BOT_LID = '155500000000001';
export const BOT_ME = { id: jidEncode(BOT_PHONE, 's.whatsapp.net', 12), lid: jidEncode(BOT_LID, 'lid', 12), name: 'Assistant' };
export const GROUP = '120363000000000001@g.us';

let inSeq = 0;

export interface BuildOptions {
  chat?: string;
  /** Sender jid (the participant in a group). */
  from?: string;
  /** v7 alternative jid of the sender (participantAlt in groups, remoteJidAlt in private chats). */
  fromAlt?: string;
  id?: string;
  fromMe?: boolean;
  pushName?: string;
  timestamp?: number;
}

/** Wraps message content in a real `proto.WebMessageInfo` with a v7 key. */
export function waMessage(message: proto.IMessage, o: BuildOptions = {}): WAMessage {
  const chat = o.chat ?? o.from ?? '6281200000001@s.whatsapp.net';
  const isGroup = chat.endsWith('@g.us');
  const info = proto.WebMessageInfo.fromObject({
    key: { remoteJid: chat, id: o.id ?? `3EB0${(++inSeq).toString().padStart(12, '0')}`, fromMe: o.fromMe ?? false, ...(isGroup ? { participant: o.from ?? '6281200000001@s.whatsapp.net' } : {}) },
    message,
    messageTimestamp: o.timestamp ?? Math.floor(Date.now() / 1000),
    pushName: o.pushName ?? 'Tester',
  }) as WAMessage;
  if (o.fromAlt) {
    if (isGroup) info.key.participantAlt = o.fromAlt;
    else info.key.remoteJidAlt = o.fromAlt;
  }
  return info;
}

/**
 * WhatsApp's media server as the tests need it: the bytes it hands out by message id, and the `download` to give the
 * transport (`transport: { download }`). An id it does not hold fails as expired media does, so `served.clear()` is
 * "WhatsApp no longer has the file".
 *
 * @example
 * const media = mediaServedById();
 * await startFakeSocketBot(plugin, { transport: { download: media.download } });
 * media.served.set('3EB0VOICE0000001', oggBytes);
 */
export function mediaServedById(): { served: Map<string, Buffer>; download(message: WAMessage): Promise<Buffer> } {
  const served = new Map<string, Buffer>();
  return {
    served,
    download: async (message) => {
      const bytes = served.get(message.key.id ?? '');
      if (!bytes) throw new Error('media no longer on WhatsApp (410)');
      return bytes;
    },
  };
}

/** Whether a sent record is a text (not an edit of an earlier message). */
export function isSentText(record: SentRecord): boolean {
  return 'text' in record.content && typeof (record.content as { text?: unknown }).text === 'string' && !('edit' in record.content);
}

/** The text of a sent text record. */
export function sentText(record: SentRecord): string {
  return (record.content as { text: string }).text;
}

/**
 * A text message; with mentions or a quote it becomes an extendedTextMessage, as WhatsApp sends it. A quote carries the
 * quoted message's text, or the quoted message itself (`message`: a voice note, a photo, a document).
 */
export function waText(text: string, o: BuildOptions & { mentions?: string[]; quote?: { id: string; participant: string; text?: string; message?: proto.IMessage } } = {}): WAMessage {
  if (!o.mentions?.length && !o.quote) return waMessage({ conversation: text }, o);
  return waMessage(
    {
      extendedTextMessage: {
        text,
        contextInfo: {
          ...(o.mentions?.length ? { mentionedJid: o.mentions } : {}),
          ...(o.quote ? { stanzaId: o.quote.id, participant: o.quote.participant, quotedMessage: o.quote.message ?? { conversation: o.quote.text ?? '' } } : {}),
        },
      },
    },
    o,
  );
}

/**
 * A vote on a poll as a phone makes it: the options' SHA-256 hashes in a PollVoteMessage, encrypted with AES-GCM under
 * a key derived from the poll's secret, its id, the creator's id and the voter's (the inverse of Baileys'
 * `decryptPollVote`), in a pollUpdateMessage pointing at the poll. Phones derive it from the creator's LID and the
 * voter's phone number (Baileys issue #2342); `creatorJid`/`voterJid` change that.
 */
export function waPollVote(poll: { id: string; secret: Uint8Array; chat?: string }, options: string[], o: BuildOptions & { creatorJid?: string; voterJid?: string } = {}): WAMessage {
  const voterJid = o.voterJid ?? o.fromAlt ?? o.from ?? '6281200000001@s.whatsapp.net';
  const creatorJid = o.creatorJid ?? `${BOT_LID}@lid`;
  const plaintext = proto.Message.PollVoteMessage.encode({ selectedOptions: options.map((name) => sha256(Buffer.from(name))) }).finish();
  const sign = Buffer.concat([Buffer.from(poll.id), Buffer.from(creatorJid), Buffer.from(voterJid), Buffer.from('Poll Vote'), new Uint8Array([1])]);
  const key = hmacSign(sign, hmacSign(Buffer.from(poll.secret), new Uint8Array(32)));
  const encIv = randomBytes(12);
  const encPayload = aesEncryptGCM(Buffer.from(plaintext), key, encIv, Buffer.from(`${poll.id}\u0000${voterJid}`));
  const chat = o.chat ?? poll.chat;
  return waMessage(
    { pollUpdateMessage: { pollCreationMessageKey: { remoteJid: chat, id: poll.id, fromMe: false }, vote: { encPayload, encIv }, senderTimestampMs: Date.now() } },
    { ...o, chat },
  );
}

/** The poll a record of the fake socket sent: its id, its secret and its options, as a phone receives them. */
export function sentPoll(record: SentRecord): { id: string; secret: Uint8Array; options: string[]; selectable: number } {
  const m = record.message;
  const creation = m?.pollCreationMessage ?? m?.pollCreationMessageV3;
  const secret = m?.messageContextInfo?.messageSecret;
  if (!creation || !secret) throw new Error('that record is not a poll');
  return { id: record.id, secret, options: (creation.options ?? []).map((o) => o.optionName ?? ''), selectable: creation.selectableOptionsCount ?? 0 };
}
