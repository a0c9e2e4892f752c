import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type { WAMessage } from '@whiskeysockets/baileys';
import { createApp, type App, type AppOptions } from '../app.js';
import { isPlugin } from '../../core/kernel/plugin/contract.js';
import { pluginErrors } from '../../core/kernel/plugin/errors.js';
import type { Plugin } from '../../core/kernel/plugin/spec.js';
import type { WhatsAppTransport } from '../../core/adapters/whatsapp/whatsapp-transport.js';
import type { WhatsAppTransportOptions } from '../../core/adapters/whatsapp/options.js';
import { FakeModel } from './fake-model.js';
import { configOf, type DefinedPlugin, type TestBotOptions } from './test-kit.js';
import { BOT_ME, BOT_PHONE, DisconnectReason, FakeSocketFactory, waText, type BuildOptions, type FakeBaileysSocket, type SentRecord } from './fake-baileys-socket.js';
import { whatsAppTransportOf } from './whatsapp-transport-of.js';

/** The real app over the real WhatsApp transport on a fake socket, linked (QR, pair, 515 restart, open) as `BOT_ME`. */
export interface LinkedBot {
  app: App;
  transport: WhatsAppTransport;
  sockets: FakeSocketFactory;
}

export interface LinkOptions {
  /** The folder the bot runs in, its config.json already written. */
  dir: string;
  /** Environment settings (PATH is added). */
  env: Record<string, string>;
  plugins: AppOptions['plugins'];
  /** The bot's logger (default: one writing to `logDestination`, or to nowhere). */
  logger?: AppOptions['logger'];
  logDestination?: AppOptions['logDestination'];
  logLevel?: AppOptions['logLevel'];
  /** Options of the WhatsApp transport to override, e.g. `download` (the media bytes of a received voice note). */
  transport?: Partial<WhatsAppTransportOptions>;
  /** How a turn's answers are spaced (default the product's: a group's answers 4 s apart); see `AppOptions.answerPacing`. */
  answerPacing?: AppOptions['answerPacing'];
  /** The pace of the bot's own messages instead of config.json's `sending`; see `AppOptions.sendPacing`. */
  sendPacing?: AppOptions['sendPacing'];
}

/**
 * Starts the app in `dir` with `plugins` and links it over a fake Baileys socket as a phone links it: a QR, the
 * pairing, WhatsApp's 515 "restart required", a second socket that opens as `BOT_ME`. The step below
 * `startFakeSocketBot`, for a test that writes its own folder and config.json.
 *
 * @example
 * const { app, sockets } = await linkBot({ dir, env, plugins: [pingPlugin] });
 * sockets.last.deliver([waText('.ping', { from: ALICE })]);
 */
export async function linkBot(options: LinkOptions): Promise<LinkedBot> {
  const app = await createApp({
    cwd: options.dir,
    env: { PATH: process.env.PATH ?? '', ...options.env },
    plugins: options.plugins,
    ...(options.logger ? { logger: options.logger } : { logDestination: options.logDestination ?? new PassThrough() }),
    ...(options.logLevel ? { logLevel: options.logLevel } : {}),
    skipHealthProbe: true,
    ...(options.answerPacing ? { answerPacing: options.answerPacing } : {}),
    ...(options.sendPacing ? { sendPacing: options.sendPacing } : {}),
  });
  try {
    const sockets = new FakeSocketFactory();
    // The transport as npm start makes it from the app's settings, on the fake socket instead of Baileys'.
    const transport = whatsAppTransportOf(app, {
      makeSocket: sockets.make,
      // No request to WhatsApp's web for its current version.
      fetchVersion: async () => ({ version: [2, 3000, 1000000001], isLatest: true }),
      ...options.transport,
    });
    await app.connect(transport);
    sockets.last.qr();
    sockets.last.paired({ id: BOT_ME.id });
    sockets.last.close(DisconnectReason.restartRequired);
    await sockets.waitForSockets(2);
    sockets.last.open(BOT_ME);
    return { app, transport, sockets };
  } catch (err) {
    await app.stop().catch(() => undefined);
    throw err;
  }
}

export interface FakeSocketBotOptions extends Pick<TestBotOptions, 'options' | 'env' | 'model' | 'dir' | 'enableGiven' | 'sendPacing'> {
  /** Other config.json fields (owners, access, groups, …); `targetUserIds` defaults to the bot's phone (`BOT_PHONE`). */
  config?: Record<string, unknown>;
  /** Options of the WhatsApp transport to override, e.g. `download` (the bytes of a received photo or voice note). */
  transport?: Partial<WhatsAppTransportOptions>;
  /**
   * How a turn's answers are spaced (default the product's: a private chat's answers 1 s apart, a group's 4 s, with
   * jitter); `{ privateGapMs: 0, groupGapMs: 0, overallGapMs: 0, jitterMs: 0 }` sends them as soon as they are ready.
   */
  answerPacing?: AppOptions['answerPacing'];
}

