import { createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import {
  aesDecryptCTR,
  aesDecryptGCM,
  aesEncryptCTR,
  aesEncryptGCM,
  Curve,
  decodeBinaryNode,
  derivePairingCodeKey,
  encodeBinaryNode,
  getBinaryNodeChild,
  getBinaryNodeChildBuffer,
  getBinaryNodeChildren,
  getMediaKeys,
  hkdf,
  hmacSign,
  NOISE_MODE,
  NOISE_WA_HEADER,
  proto,
  sha256,
  WA_ADV_ACCOUNT_SIG_PREFIX,
  type BinaryNode,
} from '@whiskeysockets/baileys';
import { WebSocketServer, type WebSocket } from 'ws';
import { WireDevice, type UploadedBundle } from './wire-device.js';
import { ROOT } from '../helpers/checkout.js';

/**
 * A real WhatsApp Web certificate chain (as crabline serves it, MIT): Baileys checks the intermediate against
 * WhatsApp's root key but never ties the leaf to the server's static key, so a recorded chain lets a test server
 * finish the Noise handshake.
 */
const CERT_CHAIN = Buffer.from(
  'CncKMwjjAhADGiCRKg7Kg1iu4CSulwLBaxX51Tefw6VXGgZqcr5OEbXIRiDQ04bOBijQjZ/TBhJA34Bj82jAHhLpCWBNVBlGnFDieamd8+138S57uMt9ke9mrn5r4+VepwBPKEgHjob6bR70rlCmWDkxZv+CfVjIAxJ2CjIIAxAAGiAcUamsMDmUxsjQuS6hh4pTNHZZnMWZ++o1mX2aqQzOYiCAka6+Bij/3rfcBhJAJw8pRkhTn+1IcOJQVN1OlZg6uikYnCumyO7acFVVX3U3QPXsGSq2TCbCbWrebSC593Su43EgprIDlfU8ZgWFBw==',
  'base64',
);

/** The close codes this server can end a session with, as WhatsApp sends them. */
export type CloseCode = 401 | 405 | 440 | 515;

/** One connection the client (the bot) opened: a login with stored credentials, or a registration (no session). */
export interface WireConnection {
  kind: 'login' | 'registration';
  /** The login's user (phone digits), when a login. */
  user?: string;
  /** The WhatsApp Web version the client announced (`primary.secondary.tertiary`). */
  version: string;
}

const iv = (counter: number) => {
  const bytes = Buffer.alloc(12);
  bytes.writeUInt32BE(counter, 8);
  return bytes;
};

/** The server side of WhatsApp's Noise XX handshake, then the transport's framing (3-byte length prefix). */
class NoiseServer {
  private hash: Buffer;
  private salt: Buffer;
  private key: Buffer;
  private counter = 0;
  private ephemeral = Curve.generateKeyPair();
  private transport: { enc: Buffer; dec: Buffer; read: number; write: number } | undefined;

  constructor() {
    const mode = Buffer.from(NOISE_MODE);
    this.hash = mode.length === 32 ? mode : sha256(mode);
    this.salt = this.hash;
    this.key = this.hash;
    this.mix(NOISE_WA_HEADER);
  }

  private mix(data: Uint8Array): void {
    this.hash = sha256(Buffer.concat([this.hash, Buffer.from(data)]));
  }

  private mixIntoKey(data: Uint8Array): void {
    const out = hkdf(Buffer.from(data), 64, { salt: this.salt, info: '' });
    this.salt = Buffer.from(out.subarray(0, 32));
    this.key = Buffer.from(out.subarray(32));
    this.counter = 0;
  }

  private encrypt(plain: Uint8Array): Buffer {
    const out = aesEncryptGCM(plain, this.key, iv(this.counter++), this.hash);
    this.mix(out);
    return out;
  }

  private decrypt(cipher: Uint8Array): Buffer {
    const out = aesDecryptGCM(cipher, this.key, iv(this.counter++), this.hash);
    this.mix(cipher);
    return out;
  }

  /** Client hello → server hello (ephemeral, static key and certificate chain, encrypted). */
  hello(frame: Buffer): Buffer {
    const { clientHello } = proto.HandshakeMessage.decode(frame);
    this.mix(clientHello!.ephemeral!);
    this.mix(this.ephemeral.public);
    this.mixIntoKey(Curve.sharedKey(this.ephemeral.private, clientHello!.ephemeral!));
    const staticKey = Curve.generateKeyPair();
    const encryptedStatic = this.encrypt(staticKey.public);
    this.mixIntoKey(Curve.sharedKey(staticKey.private, clientHello!.ephemeral!));
    const payload = this.encrypt(CERT_CHAIN);
    return frameOf(proto.HandshakeMessage.encode({ serverHello: { ephemeral: this.ephemeral.public, static: encryptedStatic, payload } }).finish());
  }

  /** Client finish → the client's payload (login or registration); the transport keys are ready afterwards. */
  finish(frame: Buffer): proto.ClientPayload {
    const { clientFinish } = proto.HandshakeMessage.decode(frame);
    const clientStatic = this.decrypt(clientFinish!.static!);
    this.mixIntoKey(Curve.sharedKey(this.ephemeral.private, clientStatic));
    const payload = proto.ClientPayload.decode(this.decrypt(clientFinish!.payload!));
    const out = hkdf(Buffer.alloc(0), 64, { salt: this.salt, info: '' });
    // The client writes with the first half and reads with the second.
    this.transport = { dec: Buffer.from(out.subarray(0, 32)), enc: Buffer.from(out.subarray(32)), read: 0, write: 0 };
    return payload;
  }

  async decode(frame: Buffer): Promise<BinaryNode> {
    const t = this.transport!;
    return decodeBinaryNode(aesDecryptGCM(frame, t.dec, iv(t.read++), Buffer.alloc(0)));
  }

  encode(node: BinaryNode): Buffer {
    const t = this.transport!;
    return frameOf(aesEncryptGCM(encodeBinaryNode(node), t.enc, iv(t.write++), Buffer.alloc(0)));
  }
}

function frameOf(data: Uint8Array): Buffer {
  const frame = Buffer.alloc(3 + data.length);
  frame.writeUIntBE(data.length, 0, 3);
  frame.set(data, 3);
  return frame;
}

const now = () => String(Math.floor(Date.now() / 1000));
const userOf = (jid: string) => jid.split('@')[0].split(':')[0];
const beUInt = (bytes: Uint8Array | undefined) => (bytes ? Buffer.from(bytes).readUIntBE(0, bytes.length) : 0);

/** A group on the server: its members (LID-addressed, as WhatsApp's groups are now) and the bot. */
export interface WireGroup {
  /** `<digits>@g.us` */
  id: string;
  subject: string;
  members: WireDevice[];
}

/** One copy of a message the bot sent, as one recipient device decrypted it. */
export interface BotSend {
  /** The chat (the stanza's `to`: a person's jid or a group). */
  chat: string;
  /** The device it was encrypted for. */
  device: string;
  id: string;
  message: proto.Message;
}

/** A receipt the bot sent (delivery, read …) for one or more messages. */
export interface BotReceipt {
  ids: string[];
  to: string;
  participant?: string;
  type?: string;
}

function groupNode(group: WireGroup, bot: { jid: string; lid: string }): BinaryNode {
  return {
    tag: 'group',
    attrs: { id: userOf(group.id), subject: group.subject, s_t: now(), creation: now(), addressing_mode: 'lid' },
    content: [
      { tag: 'participant', attrs: { jid: bot.lid, phone_number: bot.jid } },
      ...group.members.map((m) => ({ tag: 'participant', attrs: { jid: m.senderJid, phone_number: m.phoneJid } })),
    ],
  };
}
const childOf = (node: BinaryNode) => (Array.isArray(node.content) ? node.content[0] : undefined);

/** What the server sends to end a session with `code`, as WhatsApp does. */
function closing(code: CloseCode): BinaryNode {
  switch (code) {
    case 401:
    case 405:
      return { tag: 'failure', attrs: { reason: String(code) } };
    case 440:
      return { tag: 'stream:error', attrs: {}, content: [{ tag: 'conflict', attrs: { type: 'replaced' } }] };
    case 515:
      return { tag: 'stream:error', attrs: { code: '515' } };
  }
}

/** One client connection. */
class Session {
  private readonly noise = new NoiseServer();
  private buffered = Buffer.alloc(0);
  private stage: 'hello' | 'finish' | 'open' = 'hello';
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly ws: WebSocket, private readonly server: WhatsAppWireServer) {
    ws.on('message', (data: Buffer) => {
      this.chain = this.chain.then(() => this.receive(data)).catch(() => ws.terminate());
    });
  }

  send(node: BinaryNode): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(this.noise.encode(node));
  }

  private async receive(data: Buffer): Promise<void> {
    this.buffered = Buffer.concat([this.buffered, data]);
    // The client's first bytes are the "WA" intro header.
    if (this.stage === 'hello' && this.buffered.subarray(0, 2).toString() === 'WA') this.buffered = this.buffered.subarray(NOISE_WA_HEADER.length);
    while (this.buffered.length >= 3) {
      const size = this.buffered.readUIntBE(0, 3);
      if (this.buffered.length < size + 3) return;
      const frame = this.buffered.subarray(3, size + 3);
      this.buffered = this.buffered.subarray(size + 3);
      if (this.stage === 'hello') {
        this.ws.send(this.noise.hello(frame));
        this.stage = 'finish';
      } else if (this.stage === 'finish') {
        this.opened(this.noise.finish(frame));
        this.stage = 'open';
      } else {
        await this.node(await this.noise.decode(frame));
      }
    }
  }

  private opened(payload: proto.ClientPayload): void {
    const v = payload.userAgent?.appVersion;
    const version = `${v?.primary ?? 0}.${v?.secondary ?? 0}.${v?.tertiary ?? 0}`;
    if (payload.devicePairingData) {
      this.server.record({ kind: 'registration', version }, this);
      // Three QR references, as WhatsApp hands out.
      this.send({ tag: 'iq', attrs: { from: 's.whatsapp.net', type: 'set', id: 'pair-1', xmlns: 'md' }, content: [{ tag: 'pair-device', attrs: {}, content: ['ref-1', 'ref-2', 'ref-3'].map((ref) => ({ tag: 'ref', attrs: {}, content: Buffer.from(ref) })) }] });
      return;
    }
    const user = String(payload.username ?? '');
    this.server.record({ kind: 'login', user, version }, this);
    this.send({ tag: 'success', attrs: { lid: `${this.server.lidUser}@lid`, t: now() } });
    this.send({ tag: 'ib', attrs: {}, content: [{ tag: 'offline', attrs: { count: '0' } }] });
  }

  private async node(node: BinaryNode): Promise<void> {
    if (node.tag === 'message') return this.server.fromBot(node, this);
    if (node.tag === 'receipt') return this.server.receiptFromBot(node);
    if (node.tag !== 'iq' || node.attrs.type === 'result' || node.attrs.type === 'error') {
      // pair-device-sign (the client's answer to pair-success): WhatsApp then asks for a restart.
      if (node.tag === 'iq' && childOf(node)?.tag === 'pair-device-sign') this.send(closing(515));
      return;
    }
    const attrs = { from: 's.whatsapp.net', id: node.attrs.id, type: 'result', t: now() };
    const child = childOf(node);
    const answer = (content?: BinaryNode[]) => this.send({ tag: 'iq', attrs, ...(content ? { content } : {}) });
    if (node.attrs.xmlns === 'encrypt') {
      if (child?.tag === 'count') return answer([{ tag: 'count', attrs: { value: String(this.server.botPreKeysLeft()) } }]);
      if (child?.tag === 'digest') return answer([{ tag: 'digest', attrs: {} }]);
      if (node.attrs.type === 'set' && getBinaryNodeChild(node, 'list')) return (this.server.takeUpload(node), answer());
      if (child?.tag === 'key') return answer([{ tag: 'list', attrs: {}, content: await this.server.bundles(getBinaryNodeChildren(child, 'user').map((u) => u.attrs.jid)) }]);
    }
    if (node.attrs.xmlns === 'md' && child?.tag === 'link_code_companion_reg' && child.attrs.stage === 'companion_finish') {
      answer();
      return this.finishCode(child);
    }
    if (node.attrs.xmlns === 'md' && child?.tag === 'link_code_companion_reg') {
      // A pairing code asked for: WhatsApp pushes it to the phone and answers with the code's reference.
      this.codeRequest = { wrappedCompanionEphemeral: getBinaryNodeChildBuffer(child, 'link_code_pairing_wrapped_companion_ephemeral_pub')! };
      this.server.notePairingRequest(child.attrs.jid);
      return answer([{ tag: 'link_code_companion_reg', attrs: {}, content: [{ tag: 'link_code_pairing_ref', attrs: {}, content: Buffer.from('pairing-ref-1') }] }]);
    }
    if (node.attrs.xmlns === 'w:m' && child?.tag === 'media_conn') {
      return answer([{ tag: 'media_conn', attrs: { auth: 'wire-media-auth', ttl: '3600' }, content: [{ tag: 'host', attrs: { hostname: this.server.mediaHostname } }] }]);
    }
    if (node.attrs.xmlns === 'usync' && child?.tag === 'usync') return answer([this.server.usync(child)]);
    if (node.attrs.xmlns === 'abt') {
      // 10518 off: 1:1 sends carry no privacy token (a real account's chats have them; this server checks none).
      return answer([{ tag: 'props', attrs: { hash: 'wire' }, content: [{ tag: 'prop', attrs: { name: '10518', value: 'false' } }] }]);
    }
    if (node.attrs.xmlns === 'privacy' && node.attrs.type === 'get' && child?.tag === 'privacy') {
      // The account's privacy settings as a fresh WhatsApp account has them: read receipts on (Baileys then sends
      // "read", blue ticks, rather than "read-self").
      const settings = { readreceipts: 'all', last: 'all', online: 'all', profile: 'all', status: 'contacts', groupadd: 'all', calladd: 'all', messages: 'all' };
      return answer([{ tag: 'privacy', attrs: {}, content: Object.entries(settings).map(([name, value]) => ({ tag: 'category', attrs: { name, value } })) }]);
    }
    if (node.attrs.xmlns === 'w:g2' && child?.tag === 'participating') return answer([{ tag: 'groups', attrs: {}, content: [...this.server.groups.values()].map((g) => groupNode(g, this.server.bot)) }]);
    if (node.attrs.xmlns === 'w:g2' && child?.tag === 'query') {
      const group = this.server.groups.get(node.attrs.to);
      if (group) return answer([groupNode(group, this.server.bot)]);
      return this.send({ tag: 'iq', attrs: { ...attrs, type: 'error' }, content: [{ tag: 'error', attrs: { code: '404', text: 'item-not-found' } }] });
    }
    answer();
  }

  private codeRequest: { wrappedCompanionEphemeral: Uint8Array } | undefined;
  private codeExchange: { companionShared: Uint8Array; primaryIdentity: { private: Uint8Array; public: Uint8Array }; user: string; lid: string } | undefined;

  /**
   * The person types the pairing code on their phone: the phone unwraps the companion's ephemeral key with the code
   * and answers with its own (wrapped the same way) and its identity key, as WhatsApp relays it.
   */
  async typeCode(code: string, user: string, lid: string): Promise<void> {
    const wrapped = Buffer.from(this.codeRequest!.wrappedCompanionEphemeral);
    const companionEphemeral = aesDecryptCTR(wrapped.subarray(48, 80), await derivePairingCodeKey(code, wrapped.subarray(0, 32)), wrapped.subarray(32, 48));
    const primaryEphemeral = Curve.generateKeyPair();
    const primaryIdentity = Curve.generateKeyPair();
    this.codeExchange = { companionShared: Curve.sharedKey(primaryEphemeral.private, companionEphemeral), primaryIdentity, user, lid };
    const salt = randomBytes(32);
    const iv = randomBytes(16);
    const wrappedPrimary = Buffer.concat([salt, iv, aesEncryptCTR(primaryEphemeral.public, await derivePairingCodeKey(code, salt), iv)]);
    this.send({
      tag: 'notification',
      attrs: { from: 's.whatsapp.net', type: 'link_code_companion_reg', id: 'link-code-1', t: now() },
      content: [
        {
          tag: 'link_code_companion_reg',
          attrs: { stage: 'primary_hello' },
          content: [
            { tag: 'link_code_pairing_ref', attrs: {}, content: Buffer.from('pairing-ref-1') },
            { tag: 'primary_identity_pub', attrs: {}, content: Buffer.from(primaryIdentity.public) },
            { tag: 'link_code_pairing_wrapped_primary_ephemeral_pub', attrs: {}, content: wrappedPrimary },
          ],
        },
      ],
    });
  }

  /** companion_finish: the phone opens the key bundle, derives the ADV secret both sides now share, and pairs. */
  private finishCode(finish: BinaryNode): void {
    const x = this.codeExchange!;
    const bundle = Buffer.from(getBinaryNodeChildBuffer(finish, 'link_code_pairing_wrapped_key_bundle')!);
    const companionIdentity = Buffer.from(getBinaryNodeChildBuffer(finish, 'companion_identity_public')!);
    const key = hkdf(Buffer.from(x.companionShared), 32, { salt: bundle.subarray(0, 32), info: 'link_code_pairing_key_bundle_encryption_key' });
    const plain = aesDecryptGCM(bundle.subarray(44), key, bundle.subarray(32, 44), Buffer.alloc(0));
    const random = plain.subarray(64, 96);
    const identityShared = Curve.sharedKey(x.primaryIdentity.private, companionIdentity);
    const advSecret = hkdf(Buffer.concat([Buffer.from(x.companionShared), Buffer.from(identityShared), random]), 32, { info: 'adv_secret' });
    this.pairWith(companionIdentity, Buffer.from(advSecret), x.user, x.lid);
  }

  /** The phone scans `qr`: the server sends pair-success signed as a primary device would. */
  pair(qr: string, user: string, lid: string): void {
    const [, , identityB64, advB64] = qr.split('#')[1].split(',');
    this.pairWith(Buffer.from(identityB64, 'base64'), Buffer.from(advB64, 'base64'), user, lid);
  }

  private pairWith(companionIdentity: Buffer, advSecret: Buffer, user: string, lid: string): void {
    const account = Curve.generateKeyPair();
    const details = proto.ADVDeviceIdentity.encode({ rawId: 1, timestamp: Math.floor(Date.now() / 1000), keyIndex: 1 }).finish();
    const accountSignature = Curve.sign(account.private, Buffer.concat([WA_ADV_ACCOUNT_SIG_PREFIX, details, companionIdentity]));
    const signed = proto.ADVSignedDeviceIdentity.encode({ details, accountSignatureKey: account.public, accountSignature }).finish();
    const hmac = hmacSign(Buffer.from(signed), advSecret);
    const identity = proto.ADVSignedDeviceIdentityHMAC.encode({ details: signed, hmac }).finish();
    this.send({
      tag: 'iq',
      attrs: { from: 's.whatsapp.net', type: 'set', id: 'pair-success-1', t: now() },
      content: [
        {
          tag: 'pair-success',
          attrs: {},
          content: [
            { tag: 'device-identity', attrs: {}, content: Buffer.from(identity) },
            { tag: 'platform', attrs: { name: 'test' } },
            { tag: 'device', attrs: { jid: `${user}:7@s.whatsapp.net`, lid: `${lid}:7@lid` } },
          ],
        },
      ],
    });
  }

  end(code: CloseCode): void {
    this.send(closing(code));
  }

  drop(): void {
    this.ws.terminate();
  }
}

