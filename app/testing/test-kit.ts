import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { install as installFakeTimers, type Clock as InstalledClock } from '@sinonjs/fake-timers';
import { createApp, type App, type AppOptions } from '../app.js';
import type { Plugin } from '../../core/kernel/plugin/spec.js';
import { isPlugin } from '../../core/kernel/plugin/contract.js';
import { pluginErrors } from '../../core/kernel/plugin/errors.js';
import { MemoryTransport, type BotAction, type PushInput } from '../../core/adapters/memory/memory-transport.js';
import { FakeAudio } from './fake-audio.js';
import { FakeModel, type ModelAnswer, type ModelRequest } from './fake-model.js';

export interface TestBotOptions {
  /** The (first) plugin's options in config.json (`enabled: true` is added). */
  options?: Record<string, unknown>;
  /**
   * Other config.json fields (prefix, owners, access, …). Its `plugins` section is merged with the kit's: every plugin
   * given is enabled, with what `plugins.<name>` says here and, for the first one, `options`.
   */
  config?: Record<string, unknown>;
  /** Extra environment settings (the environment is otherwise empty but for PATH and the fake model's). */
  env?: Record<string, string>;
  /**
   * How the fake chat model answers; default "model: <last text>". Return `{ tool, args }` to call a tool. Or a
   * `FakeModel` of your own (started once for many bots; the kit does not close it).
   */
  model?: ((request: ModelRequest) => ModelAnswer) | FakeModel;
  /**
   * A fake audio provider, for a plugin that needs `audio` (transcription, speech, the audio chat model): `true`
   * starts one (closed at the last stop), or give a `FakeAudio` of your own (the kit does not close it). The bot's
   * `AUDIO_BASE_URL` points at it and it has one audio key, `test-kit-audio-key`; `env` can set others
   * (`AUDIO_API_KEYS`, `AUDIO_MODEL`, …). Without it the bot has no audio key: `audio` is missing.
   */
  audio?: true | FakeAudio;
  /**
   * Run in this folder instead of a fresh temporary one, and keep it at `stop` — to start a bot over data you
   * prepared, or to look at the files after `stop`. The data folder is `<dir>/data`. `bot.restart()` is the short way
   * to restart over the same folder.
   */
  dir?: string;
  /** The bot's own WhatsApp ids: a group message mentioning one of them (or replying to the bot) is addressed to it. */
  ownIds?: string[];
  /** The memory transport to run on, such as a subclass that holds or records sends; default a new one. */
  transport?: MemoryTransport;
  /** Probe the gateway's root URL at start as `npm start` does (default off: the fake model is known to be up). */
  healthProbe?: boolean;
  /**
   * The pace of the messages the bot starts on its own instead of config.json's `sending` (whose fastest is one a
   * second): `{ perChatPerMinute: Infinity, globalPerMinute: Infinity, jitterMs: 0 }` sends them at once, in order.
   */
  sendPacing?: AppOptions['sendPacing'];
  /**
   * Default true: every given plugin gets `plugins.<name>.enabled: true` in config.json. False writes `config.plugins`
   * as given (and `options`, when given, as the first plugin's section), so a plugin config.json does not mention runs
   * as an owner's untouched install has it: on or off by its own `enabledByDefault`, with its option defaults.
   */
  enableGiven?: boolean;
}

/** What the first argument of `startTestBot` may be: one plugin, several, or `'bundled'` (see {@link startTestBot}). */
export type TestBotPlugins = Plugin | DefinedPlugin | ReadonlyArray<Plugin | DefinedPlugin> | 'bundled';

/**
 * A clock the test moves by hand (`@sinonjs/fake-timers`): `Date`, `setTimeout`, `setInterval` and their `clear…`
 * are faked from `bot.useClock()` until `restore()`, `bot.stop()` or `bot.restart()`.
 */
export interface TestClock {
  /** Moves the time on by `ms`, running every timer due on the way (and the promises they start) in order. */
  tick(ms: number): Promise<void>;
  /** The faked time, in milliseconds since the epoch. */
  now(): number;
  /** Gives the real timers back. */
  restore(): void;
}

/**
 * A bot running your plugin(s), in a temporary folder, on an in-memory transport, with a fake chat model on
 * 127.0.0.1: no phone and no network. `send` pushes a message and resolves with the texts the bot answered (Hubot
 * style).
 */
