import type { AddressInfo } from 'node:net';
import {
  aesDecryptGCM,
  aesEncryptGCM,
  Curve,
  decodeBinaryNode,
  encodeBinaryNode,
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
        this.node(await this.noise.decode(frame));
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

  private node(node: BinaryNode): void {
    if (node.tag !== 'iq' || node.attrs.type === 'result' || node.attrs.type === 'error') {
      // pair-device-sign (the client's answer to pair-success): WhatsApp then asks for a restart.
      if (node.tag === 'iq' && childOf(node)?.tag === 'pair-device-sign') this.send(closing(515));
      return;
    }
    const attrs = { from: 's.whatsapp.net', id: node.attrs.id, type: 'result', t: now() };
    const child = childOf(node);
    if (node.attrs.xmlns === 'encrypt' && child?.tag === 'count') return this.send({ tag: 'iq', attrs, content: [{ tag: 'count', attrs: { value: '50' } }] });
    this.send({ tag: 'iq', attrs });
  }

  /** The phone scans `qr`: the server sends pair-success signed as a primary device would. */
  pair(qr: string, user: string, lid: string): void {
    const [, , identityB64, advB64] = qr.split('#')[1].split(',');
    const account = Curve.generateKeyPair();
    const details = proto.ADVDeviceIdentity.encode({ rawId: 1, timestamp: Math.floor(Date.now() / 1000), keyIndex: 1 }).finish();
    const accountSignature = Curve.sign(account.private, Buffer.concat([WA_ADV_ACCOUNT_SIG_PREFIX, details, Buffer.from(identityB64, 'base64')]));
    const signed = proto.ADVSignedDeviceIdentity.encode({ details, accountSignatureKey: account.public, accountSignature }).finish();
    const hmac = hmacSign(Buffer.from(signed), Buffer.from(advB64, 'base64'));
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
}

/**
 * A small WhatsApp Web wire-level server on 127.0.0.1 for what crabline does not do: QR pairing (pair-device, then
 * pair-success as the phone's scan, then 515) and the close codes (401 logged out, 405 client too old, 440
 * replaced, 515 restart required), sent the way WhatsApp sends them. It speaks the real Noise handshake and Baileys'
 * own binary-node codec, answers every query with an empty result, and records each connection.
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

  private constructor(private readonly wss: WebSocketServer) {
    wss.on('connection', (ws) => this.sessions.push(new Session(ws, this)));
  }

  static async start(): Promise<WhatsAppWireServer> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => wss.once('listening', resolve));
    return new WhatsAppWireServer(wss);
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

  /** The phone scans this QR on the latest connection. */
  scan(qr: string): void {
    this.current!.pair(qr, this.user, this.lidUser);
  }

  /** Ends the latest connection with a close code, as WhatsApp does. */
  end(code: CloseCode): void {
    this.current!.end(code);
  }

  async stop(): Promise<void> {
    for (const client of this.wss.clients) client.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}
