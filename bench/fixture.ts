import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createApp, type App } from '../app/app.js';
import type { Plugin } from '../core/index.js';
import { createLogger } from '../core/services/log/logger.js';
import { safeFileName } from '../core/api/file-name.js';
import type { HistoryEntry } from '../core/services/store/history.js';
import { MemoryTransport } from '../core/adapters/memory/memory-transport.js';

/** The repository root, from bench/ (tsx) or dist/bench/ (built). */
export const ROOT = (() => {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return here.includes(`${path.sep}dist${path.sep}`) ? path.resolve(here, '..', '..') : path.resolve(here, '..');
})();

/** A private-chat id for bench user n (in a private chat the chat id is the sender's id). */
export const userId = (n: number) => `4917000${String(n).padStart(5, '0')}@s.whatsapp.net`;

/**
 * Who the bench's made-up senders are to the bot, stated by every scenario (config.example.json ships closed:
 * `access.mode: "pairing"`, `groups.policy: "allowlist"`).
 * - `everyone`: `access.mode: "everyone"`, `groups.policy: "open"` — what a test of answering sets up; the bench
 *   measures the bot answering, not a stranger held at the door.
 * - `as shipped`: config.example.json's closed defaults, for the rows that measure the door itself (a stranger held,
 *   a pairing reply) and for the console, whose sender at the terminal counts as an owner.
 */
export type BenchAccess = 'everyone' | 'as shipped';

export interface BotDirOptions {
  access: BenchAccess;
  /** Chats to seed with a history and a memory file. */
  chats?: string[];
  /** History entries per seeded chat (the issue asks for 50). */
  historyEntries?: number;
  /** Memory facts per seeded chat. */
  facts?: number;
  /** Fields merged over config.example.json (shallow; `ai` is merged one level deeper). */
  config?: Record<string, unknown>;
}

/**
 * A temp directory the real app can run in: config.json copied from config.example.json with the bench's edits
 * (web port 0; no per-minute request cap, because the bench sends far more than a person would; the access the
 * scenario asked for), and, per seeded
 * chat, a history of `historyEntries` messages and a memory file under data/.
 *
 * @example
 * const dir = await makeBotDir({ access: 'everyone', chats: [userId(1)], historyEntries: 50, facts: 5 });
 */
export async function makeBotDir(options: BotDirOptions): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'wabot-bench-'));
  const example = JSON.parse(await readFile(path.join(ROOT, 'config.example.json'), 'utf8'));
  const extra = options.config ?? {};
  const open = options.access === 'everyone' ? { access: { ...example.access, mode: 'everyone' }, groups: { ...example.groups, policy: 'open' } } : {};
  const config = { ...example, port: 0, ...open, ...extra, ai: { ...example.ai, requestsPerMinute: 0, ...((extra.ai as object) ?? {}) } };
  await writeFile(path.join(dir, 'config.json'), JSON.stringify(config, null, 2));
  const now = Date.now();
  for (const chat of options.chats ?? []) {
    const messages: HistoryEntry[] = [];
    for (let i = 0; i < (options.historyEntries ?? 0); i++) {
      const user = i % 2 === 0;
      messages.push({
        id: user ? `seed-${i}` : undefined,
        role: user ? 'user' : 'assistant',
        senderId: user ? chat : undefined,
        text: user
          ? `Question ${i}: could you remind me what we said about the trip to the coast and the train times on Saturday?`
          : `Answer ${i}: the train leaves at 8:15 from platform 3; you wanted a window seat and to be back by Sunday evening.`,
        at: now - (options.historyEntries! - i) * 60_000,
      });
    }
    const file = safeFileName(chat);
    await mkdir(path.join(dir, 'data', 'history'), { recursive: true });
    await mkdir(path.join(dir, 'data', 'memory'), { recursive: true });
    await writeFile(path.join(dir, 'data', 'history', `${file}.json`), JSON.stringify({ messages }, null, 2));
    const facts = Array.from({ length: options.facts ?? 0 }, (_, i) => ({ text: `Fact ${i}: prefers short answers and metric units.`, at: now, by: chat }));
    await writeFile(path.join(dir, 'data', 'memory', `${file}.json`), JSON.stringify({ facts }, null, 2));
  }
  return dir;
}

/** A logger at the production level (info) whose lines are formatted and then thrown away. */
export function discardingLogger() {
  const sink = new Writable({ write: (_chunk, _enc, done) => done() });
  return createLogger({ level: 'info', pretty: false, destination: sink });
}

export interface BenchApp {
  app: App;
  transport: MemoryTransport;
  dir: string;
  stop(): Promise<void>;
}

/**
 * Starts the real app (real config loading from `dir`, plugin discovery, pipeline, provider chain, stores on
 * `dir/data`) on a memory transport, with exactly `env` as its environment.
 *
 * @example
 * const b = await startBenchApp(dir, { API_KEY: 'k', BASE_URL: gw.v1('second'), MODEL: 'm' });
 * const actions = await b.transport.push({ text: '.ping' });
 */
export async function startBenchApp(dir: string, env: Record<string, string>, transport = new MemoryTransport(), plugins?: Plugin[]): Promise<BenchApp> {
  const app = await createApp({ cwd: dir, env: { PATH: process.env.PATH ?? '', ...env }, logger: discardingLogger(), skipHealthProbe: true, plugins });
  if (app.pluginFailures.length) throw new Error(`plugins failed to load: ${app.pluginFailures.map((f) => `${f.source}: ${f.reason}`).join('; ')}`);
  await app.connect(transport);
  return {
    app,
    transport,
    dir,
    async stop() {
      await app.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Waits until the bot has finished with the last message, its writes included: the message's history lines are
 * appended before its handling ends. What the bot writes later in service — a history compaction every
 * `history.maxMessages` lines, the counters once per `data.flushIntervalMs` — is not forced here, so it is paid
 * where it falls (in whichever sample its timer or threshold hits), as a user pays it; forcing both per message
 * would time a bot that does not exist.
 *
 * @example await settle(bench);
 */
export async function settle(bench: BenchApp): Promise<void> {
  await bench.app.bot.idle();
}