export interface TestBot {
  /** Sends a message (text, or a full message with media, group, sender…) and resolves with the texts sent back. */
  send(message: string | PushInput): Promise<string[]>;
  /** Sends a message and resolves with everything the bot did (texts, reactions, media, edits). */
  push(message: string | PushInput): Promise<BotAction[]>;
  /** Every text the bot has sent so far, in order (to `chatId` only, when given). */
  replies(chatId?: string): string[];
  /** The requests the fake chat model received (messages and offered tool names). */
  readonly model: FakeModel;
  /** The fake audio provider given as (or started for) the `audio` option; undefined without it. */
  readonly audio: FakeAudio | undefined;
  readonly app: App;
  /** The in-memory transport: every action so far (`actions`), polls and votes (`vote`), sent media. */
  readonly transport: MemoryTransport;
  /** The folder the bot runs in (its data is in `data/` below it). */
  readonly dir: string;
  /** Log lines written so far, as JSON objects (written by the bot's own logger, secrets redacted as in production). */
  logs(): Array<Record<string, any>>;
  /**
   * Resolves with what `check` returns once it holds, tried now and again after each action of the bot and each log
   * line: how a test waits for what the bot does on its own (a reminder firing, a background failure logged) without
   * sleeping or polling.
   * @example const note = await bot.until(() => bot.replies().find((r) => r.startsWith('⏰')));
   */
  until<T>(check: () => T | undefined | null | false): Promise<T>;
  /**
   * Fakes the clock from now on (see {@link TestClock}); `toFake` narrows what is faked (for example `['Date']` only,
   * to move the date while timers run as usual). Restored by `stop` and `restart`.
   */
  useClock(toFake?: Array<'Date' | 'setTimeout' | 'clearTimeout' | 'setInterval' | 'clearInterval'>): TestClock;
  /**
   * Stops this bot (its data flushed as at a real stop) and starts a new one over the same folder with the same
   * plugins, config, fake model and fake audio; `changes` replaces options for the new one (`config`, `options`, `env`, …).
   * `whileStopped` runs between the stop and the new start (time passing while the bot is down, files edited by hand).
   * The new bot owns the folder from then on: this one is done.
   */
  restart(changes?: Omit<TestBotOptions, 'dir' | 'model' | 'audio'>, whileStopped?: () => unknown): Promise<TestBot>;
  stop(): Promise<void>;
}

/**
 * A plugin made by `definePlugin` as the kit's parameter type: of this bot's entry, or of the plugin's own copy of
 * `@wa-assistant-bot/plugin-api`, whose declarations are another copy of the same types — and TypeScript tells the
 * classes of two copies apart (private fields), so asking for this bot's `Plugin` would refuse a plugin in its own
 * folder. Only the shape is asked here; the bot checks the definePlugin brand when the kit starts (PLUGIN_NOT_A_PLUGIN).
 */
export interface DefinedPlugin {
  readonly name: string;
  readonly description: string;
  setup(host: never): unknown;
}

/**
 * Starts a bot for a test with one plugin, several (`[remind, weather]`: every one enabled), or `'bundled'`: the
 * plugins the bot ships in `plugins/`, discovered as `npm start` does (each enabled or not as its defaults and
 * `config.plugins` say).
 *
 * @example
 * const bot = await startTestBot(dice, { options: { sides: 6 } });
 * const [answer] = await bot.send('.roll');
 * await bot.stop();
 */
export async function startTestBot(plugins: TestBotPlugins, options: TestBotOptions = {}): Promise<TestBot> {
  const given = plugins === 'bundled' ? undefined : Array.isArray(plugins) ? [...(plugins as Array<Plugin | DefinedPlugin>)] : [plugins as Plugin | DefinedPlugin];
  for (const plugin of given ?? []) {
    if (!isPlugin(plugin)) throw pluginErrors.notAPlugin('a plugin given to startTestBot', 'was not made by definePlugin of this contract');
  }
  const checked = given as Plugin[] | undefined;
  const dir = options.dir ?? (await mkdtemp(path.join(os.tmpdir(), `plugin-${checked?.[0]?.name ?? 'bundled'}-`)));
  const model = options.model instanceof FakeModel ? options.model : await FakeModel.start(options.model);
  const ownsModel = !(options.model instanceof FakeModel);
  const audio = options.audio === true ? await FakeAudio.start() : options.audio;
  return launch(checked, { ...options, model, audio }, { dir, ownsDir: !options.dir, ownsModel, ownsAudio: options.audio === true });
}

interface Ownership {
  dir: string;
  /** Remove the folder at stop (the kit made it). */
  ownsDir: boolean;
  /** Close the fake model at stop (the kit started it). */
  ownsModel: boolean;
  /** Close the fake audio provider at stop (the kit started it). */
  ownsAudio: boolean;
}

