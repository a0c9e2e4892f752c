import { createCipheriv, createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { getMediaKeys } from '@whiskeysockets/baileys';

/** The media message types WhatsApp encrypts with their own keys. */
export type WhatsAppMediaType = 'audio' | 'image' | 'video' | 'document' | 'sticker';

/** The fields of a media message (`documentMessage`, `audioMessage`, …) that point at one served file. */
export interface ServedMediaFields {
  url: string;
  directPath: string;
  mediaKey: Buffer;
  /** The true plain size (a test claiming another puts its own `fileLength` after these fields). */
  fileLength: number;
}

interface Entry {
  type: WhatsAppMediaType;
  mediaKey: Buffer;
  /** The plain bytes, or how many to make up on the fly (never held in memory). */
  content: Buffer | { generated: number };
}

const CHUNK = 64 * 1024;

/**
 * WhatsApp's media server on 127.0.0.1 as the bot's real download path meets it: each file encrypted with its own
 * media key as WhatsApp does (AES-256-CBC, a 10-byte HMAC-SHA256 MAC after it), served over HTTP at a path the message
 * names. `generated` files are made up while they are read, so a test can serve 600 MB without holding them: how much
 * was actually sent (`sentBytes`) shows where the reader stopped. A path it does not hold answers 410, as expired
 * media does. Give the bot `transport: media.transport` so its downloads may reach this loopback origin.
 *
 * @example
 * const media = await WhatsAppMediaServer.start();
 * const bot = await startFakeSocketBot(plugin, { transport: media.transport });
 * await bot.deliver(waMessage({ documentMessage: { ...media.serve('document', pdfBytes), mimetype: 'application/pdf', fileLength: 1000 } }));
 */
export class WhatsAppMediaServer {
  private readonly files = new Map<string, Entry>();
  private sent = 0;
  private seq = 0;
  /** Called for each chunk sent, with the bytes sent so far (a test samples memory here). */
  onChunk: ((sentBytes: number) => void) | undefined;

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<WhatsAppMediaServer> {
    const server = http.createServer();
    const media = new WhatsAppMediaServer(server);
    server.on('request', (req, res) => media.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return media;
  }

  /** `http://127.0.0.1:<port>` */
  get origin(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The WhatsApp transport's options that let its downloads reach this server (a test seam, never a setting). */
  get transport(): { mediaOriginsForTests: string[] } {
    return { mediaOriginsForTests: [this.origin] };
  }

  /** Encrypted bytes sent so far, over all files. */
  get sentBytes(): number {
    return this.sent;
  }

  /** Serves `content` (bytes, or `{ generated: n }` made-up bytes) as a new file; returns the message fields naming it. */
  serve(type: WhatsAppMediaType, content: Buffer | { generated: number }): ServedMediaFields {
    const directPath = `/v/t62.7119-24/${++this.seq}_${randomBytes(6).toString('hex')}.enc`;
    const mediaKey = randomBytes(32);
    this.files.set(directPath, { type, mediaKey, content });
    return { url: `${this.origin}${directPath}`, directPath, mediaKey, fileLength: Buffer.isBuffer(content) ? content.length : content.generated };
  }

  /** Forgets every file: later downloads answer 410, as WhatsApp does for expired media. */
  clear(): void {
    this.files.clear();
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const entry = this.files.get(new URL(req.url ?? '/', this.origin).pathname);
    if (!entry) {
      res.writeHead(410).end();
      return;
    }
    void this.encrypted(entry).then((body) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      body.on('data', (chunk: Buffer) => {
        this.sent += chunk.length;
        this.onChunk?.(this.sent);
      });
      body.pipe(res);
      // The reader hung up: stop making bytes.
      res.on('close', () => body.destroy());
    });
  }

  /** The file as WhatsApp stores it: ciphertext, then the MAC; made while read (backpressure holds the making). */
  private async encrypted(entry: Entry): Promise<Readable> {
    const { cipherKey, iv, macKey } = (await getMediaKeys(entry.mediaKey, entry.type)) as { cipherKey: Buffer; iv: Buffer; macKey: Buffer };
    const cipher = createCipheriv('aes-256-cbc', cipherKey, iv);
    const mac = createHmac('sha256', macKey).update(iv);
    const content = entry.content;
    const total = Buffer.isBuffer(content) ? content.length : content.generated;
    const filler = Buffer.alloc(CHUNK, 'made-up media bytes ');
    let offset = 0;
    let ended = false;
    return new Readable({
      read() {
        if (ended) return;
        if (offset >= total) {
          ended = true;
          const last = cipher.final();
          mac.update(last);
          this.push(Buffer.concat([last, mac.digest().subarray(0, 10)]));
          this.push(null);
          return;
        }
        const size = Math.min(CHUNK, total - offset);
        const plain = Buffer.isBuffer(content) ? content.subarray(offset, offset + size) : filler.subarray(0, size);
        offset += size;
        const out = cipher.update(plain);
        mac.update(out);
        this.push(out);
      },
    });
  }
}