/**
 * A small WhatsApp Web wire-level server on 127.0.0.1 for what crabline does not do: QR pairing (pair-device, then
 * pair-success as the phone's scan, then 515) and the close codes (401 logged out, 405 client too old, 440
 * replaced, 515 restart required), sent the way WhatsApp sends them, and messaging with real end-to-end encryption:
 * people (`person`) are devices running Baileys' own Signal code, so what they `deliver` is a pre-key or Signal
 * message the bot's socket must decrypt, and every copy the bot sends is decrypted by its recipient's device (`sent`).
 * It takes the bot's pre-key upload, answers key fetches, device lists (with LIDs), group and privacy-setting queries, records
 * receipts, and can refuse one person's messages with a 463. It speaks the real Noise handshake and Baileys' own
 * binary-node codec, answers other queries with an empty result, and records each connection.
 *
 * @example
 * const wa = await WhatsAppWireServer.start();
 * // WA_WEBSOCKET_URL=wa.url; once linked:
 * wa.end(515); await wa.waitForConnections(2);
 */
export class WhatsAppWireServer {
  readonly connections: WireConnection[] = [];
  private readonly sessions: Session[] = [];
  private waiters: Array<() => void> = [];
  /** The account's phone digits and LID digits handed out at pairing and login. */
  readonly user = '15550009999';
  readonly lidUser = '155500099990001';
  /** The account's phone jid and LID (without a device). */
  get bot(): { jid: string; lid: string } {
    return { jid: this.botJid, lid: `${this.lidUser}@lid` };
  }