/**
 * A bot running your plugin(s) on the real WhatsApp transport linked over the fake Baileys socket: what reaches the bot
 * is a real `proto.WebMessageInfo` (`waText`, `waMessage`, `waPollVote`), and what it sends is recorded as Baileys
 * builds it (`SentRecord.message`: a reactionMessage keyed to a message, a documentMessage with its mimetype and file
 * name, …). Quicker than `startWhatsAppTestBot` (no server process) and closer to the proto objects.
 */
export interface FakeSocketBot {
  /** Sends a text as `from` (default a private chat of 6281200000001) and resolves with the texts the bot sent back. */
  send(text: string, from?: BuildOptions): Promise<string[]>;
  /** Delivers real WhatsApp messages and resolves, once the bot finished with them, with what it sent meanwhile. */
  deliver(...messages: WAMessage[]): Promise<SentRecord[]>;
  /** The socket the bot is linked on now (`sent`, `uploads`, `reads`, `close(code)` …). */
  readonly socket: FakeBaileysSocket;
  /** Every socket the transport made. */
  readonly sockets: FakeSocketFactory;
  readonly transport: WhatsAppTransport;
  readonly app: App;
  readonly model: FakeModel;
  /** The folder the bot runs in (its data in `data/` below it). */
  readonly dir: string;
  /** Log lines written so far, as JSON objects. */
  logs(): Array<Record<string, any>>;
  /** Stops the bot and the fake model it started, and removes the folder it made. */
  stop(): Promise<void>;
}

/**
 * Starts a bot with one plugin or several on the WhatsApp transport over the fake Baileys socket (see {@link FakeSocketBot}).
 *
 * @example
 * const bot = await startFakeSocketBot(myPlugin);
 * const [sent] = await bot.deliver(waText('.hello', { from: '6281200000001@s.whatsapp.net' }));
 * // sent.message is the proto.IMessage WhatsApp would carry
 * await bot.stop();
 */
export async function startFakeSocketBot(plugins: DefinedPlugin | ReadonlyArray<DefinedPlugin>, options: FakeSocketBotOptions = {}): Promise<FakeSocketBot> {
  const given = Array.isArray(plugins) ? [...(plugins as DefinedPlugin[])] : [plugins as DefinedPlugin];
  for (const plugin of given) {
    if (!isPlugin(plugin)) throw pluginErrors.notAPlugin('a plugin given to startFakeSocketBot', 'was not made by definePlugin of this contract');
  }
  const checked = given as unknown as Plugin[];
  const dir = options.dir ?? (await mkdtemp(path.join(os.tmpdir(), `plugin-wa-${checked[0]?.name ?? 'bot'}-`)));
  const model = options.model instanceof FakeModel ? options.model : await FakeModel.start(options.model);
  const release = async () => {
    if (!(options.model instanceof FakeModel)) await model.close();
    if (!options.dir) await rm(dir, { recursive: true, force: true });
  };
  try {
    const config = configOf(checked, { options: options.options, enableGiven: options.enableGiven, config: { targetUserIds: [BOT_PHONE], ...options.config } });
    await writeFile(path.join(dir, 'config.json'), JSON.stringify(config, null, 2));
    const lines: string[] = [];
    const sink = new PassThrough();
    sink.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
    const env = { API_KEY: 'test-kit-key', BASE_URL: model.url, MODEL: 'test-model', ...(options.env ?? {}) };
    const { app, transport, sockets } = await linkBot({ dir, env, plugins: checked, logDestination: sink, logLevel: 'debug', ...(options.transport ? { transport: options.transport } : {}), ...(options.sendPacing ? { sendPacing: options.sendPacing } : {}), ...(options.answerPacing ? { answerPacing: options.answerPacing } : {}) });
    let stopped = false;
    const deliver = async (...messages: WAMessage[]): Promise<SentRecord[]> => {
      const socket = sockets.last;
      const before = socket.sent.length;
      socket.deliver(messages);
      // The transport hands each message on after its own checks; the bot then answers it (and what that starts).
      await transport.idle();
      await app.bot.idle();
      await transport.idle();
      return socket.sent.slice(before);
    };
    return {
      deliver,
      async send(text, from = {}) {
        const sent = await deliver(waText(text, from));
        return sent.map((s) => (s.content as { text?: unknown }).text).filter((t): t is string => typeof t === 'string');
      },
      get socket() {
        return sockets.last;
      },
      sockets,
      transport,
      app,
      model,
      dir,
      logs: () => lines.map((l) => JSON.parse(l) as Record<string, any>),
      async stop() {
        if (stopped) return;
        stopped = true;
        try {
          await app.stop();
        } finally {
          await release();
        }
      },
    };
  } catch (err) {
    await release();
    throw err;
  }
}
