import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { BufferJSON, initAuthCreds } from '@whiskeysockets/baileys';
import { createApp, type App } from '../app.js';
import { isPlugin } from '../../core/kernel/plugin/contract.js';
import { pluginErrors } from '../../core/kernel/plugin/errors.js';
import type { Plugin } from '../../core/kernel/plugin/spec.js';
import type { WhatsAppTransport } from '../../core/adapters/whatsapp/whatsapp-transport.js';
import { FakeModel } from './fake-model.js';
import { whatsAppTransportOf } from './whatsapp-transport-of.js';
import { configOf, type TestBotOptions, type TestBotPlugins, type DefinedPlugin } from './test-kit.js';

/**
 * The test kit over WhatsApp (package subpath `wa-assistant-bot/testing/whatsapp`): your plugin in the real bot, on
 * the real WhatsApp transport and the real Baileys socket, connected through `WA_WEBSOCKET_URL` to a WhatsApp Web
 * server on 127.0.0.1 (`@openclaw/crabline`, a dev dependency: Noise handshake, Signal-encrypted messages it decrypts
 * and records). People's messages are injected at the server; what the bot sends is read back from it. No phone, no
 * network. Slower than `startTestBot` (a server process and a real session): use it for what only WhatsApp shows.
 * `startFakeSocketBot` (below) is the same bot on a fake Baileys socket: no server, real `proto` objects in and out.
 *
 * @example
 * import { startWhatsAppTestBot } from 'wa-assistant-bot/testing/whatsapp';
 * const bot = await startWhatsAppTestBot(myPlugin);
 * expect(await bot.send('.hello')).to.equal('hello from my plugin');
 * await bot.stop();
 */

/** A message the bot sent, as the WhatsApp server decrypted and recorded it. */
export interface WireSend {
  /** The chat it was sent to (`<user>@s.whatsapp.net`, `<user>@lid` or a group). */
  to: string;
  id: string;
  /** Its text, when it had one. */
  text?: string;
}

/** A person's message arriving at the bot over WhatsApp. */
export interface WireInbound {
  /** The text (a command, or free text for the model). */
  text: string;
  /** The sender (default `15550000001@s.whatsapp.net`). */
  from?: string;
  /** The chat, when not the sender's private chat (a group `…@g.us`). */
  chat?: string;
  /** The message id (default: the server makes one). */
  id?: string;
  pushName?: string;
}

export interface WhatsAppTestBot {
  /** Sends a person's text and resolves with the text of the bot's next message to that chat. */
  send(message: string | WireInbound, timeoutMs?: number): Promise<string>;
  /** Delivers a person's message to the bot; resolves with its message id. */
  inbound(message: string | WireInbound): Promise<string>;
  /** Every message the bot sent so far. */
  sends(): Promise<WireSend[]>;
  /** Resolves with the first sent message matching `match` (waiting for it); rejects after `timeoutMs`. */
  waitForSend(match: (send: WireSend) => boolean, timeoutMs?: number): Promise<WireSend>;
  /** The bot account's own id on the server. */
  readonly selfJid: string;
  readonly app: App;
  readonly transport: WhatsAppTransport;
  readonly model: FakeModel;
  /** The folder the bot runs in (its data, the session included, in `data/`). */
  readonly dir: string;
  /** Log lines written so far, as JSON objects. */
  logs(): Array<Record<string, any>>;
  /** Stops the bot, the server and the fake model, and removes the folder the kit made. */
  stop(): Promise<void>;
}

export type WhatsAppTestBotOptions = Omit<TestBotOptions, 'transport' | 'ownIds'>;

/** The sender when a test names none. */
export const DEFAULT_SENDER = '15550000001@s.whatsapp.net';

/**
 * Starts a bot with your plugin(s) (one, a list, or `'bundled'`, as `startTestBot`) over WhatsApp: a WhatsApp Web
 * server on 127.0.0.1, a session linked to it in the bot's data folder, the real transport connected to it.
 * Resolves once WhatsApp is open.
 */
