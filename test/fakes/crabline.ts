import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BufferJSON, initAuthCreds } from '@whiskeysockets/baileys';
import { ROOT } from '../helpers/test-app.js';

/** What `crabline serve whatsapp --ready-file` writes once it listens. */
interface ReadyFile {
  adminToken: string;
  selfJid: string;
  recorderPath: string;
  endpoints: { adminInboundUrl: string; baileysWebSocketUrl: string };
}

/** A message the client (the bot) sent, as the server decrypted and recorded it. */
export interface WireSend {
  /** Where the message node was addressed (`<user>@s.whatsapp.net` or `<user>@lid`). */
  to: string;
  id: string;
  /** The text, when the server could read one (conversation / extended text). */
  text?: string;
}

/**
 * `@openclaw/crabline`'s WhatsApp Web wire-level server on 127.0.0.1, run as its own process (as its CLI runs it):
 * Noise handshake, pre-key and usync queries, Signal-encrypted sends it decrypts and records, and an admin endpoint
 * that injects inbound text and voice notes (with real media encryption). It has no QR pairing: `seedSession` writes
 * a session "linked" to it.
 *
 * @example
 * const wa = await CrablineWhatsApp.start(dir);
 * await wa.inbound({ from: '15551234567@s.whatsapp.net', text: 'hi' });
 * await wa.waitForSend((s) => s.text === 'hi back');
 */
export class CrablineWhatsApp {
  private constructor(private readonly child: ChildProcess, private readonly ready: ReadyFile) {}

  static async start(dir: string): Promise<CrablineWhatsApp> {
    await mkdir(dir, { recursive: true });
    const readyFile = path.join(dir, 'ready.json');
    const bin = path.join(ROOT, 'node_modules', '@openclaw', 'crabline', 'dist', 'src', 'bin', 'crabline.js');
    const child = spawn(process.execPath, [bin, '--json', 'serve', 'whatsapp', '--ready-file', readyFile], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (d) => (stderr += d));
    const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`crabline exited (${code}) before it was ready:\n${stderr}`))));
    const readyNow = (async () => {
      while (!existsSync(readyFile)) await new Promise((r) => setTimeout(r, 50));
      return JSON.parse(await readFile(readyFile, 'utf8')) as ReadyFile;
    })();
    const ready = await Promise.race([readyNow, exited]);
    return new CrablineWhatsApp(child, ready);
  }

  /** The URL for WA_WEBSOCKET_URL (carries the server's access token). */
  get socketUrl(): string {
    return this.ready.endpoints.baileysWebSocketUrl;
  }

  /** The bot account's own jid on this server. */
  get selfJid(): string {
    return this.ready.selfJid;
  }

  /**
   * Writes a session linked to this server into `authDir` (the server accepts any login; the bot's LID comes from its
   * `success` node).
   */
  async seedSession(authDir: string): Promise<void> {
    await mkdir(authDir, { recursive: true });
    const user = this.selfJid.split('@')[0];
    const creds = { ...initAuthCreds(), me: { id: `${user}:1@s.whatsapp.net`, name: 'Assistant' }, registered: true };
    await writeFile(path.join(authDir, 'creds.json'), JSON.stringify(creds, BufferJSON.replacer));
  }

  /** A person's message arriving at the bot: text, or a voice note (Ogg/Opus bytes). `chat` defaults to `from`. */
  async inbound(message: { from: string; chat?: string; text?: string; voice?: Buffer; id?: string; pushName?: string }): Promise<string> {
    const body = {
      chatJid: message.chat ?? message.from,
      senderJid: message.from,
      ...(message.text !== undefined ? { text: message.text } : {}),
      ...(message.voice ? { audio: { contentBase64: message.voice.toString('base64'), mimeType: 'audio/ogg; codecs=opus', ptt: true } } : {}),
      ...(message.id ? { messageId: message.id } : {}),
      pushName: message.pushName ?? 'Test User',
    };
    const res = await fetch(this.ready.endpoints.adminInboundUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-crabline-admin-token': this.ready.adminToken }, body: JSON.stringify(body) });
    const answer = await res.text();
    if (!res.ok) throw new Error(`crabline refused the inbound message (${res.status}): ${answer}`);
    const parsed = JSON.parse(answer) as { messageId?: string; message?: { key?: { id?: string } }; id?: string };
    return parsed.messageId ?? parsed.message?.key?.id ?? parsed.id ?? '';
  }

  /** Every message the bot sent so far, decrypted where the server could. */
  async sends(): Promise<WireSend[]> {
    const text = await readFile(this.ready.recorderPath, 'utf8').catch(() => '');
    const sends: WireSend[] = [];
    for (const line of text.split('\n').filter(Boolean)) {
      const event = JSON.parse(line) as { accepted?: boolean; body?: any };
      if (!event.accepted) continue;
      const body = event.body;
      if (body?.key) sends.push({ to: body.key.remoteJid, id: body.key.id, text: body.message?.conversation });
      else if (body?.tag === 'message') sends.push({ to: body.attrs?.to, id: body.attrs?.id });
    }
    return sends;
  }

  /** Resolves with the first send matching `match` (polling the server's record); rejects after `timeoutMs`. */
  async waitForSend(match: (send: WireSend) => boolean, timeoutMs = 20_000): Promise<WireSend> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const found = (await this.sends()).find(match);
      if (found) return found;
      if (Date.now() > until) throw new Error(`no matching send within ${timeoutMs} ms; sent so far: ${JSON.stringify(await this.sends())}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Stops the server process and waits for it to be gone. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const gone = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await gone;
    clearTimeout(timer);
  }
}