async function launch(plugins: Plugin[] | undefined, options: TestBotOptions & { model: FakeModel; audio: FakeAudio | undefined }, own: Ownership): Promise<TestBot> {
  const { dir } = own;
  const { model, audio } = options;
  const release = async () => {
    if (own.ownsModel) await model.close();
    if (own.ownsAudio) await audio?.close();
    if (own.ownsDir) await rm(dir, { recursive: true, force: true, maxRetries: 3 }); // retried: a file a late timer wrote must not fail the test's clean-up
  };
  try {
    await writeFile(path.join(dir, 'config.json'), JSON.stringify(configOf(plugins, options), null, 2));
    const audioEnv = audio ? { AUDIO_BASE_URL: `${audio.url}/v1`, AUDIO_API_KEYS: 'test-kit-audio-key' } : {};
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', API_KEY: 'test-kit-key', BASE_URL: model.url, MODEL: 'test-model', ...audioEnv, ...(options.env ?? {}) };
    const lines: string[] = [];
    const sink = new PassThrough();
    /** until() callers, told of each log line (actions reach them through the transport). */
    const logWatchers = new Set<() => void>();
    sink.on('data', (chunk: Buffer) => {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      for (const watcher of [...logWatchers]) watcher();
    });
    // The product's own logger (its redaction list comes from the settings), writing JSON lines to the sink.
    const app = await createApp({ cwd: dir, env, plugins, logDestination: sink, logLevel: 'debug', skipHealthProbe: !options.healthProbe, ...(options.sendPacing ? { sendPacing: options.sendPacing } : {}) });
    const transport = options.transport ?? new MemoryTransport(options.ownIds ?? []);
    await app.connect(transport);
    let clock: InstalledClock | undefined;
    /** Set by `restart`: the folder and the model belong to the new bot, which stops them. */
    let handedOver = false;
    const restoreClock = () => {
      clock?.uninstall();
      clock = undefined;
    };
    const stopApp = async () => {
      restoreClock();
      await app.stop();
    };
    const push = (message: string | PushInput) => transport.push(typeof message === 'string' ? { text: message } : message);
    return {
      push,
      async send(message) {
        return (await push(message)).filter((a): a is Extract<BotAction, { type: 'text' }> => a.type === 'text').map((a) => a.text);
      },
      replies: (chatId) => transport.actions.filter((a): a is Extract<BotAction, { type: 'text' }> => a.type === 'text' && (!chatId || a.chatId === chatId)).map((a) => a.text),
      model,
      audio,
      app,
      transport,
      dir,
      logs: () => lines.map((l) => JSON.parse(l) as Record<string, any>),
      until(check) {
        const now = check();
        if (now) return Promise.resolve(now);
        return new Promise((resolve) => {
          const watcher = () => {
            const hit = check();
            if (!hit) return;
            logWatchers.delete(watcher);
            offActions();
            resolve(hit);
          };
          logWatchers.add(watcher);
          const offActions = transport.onAction(watcher);
        });
      },
      useClock(toFake = ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval']) {
        restoreClock();
        // A timer made before the clock was faked (an HTTP client's socket timeouts, made at start) must still be
        // cleared by the faked clearTimeout: left running, it fires on a socket already gone (undici throws).
        const installed = installFakeTimers({ now: Date.now(), toFake, shouldClearNativeTimers: true });
        clock = installed;
        return {
          tick: async (ms) => void (await installed.tickAsync(ms)),
          now: () => installed.now,
          restore: () => (clock === installed ? restoreClock() : installed.uninstall()),
        };
      },
      async restart(changes = {}, whileStopped) {
        await stopApp();
        handedOver = true;
        await whileStopped?.();
        const { transport: _previous, ...kept } = options;
        return launch(plugins, { ...kept, ...changes, model, audio }, own);
      },
      async stop() {
        if (handedOver) return;
        try {
          await stopApp();
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

/** config.json of a test bot: the given fields, with every given plugin enabled (unless `enableGiven: false`) and the first with `options`. */
export function configOf(plugins: Plugin[] | undefined, options: TestBotOptions): Record<string, unknown> {
  const given = (options.config?.plugins ?? {}) as Record<string, Record<string, unknown>>;
  const section: Record<string, Record<string, unknown>> = { ...given };
  const enable = options.enableGiven ?? true;
  (plugins ?? []).forEach((plugin, i) => {
    const own = i === 0 ? options.options : undefined;
    if (!enable && !given[plugin.name] && !own) return;
    section[plugin.name] = { ...(enable ? { enabled: true } : {}), ...(given[plugin.name] ?? {}), ...(own ?? {}) };
  });
  return { ...(options.config ?? {}), plugins: section };
}