export async function startWhatsAppTestBot(plugins: TestBotPlugins, options: WhatsAppTestBotOptions = {}): Promise<WhatsAppTestBot> {
  const given = plugins === 'bundled' ? undefined : Array.isArray(plugins) ? [...(plugins as Array<Plugin | DefinedPlugin>)] : [plugins as Plugin | DefinedPlugin];
  for (const plugin of given ?? []) {
    if (!isPlugin(plugin)) throw pluginErrors.notAPlugin('a plugin given to startWhatsAppTestBot', 'was not made by definePlugin of this contract');
  }
  const checked = given as Plugin[] | undefined;
  const dir = options.dir ?? (await mkdtemp(path.join(os.tmpdir(), `plugin-${checked?.[0]?.name ?? 'bundled'}-wa-`)));
  const model = options.model instanceof FakeModel ? options.model : await FakeModel.start(options.model);
  let server: WhatsAppServer | undefined;
  let app: App | undefined;
  const release = async () => {
    await app?.stop().catch(() => undefined);
    await server?.stop();
    if (!(options.model instanceof FakeModel)) await model.close();
    if (!options.dir) await rm(dir, { recursive: true, force: true });
  };
  try {
    server = await WhatsAppServer.start(path.join(dir, 'whatsapp-server'));
    await server.seedSession(path.join(dir, 'data', 'session_auth'));
    await writeFile(path.join(dir, 'config.json'), JSON.stringify(configOf(checked, options), null, 2));
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', API_KEY: 'test-kit-key', BASE_URL: model.url, MODEL: 'test-model', ...(options.env ?? {}), WA_WEBSOCKET_URL: server.socketUrl };
    const lines: string[] = [];
    const sink = new PassThrough();
    sink.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
    app = await createApp({ cwd: dir, env, plugins: checked, logDestination: sink, logLevel: 'debug', skipHealthProbe: !options.healthProbe });
    let opened!: () => void;
    const open = new Promise<void>((resolve) => (opened = resolve));
    const transport = whatsAppTransportOf(app, { onLinked: () => opened() });
    await app.connect(transport);
    await withTimeout(open, 30_000, () => `WhatsApp did not open within 30 s; the log:\n${lines.join('\n')}`);
    const wa = server;
    const running = app;
    const inbound = (message: string | WireInbound) => wa.inbound(typeof message === 'string' ? { text: message } : message);
    return {
      inbound,
      async send(message, timeoutMs = 20_000) {
        const before = new Set((await wa.sends()).map((s) => s.id));
        const m = typeof message === 'string' ? { text: message } : message;
        await inbound(m);
        const chat = userOf(m.chat ?? m.from ?? DEFAULT_SENDER);
        const reply = await wa.waitForSend((s) => !before.has(s.id) && s.text !== undefined && (userOf(s.to) === chat || (!m.chat && s.to.endsWith('@lid'))), timeoutMs);
        return reply.text!;
      },
      sends: () => wa.sends(),
      waitForSend: (match, timeoutMs) => wa.waitForSend(match, timeoutMs),
      selfJid: wa.selfJid,
      app: running,
      transport,
      model,
      dir,
      logs: () => lines.map((l) => JSON.parse(l) as Record<string, any>),
      stop: release,
    };
  } catch (err) {
    await release();
    throw err;
  }
}


const userOf = (jid: string) => jid.split('@')[0].split(':')[0];

async function withTimeout<T>(work: Promise<T>, ms: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message())), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** What `crabline serve whatsapp --ready-file` writes once it listens. */
interface ReadyFile {
  adminToken: string;
  selfJid: string;
  recorderPath: string;
  endpoints: { adminInboundUrl: string; baileysWebSocketUrl: string };
}

/**
 * `@openclaw/crabline`'s WhatsApp Web server on 127.0.0.1 in its own process (as its CLI runs it): Noise handshake,
 * pre-key and usync queries, Signal-encrypted sends it decrypts and records, an admin endpoint that injects people's
 * messages. It has no QR pairing: `seedSession` writes a session linked to it.
 */
export class WhatsAppServer {
  private constructor(private readonly child: ChildProcess, private readonly ready: ReadyFile) {}

