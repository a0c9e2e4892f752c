import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { createApp, type App } from '../app.js';
import { createLogger } from '../../core/services/log/logger.js';
import type { Plugin } from '../../core/kernel/plugin/types.js';
import { isPlugin } from '../../core/kernel/plugin/contract.js';
import { pluginErrors } from '../../core/kernel/plugin/errors.js';
import { MemoryTransport, type BotAction, type PushInput } from '../../core/adapters/memory/memory-transport.js';
import { FakeModel, type ModelAnswer, type ModelRequest } from './fake-model.js';

export interface TestBotOptions {
  /** This plugin's options in config.json (`enabled: true` is added). */
  options?: Record<string, unknown>;
  /** Other config.json fields (prefix, owners, …). */
  config?: Record<string, unknown>;
  /** Extra environment settings (the environment is otherwise empty but for PATH and the fake model's). */
  env?: Record<string, string>;
  /** How the fake chat model answers; default "model: <last text>". Return `{ tool, args }` to call a tool. */
  model?: (request: ModelRequest) => ModelAnswer;
  /**
   * Run in this folder instead of a fresh temporary one, and keep it at `stop` — to restart a bot over the same data
   * (`bot.dir` of a first bot). The data folder is `<dir>/data`.
   */
  dir?: string;
}

/**
 * A bot running one plugin, in a temporary folder, on an in-memory transport, with a fake chat model on 127.0.0.1:
 * no phone and no network. `send` pushes a message and resolves with the texts the bot answered (Hubot style).
 */
export interface TestBot {
  /** Sends a message (text, or a full message with media, group, sender…) and resolves with the texts sent back. */
  send(message: string | PushInput): Promise<string[]>;
  /** Sends a message and resolves with everything the bot did (texts, reactions, media, edits). */
  push(message: string | PushInput): Promise<BotAction[]>;
  /** Every text the bot has sent so far, in order. */
  replies(): string[];
  /** The requests the fake chat model received (messages and offered tool names). */
  readonly model: FakeModel;
  readonly app: App;
  /** The folder the bot runs in (its data is in `data/` below it). */
  readonly dir: string;
  /** Log lines written so far, as JSON objects. */
  logs(): Array<Record<string, unknown>>;
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
 * Starts a bot with one plugin for a test.
 *
 * @example
 * const bot = await startTestBot(dice, { options: { sides: 6 } });
 * const [answer] = await bot.send('.roll');
 * await bot.stop();
 */
export async function startTestBot(defined: Plugin | DefinedPlugin, options: TestBotOptions = {}): Promise<TestBot> {
  if (!isPlugin(defined)) throw pluginErrors.notAPlugin('the plugin given to startTestBot', 'was not made by definePlugin of this contract');
  const plugin = defined;
  const dir = options.dir ?? (await mkdtemp(path.join(os.tmpdir(), `plugin-${plugin.name}-`)));
  const removeDir = () => (options.dir ? Promise.resolve() : rm(dir, { recursive: true, force: true }));
  const model = await FakeModel.start(options.model);
  try {
    const config = { ...(options.config ?? {}), plugins: { [plugin.name]: { enabled: true, ...(options.options ?? {}) } } };
    await writeFile(path.join(dir, 'config.json'), JSON.stringify(config, null, 2));
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', API_KEY: 'test-kit-key', BASE_URL: model.url, MODEL: 'test-model', ...(options.env ?? {}) };
    const lines: string[] = [];
    const sink = new PassThrough();
    sink.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
    const logger = createLogger({ level: 'debug', pretty: false, destination: sink });
    const app = await createApp({ cwd: dir, env, plugins: [plugin], logger, skipHealthProbe: true });
    const transport = new MemoryTransport();
    await app.connect(transport);
    const push = (message: string | PushInput) => transport.push(typeof message === 'string' ? { text: message } : message);
    return {
      push,
      async send(message) {
        return (await push(message)).filter((a): a is Extract<BotAction, { type: 'text' }> => a.type === 'text').map((a) => a.text);
      },
      replies: () => transport.texts(),
      model,
      app,
      dir,
      logs: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>),
      async stop() {
        await app.stop();
        await model.close();
        await removeDir();
      },
    };
  } catch (err) {
    await model.close();
    await removeDir();
    throw err;
  }
}