  /** The account's own phone jid, as people's messages name the bot's chat. */
  get botJid(): string {
    return `${this.user}@s.whatsapp.net`;
  }

  private constructor(private readonly wss: WebSocketServer, private readonly media: https.Server) {
    wss.on('connection', (ws) => this.sessions.push(new Session(ws, this)));
    media.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method !== 'POST') return void res.writeHead(404).end();
        const directPath = `/wire-media/${this.mediaUploads.size + 1}`;
        this.mediaUploads.set(directPath, { bytes: Buffer.concat(chunks), path: req.url ?? '' });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ url: `https://${this.mediaHostname}${directPath}`, direct_path: directPath }));
      });
    });
  }

  static async start(): Promise<WhatsAppWireServer> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    const tls = path.join(ROOT, 'test', 'fixtures', 'tls');
    const media = https.createServer({ cert: readFileSync(path.join(tls, 'loopback-cert.pem')), key: readFileSync(path.join(tls, 'loopback-key.pem')) });
    await Promise.all([new Promise<void>((resolve) => wss.once('listening', resolve)), new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve))]);
    return new WhatsAppWireServer(wss, media);
  }

  /** What the bot uploaded to the media host, by the direct path it was given, with the upload's URL path. */
  readonly mediaUploads = new Map<string, { bytes: Buffer; path: string }>();

  /** The media host (HTTPS on 127.0.0.1 with the test certificate) as media_conn names it. */
  get mediaHostname(): string {
    return `127.0.0.1:${(this.media.address() as AddressInfo).port}`;
  }

  /** An agent that trusts the media host's certificate: Baileys' `fetchAgent`, so its uploads reach this server. */
  readonly mediaAgent = new https.Agent({ ca: readFileSync(path.join(ROOT, 'test', 'fixtures', 'tls', 'loopback-cert.pem')) });

  /**
   * The media a message of the bot carries, fetched from what it uploaded here and decrypted with the message's media
   * key, as a phone opens it; the upload's MAC is checked too.
   */
  async openMedia(message: proto.IMessage): Promise<{ kind: 'image' | 'audio' | 'document' | 'sticker' | 'video'; bytes: Buffer; uploadPath: string }> {
    const kinds = { imageMessage: 'image', audioMessage: 'audio', documentMessage: 'document', stickerMessage: 'sticker', videoMessage: 'video' } as const;
    for (const [field, kind] of Object.entries(kinds) as Array<[keyof typeof kinds, (typeof kinds)[keyof typeof kinds]]>) {
      const media = message[field] as { mediaKey?: Uint8Array | null; directPath?: string | null } | null | undefined;
      if (!media) continue;
      const upload = this.mediaUploads.get(media.directPath ?? '');
      if (!upload || !media.mediaKey) throw new Error(`the ${kind} names no upload of this server (${media.directPath})`);
      const { iv, cipherKey, macKey } = await getMediaKeys(media.mediaKey, kind);
      const body = upload.bytes.subarray(0, -10);
      const mac = hmacSign(Buffer.concat([iv, body]), macKey!).subarray(0, 10);
      if (Buffer.compare(mac, upload.bytes.subarray(-10)) !== 0) throw new Error(`the ${kind}'s MAC does not match its media key`);
      const decipher = createDecipheriv('aes-256-cbc', cipherKey, iv);
      return { kind, bytes: Buffer.concat([decipher.update(body), decipher.final()]), uploadPath: upload.path };
    }
    throw new Error('the message carries no media');
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.wss.address() as AddressInfo).port}/ws/chat`;
  }

  /** @internal a session finished its handshake. */
  record(connection: WireConnection, session: Session): void {
    this.connections.push(connection);
    this.current = session;
    for (const wake of this.waiters.splice(0)) wake();
  }

  private current: Session | undefined;

  /** Resolves once `count` connections finished their handshake; rejects after `timeoutMs`. */
  async waitForConnections(count: number, timeoutMs = 15_000): Promise<WireConnection> {
    const end = Date.now() + timeoutMs;
    while (this.connections.length < count) {
      const left = end - Date.now();
      if (left <= 0) throw new Error(`only ${this.connections.length} of ${count} connections within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.connections[count - 1];
  }

  /** The person types the pairing code shown by the bot on their phone (the latest connection asked for it). */
  typeCode(code: string): Promise<void> {
    return this.current!.typeCode(code, this.user, this.lidUser);
  }

  /** The phone scans this QR on the latest connection. */
  scan(qr: string): void {
    this.current!.pair(qr, this.user, this.lidUser);
  }

  /** The phone numbers (jids) pairing codes were asked for, in order. */
  readonly pairingRequests: string[] = [];

  /** @internal */
  notePairingRequest(jid: string): void {
    this.pairingRequests.push(jid);
    this.changed();
  }

  /** Drops the latest connection without a word (a linking socket whose time ran out, a network cut). */
  drop(): void {
    this.current!.drop();
  }

  /** Ends the latest connection with a close code, as WhatsApp does. */
  end(code: CloseCode): void {
    this.current!.end(code);
  }

  // ---- Messaging: people's devices (Baileys' own Signal code), the bot's pre-keys, what it sends and reads ----

  private readonly devices: WireDevice[] = [];
  readonly groups = new Map<string, WireGroup>();
  /** Every copy of every message the bot sent, decrypted by its recipient device. */
  readonly sent: BotSend[] = [];
  readonly receipts: BotReceipt[] = [];
  /** The bot's pre-key bundle as uploaded; `spent` are the one-time pre-keys people's devices used. */
  private bundle: UploadedBundle | undefined;
  private readonly spent = new Set<number>();
  /** Pre-key ids the bot uploaded a second time with another key (a restored old session reusing ids). */
  readonly reusedPreKeyIds: number[] = [];
  private readonly refusing = new Set<string>();
  private readonly changeWatchers = new Set<() => void>();

  /** A person with a phone (and a LID, as WhatsApp gives everyone now); their device is made on first use. */
  person(user: string, lid?: string): WireDevice {
    const found = this.devices.find((d) => d.user === user);
    if (found) return found;
    const device = new WireDevice(user, lid);
    this.devices.push(device);
    return device;
  }

  /** A group with these members (and the bot). */
  group(id: string, subject: string, members: WireDevice[]): WireGroup {
    const group = { id, subject, members };
    this.groups.set(id, group);
    return group;
  }

  /** From now on the server answers the bot's messages to `person` with a 463 nack (no privacy token). */
  refuse463(person: WireDevice): void {
    this.refusing.add(person.user);
  }

  private deviceOf(jid: string): WireDevice | undefined {
    const user = userOf(jid);
    if (user === this.user || user === this.lidUser) return this.person(this.user, this.lidUser);
    return this.devices.find((d) => d.user === user || d.lid === user);
  }

  /** @internal the bot's pre-key upload. */
  takeUpload(node: BinaryNode): void {
    const skey = getBinaryNodeChild(node, 'skey')!;
    const preKeys = this.bundle?.preKeys ?? new Map<number, Uint8Array>();
    for (const key of getBinaryNodeChildren(getBinaryNodeChild(node, 'list'), 'key')) {
      const id = beUInt(getBinaryNodeChildBuffer(key, 'id'));
      const value = getBinaryNodeChildBuffer(key, 'value')!;
      const before = preKeys.get(id);
      if (before && Buffer.compare(Buffer.from(before), Buffer.from(value)) !== 0) this.reusedPreKeyIds.push(id);
      preKeys.set(id, value);
    }
    this.bundle = {
      registrationId: beUInt(getBinaryNodeChildBuffer(node, 'registration')),
      identity: getBinaryNodeChildBuffer(node, 'identity')!,
      signedPreKey: { keyId: beUInt(getBinaryNodeChildBuffer(skey, 'id')), publicKey: getBinaryNodeChildBuffer(skey, 'value')!, signature: getBinaryNodeChildBuffer(skey, 'signature')! },
      preKeys,
    };
    this.changed();
  }

  /**
   * Holds the pre-keys the bot uploaded to `other` (the same account earlier): a stored session logging in here finds
   * its keys on the server, as it does on WhatsApp after a restart, and uploads none again.
   */
  holdPreKeysOf(other: WhatsAppWireServer): void {
    this.bundle = other.bundle && { ...other.bundle, preKeys: new Map(other.bundle.preKeys) };
  }

  /** How many one-time pre-keys of the bot are left on the server (WhatsApp asks for more when low). */
  botPreKeysLeft(): number {
    return [...(this.bundle?.preKeys.keys() ?? [])].filter((id) => !this.spent.has(id)).length;
  }

  /** @internal a key fetch: each person's bundle, made on first use. */
  async bundles(jids: string[]): Promise<BinaryNode[]> {
    return Promise.all(jids.map((jid) => (this.deviceOf(jid) ?? this.person(userOf(jid))).bundleNode(jid)));
  }

  /** @internal a device-list (and LID) query: everyone has one device, their phone (0). */
  usync(query: BinaryNode): BinaryNode {
    const users = getBinaryNodeChildren(getBinaryNodeChild(query, 'list'), 'user').map((u) => u.attrs.jid);
    return {
      tag: 'usync',
      attrs: { index: '0', last: 'true', sid: query.attrs.sid ?? 'wire' },
      content: [
        {
          tag: 'list',
          attrs: {},
          content: users.map((jid): BinaryNode => {
            const lid = this.deviceOf(jid)?.lidJid;
            return {
              tag: 'user',
              attrs: { jid },
              content: [
                { tag: 'devices', attrs: {}, content: [{ tag: 'device-list', attrs: {}, content: [{ tag: 'device', attrs: { id: '0' } }] }] },
                ...(lid && jid.endsWith('@s.whatsapp.net') ? [{ tag: 'lid', attrs: { val: lid } } as BinaryNode] : []),
              ],
            };
          }),
        },
      ],
    };
  }

  /** @internal a message the bot sent: each copy decrypted by its recipient device and recorded, then acked (or nacked). */
  async fromBot(node: BinaryNode, session: Session): Promise<void> {
    const chat = node.attrs.to;
    const group = chat.endsWith('@g.us');
    const copies = getBinaryNodeChildren(getBinaryNodeChild(node, 'participants'), 'to');
    const readers: WireDevice[] = [];
    for (const to of copies) {
      const device = this.deviceOf(to.attrs.jid);
      const enc = getBinaryNodeChild(to, 'enc');
      if (!device || !enc) continue;
      const message = await device.decrypt(enc.attrs.type as 'pkmsg' | 'msg', enc.content as Uint8Array);
      if (group && message.senderKeyDistributionMessage) {
        await device.takeSenderKey(message.senderKeyDistributionMessage);
        readers.push(device);
      }
      if (!group) this.sent.push({ chat, device: to.attrs.jid, id: node.attrs.id, message: message.deviceSentMessage?.message ? proto.Message.create(message.deviceSentMessage.message) : message });
    }
    const skmsg = getBinaryNodeChildren(node, 'enc').find((e) => e.attrs.type === 'skmsg');
    if (group && skmsg) {
      const members = this.groups.get(chat)?.members ?? [];
      for (const device of new Set([...readers, ...members])) {
        const message = await device.decryptGroup(chat, skmsg.content as Uint8Array).catch(() => undefined);
        if (message) this.sent.push({ chat, device: device.senderJid, id: node.attrs.id, message });
      }
    }
    const refused = !group && this.refusing.has(this.deviceOf(chat)?.user ?? '');
    session.send({ tag: 'ack', attrs: { class: 'message', id: node.attrs.id, from: chat, t: now(), ...(refused ? { error: '463' } : {}) } });
    this.changed();
  }

  /** @internal a receipt the bot sent. */
  receiptFromBot(node: BinaryNode): void {
    const more = getBinaryNodeChildren(getBinaryNodeChild(node, 'list'), 'item').map((i) => i.attrs.id);
    this.receipts.push({ ids: [node.attrs.id, ...more], to: node.attrs.to, participant: node.attrs.participant, type: node.attrs.type });
    this.changed();
  }

  /**
   * A person's message reaches the bot, Signal-encrypted by their device (a pre-key message the first time, from
   * one of the bot's uploaded one-time pre-keys). `ownTo`: `from` is the account's own phone
   * (`person(user, lidUser)`) and the message is one the owner typed there to that person. In a group it is a sender-key message with the key's distribution
   * beside it, as WhatsApp sends it. Resolves with the message id.
   */
  async deliver(from: WireDevice, message: proto.IMessage, o: { id?: string; group?: string; pushName?: string; via?: 'pn' | 'lid'; ownTo?: WireDevice } = {}): Promise<string> {
    if (!(await from.hasSession())) {
      const bundle = await this.waitFor(() => this.bundle, 'the bot\'s pre-key upload');
      const keyId = [...bundle.preKeys.keys()].find((id) => !this.spent.has(id));
      if (keyId === undefined) throw new Error('the bot has no one-time pre-key left on the server');
      this.spent.add(keyId);
      await from.startSession(bundle, keyId);
    }
    const id = o.id ?? `3EB0${Math.random().toString(16).slice(2, 14).toUpperCase()}`;
    const base = { id, t: now(), type: message.reactionMessage ? 'reaction' : message.pollUpdateMessage ? 'poll' : 'text', notify: o.pushName ?? 'Wire Person' };
    let node: BinaryNode;
    if (o.group) {
      const { senderKeyDistributionMessage, ciphertext } = await from.encryptGroup(o.group, message);
      const carrier = await from.encrypt({ senderKeyDistributionMessage: { groupId: o.group, axolotlSenderKeyDistributionMessage: senderKeyDistributionMessage } });
      node = {
        tag: 'message',
        attrs: { ...base, from: o.group, participant: from.senderJid, addressing_mode: from.lid ? 'lid' : 'pn', ...(from.lid ? { participant_pn: from.phoneJid } : {}) },
        content: [
          { tag: 'enc', attrs: { v: '2', type: carrier.type }, content: carrier.ciphertext },
          { tag: 'enc', attrs: { v: '2', type: 'skmsg' }, content: ciphertext },
        ],
      };
    } else if (o.ownTo) {
      // The account's own phone wrote to `ownTo` (the owner typing on the phone): WhatsApp relays it to the linked
      // device from the account, with the chat as `recipient` and the message wrapped in a deviceSentMessage. No alt
      // attribute: the form that has no LID beside the contact's phone.
      const enc = await from.encrypt({ deviceSentMessage: { destinationJid: o.ownTo.phoneJid, message } });
      node = { tag: 'message', attrs: { ...base, from: from.phoneJid, recipient: o.ownTo.phoneJid }, content: [{ tag: 'enc', attrs: { v: '2', type: enc.type }, content: enc.ciphertext }] };
    } else {
      const enc = await from.encrypt(message);
      const byLid = o.via === 'lid' && from.lidJid;
      const attrs: Record<string, string> = byLid
        ? { from: from.lidJid!, sender_pn: from.phoneJid, addressing_mode: 'lid' }
        : { from: from.phoneJid, ...(from.lidJid ? { sender_lid: from.lidJid } : {}) };
      node = { tag: 'message', attrs: { ...base, ...attrs }, content: [{ tag: 'enc', attrs: { v: '2', type: enc.type }, content: enc.ciphertext }] };
    }
    this.current!.send(node);
    return id;
  }

  /** Resolves with the first copy of a bot message matching `match` (waiting for it). */
  waitForSent(match: (send: BotSend) => boolean, timeoutMs = 20_000): Promise<BotSend> {
    return this.waitFor(() => this.sent.find(match), 'a matching message from the bot', timeoutMs);
  }

  /** Resolves with `find()`'s first defined answer, checked now and after each message, receipt or upload. */
  waitFor<T>(find: () => T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.changeWatchers.delete(check);
        reject(new Error(`timed out waiting for ${what}; the bot sent: ${JSON.stringify(this.sent.map((s) => ({ chat: s.chat, device: s.device, message: s.message })))}`));
      }, timeoutMs);
      const check = () => {
        const found = find();
        if (found === undefined) return;
        this.changeWatchers.delete(check);
        clearTimeout(timer);
        resolve(found);
      };
      this.changeWatchers.add(check);
      check();
    });
  }

  private changed(): void {
    for (const check of [...this.changeWatchers]) check();
  }

  async stop(): Promise<void> {
    this.mediaAgent.destroy();
    this.media.closeAllConnections();
    await new Promise<void>((resolve) => this.media.close(() => resolve()));
    for (const client of this.wss.clients) client.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}