  static async start(dir: string): Promise<WhatsAppServer> {
    await mkdir(dir, { recursive: true });
    const readyFile = path.join(dir, 'ready.json');
    let bin: string;
    try {
      const entry = fileURLToPath(import.meta.resolve('@openclaw/crabline'));
      bin = path.join(entry.slice(0, entry.lastIndexOf(`${path.sep}dist${path.sep}`)), 'dist', 'src', 'bin', 'crabline.js');
    } catch {
      throw new Error('the WhatsApp test server is not installed: npm install --save-dev @openclaw/crabline');
    }
    const child = spawn(process.execPath, [bin, '--json', 'serve', 'whatsapp', '--ready-file', readyFile], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (d) => (stderr += d));
    const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`the WhatsApp test server exited (${code}) before it was ready:\n${stderr}`))));
    const readyNow = (async () => {
      while (!existsSync(readyFile)) await new Promise((r) => setTimeout(r, 50));
      return JSON.parse(await readFile(readyFile, 'utf8')) as ReadyFile;
    })();
    return new WhatsAppServer(child, await Promise.race([readyNow, exited]));
  }

  /** The URL for WA_WEBSOCKET_URL (it carries the server's access token). */
  get socketUrl(): string {
    return this.ready.endpoints.baileysWebSocketUrl;
  }

  /** The bot account's own jid on this server. */
  get selfJid(): string {
    return this.ready.selfJid;
  }

  /** Writes a session linked to this server into `authDir` (the server accepts any login). */
  async seedSession(authDir: string): Promise<void> {
    await mkdir(authDir, { recursive: true });
    const user = this.selfJid.split('@')[0];
    const creds = { ...initAuthCreds(), me: { id: `${user}:1@s.whatsapp.net`, name: 'Assistant' }, registered: true };
    await writeFile(path.join(authDir, 'creds.json'), JSON.stringify(creds, BufferJSON.replacer));
  }

  /** A person's message arriving at the bot: text, or a voice note (Ogg/Opus bytes). Resolves with its id. */
  async inbound(message: { from?: string; chat?: string; text?: string; voice?: Buffer; id?: string; pushName?: string }): Promise<string> {
    const from = message.from ?? DEFAULT_SENDER;
    const body = {
      chatJid: message.chat ?? from,
      senderJid: from,
      ...(message.text !== undefined ? { text: message.text } : {}),
      ...(message.voice ? { audio: { contentBase64: message.voice.toString('base64'), mimeType: 'audio/ogg; codecs=opus', ptt: true } } : {}),
      ...(message.id ? { messageId: message.id } : {}),
      pushName: message.pushName ?? 'Test User',
    };
    const res = await fetch(this.ready.endpoints.adminInboundUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-crabline-admin-token': this.ready.adminToken }, body: JSON.stringify(body) });
    const answer = await res.text();
    if (!res.ok) throw new Error(`the WhatsApp test server refused the inbound message (${res.status}): ${answer}`);
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
      if (body?.key) sends.push({ to: body.key.remoteJid, id: body.key.id, text: body.message?.conversation ?? body.message?.extendedTextMessage?.text });
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
      if (Date.now() > until) throw new Error(`no matching message from the bot within ${timeoutMs} ms; sent so far: ${JSON.stringify(await this.sends())}`);
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

export { whatsAppTransportOf };
// The same bot on the fake Baileys socket (no server process): real proto messages in, what is sent as Baileys builds it.
export { linkBot, startFakeSocketBot, type FakeSocketBot, type FakeSocketBotOptions, type LinkedBot, type LinkOptions } from './fake-socket-bot.js';
export { BOT_LID, BOT_ME, BOT_PHONE, DisconnectReason, FakeBaileysSocket, FakeSocketFactory, GROUP, isSentText, mediaServedById, sentPoll, sentText, waMessage, waPollVote, waText, type BuildOptions, type SentRecord } from './fake-baileys-socket.js';
/** Baileys' message types, to read what the bot sent (`proto.Message.encode`, enums) without a Baileys import of your own. */
export { proto } from '@whiskeysockets/baileys';
export { WhatsAppMediaServer, type ServedMediaFields, type WhatsAppMediaType } from './whatsapp-media-server.js';
