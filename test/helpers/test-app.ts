import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createApp, type App } from '../../app/app.js';
import type { Plugin } from '../../core/kernel/plugin/types.js';
import { MemoryTransport } from '../../core/adapters/memory/memory-transport.js';

/** The repository root (works from test/ and dist/test/). */
export const ROOT = (() => {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return here.includes(`${path.sep}dist${path.sep}`) ? path.resolve(here, '..', '..', '..') : path.resolve(here, '..', '..');
})();

export async function tempDir(prefix = 'wabot-test-'): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix));
}

export interface TestApp {
  app: App;
  transport: MemoryTransport;
  dir: string;
  /** Every log line written so far (JSON objects). */
  logs: () => Array<Record<string, any>>;
  stop(): Promise<void>;
}

export interface TestAppOptions {
  /** The whole environment the app sees (process.env is NOT used). */
  env?: Record<string, string>;
  /** Fields merged over config.example.json. */
  config?: Record<string, unknown>;
  /** Plugins to load instead of discovering plugins/*. */
  plugins?: Plugin[];
  ownIds?: string[];
  skipHealthProbe?: boolean;
  /** An existing directory to run in (e.g. to restart over the same data). */
  dir?: string;
}

/**
 * Starts the real app (config, plugins, stores, chain, bot) in a temp directory on a memory transport.
 *
 * Being retired: new tests start their bots with the public kit (`app/testing`, `startTestBot`: several plugins or
 * the bundled ones, ownIds, a clock, restart over the same folder), the one plugin authors get. It stays for the tests
 * not moved yet, and for tests of config.json as shipped (config.example.json, no section for the plugin under test),
 * which the kit, enabling every plugin it is given, does not write. The rest of this file (ROOT, tempDir, runChat,
 * writeConfig) is about this repository's checkout and console, not about a plugin, so it is not in the kit.
 *
 * @example
 * const t = await startTestApp({ env: { API_KEY: 'k', BASE_URL: gw.url, MODEL: 'm' } });
 * const actions = await t.transport.push({ text: '.ping' });
 */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dir = options.dir ?? (await tempDir());
  const example = await openExample();
  if (options.config || !options.dir) await writeFile(path.join(dir, 'config.json'), JSON.stringify({ ...example, ...(options.config ?? {}) }, null, 2));
  const env = { PATH: process.env.PATH ?? '', API_KEY: 'test-key-123456', BASE_URL: 'http://127.0.0.1:9', MODEL: 'test-model', ...(options.env ?? {}) };
  const sink = new PassThrough();
  const lines: string[] = [];
  sink.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
  // The product's own logger (its redaction list comes from the settings), writing JSON lines to the sink.
  const app = await createApp({ cwd: dir, env, plugins: options.plugins, logDestination: sink, logLevel: 'debug', skipHealthProbe: options.skipHealthProbe ?? true });
  const transport = new MemoryTransport(options.ownIds ?? []);
  await app.connect(transport);
  return {
    app,
    transport,
    dir,
    logs: () => lines.map((l) => JSON.parse(l) as Record<string, any>),
    async stop() {
      await app.stop();
      if (!options.dir) await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface ChatRun {
  stdout: string;
  stderr: string;
  code: number | null;
  /** stdout split into lines, empty lines dropped. */
  lines: string[];
}

/**
 * Spawns the console chat (`node dist/app/chat.js`) in `cwd` with exactly `env` (plus PATH) and the given
 * stdin, and resolves when it exits.
 */
export function runChat(input: string, options: { cwd: string; env?: Record<string, string>; timeoutMs?: number }): Promise<ChatRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'app', 'chat.js')], {
      cwd: options.cwd,
      env: { PATH: process.env.PATH ?? '', ...(options.env ?? {}) },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`console chat did not exit within ${options.timeoutMs ?? 15000} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, options.timeoutMs ?? 15000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, code, lines: stdout.split('\n').filter((l) => l.length) });
    });
    child.stdin.end(input);
  });
}

/** Writes a config.json into `dir` from config.example.json with overrides. */
export async function writeConfig(dir: string, overrides: Record<string, unknown> = {}): Promise<void> {
  const example = await openExample();
  await writeFile(path.join(dir, 'config.json'), JSON.stringify({ ...example, port: 0, ...overrides }, null, 2));
}

/**
 * config.example.json opened to everyone (`access.mode: "everyone"`, `groups.policy: "open"`): most tests are about
 * something else than who is answered. Tests of pairing and group activation set those keys themselves, and
 * `shippedExample()` gives the file as shipped.
 */
async function openExample(): Promise<Record<string, any>> {
  const example = await shippedExample();
  return { ...example, access: { ...example.access, mode: 'everyone' }, groups: { ...example.groups, policy: 'open' } };
}

/** config.example.json as shipped. */
export async function shippedExample(): Promise<Record<string, any>> {
  return JSON.parse(await readFile(path.join(ROOT, 'config.example.json'), 'utf8'));
}
