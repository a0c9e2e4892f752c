import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runToExit } from './run-to-exit.js';

/**
 * What tests need of this repository's checkout and console, not of a plugin (so not in the public kit,
 * `app/testing`): the repository root, a temp folder, the console chat spawned as `npm run chat` runs it, and
 * config.json written from config.example.json.
 */

/** The repository root (works from test/ and dist/test/). */
export const ROOT = (() => {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return here.includes(`${path.sep}dist${path.sep}`) ? path.resolve(here, '..', '..', '..') : path.resolve(here, '..', '..');
})();

export async function tempDir(prefix = 'wabot-test-'): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix));
}

/**
 * The package.json of a temp tree that links the checkout's core/ (and app/): an ES module package carrying the
 * project's own "imports" aliases (#typebox), since tsc resolves `#…` imports from the package.json nearest the
 * linked file's path in the temp tree, not from the checkout's.
 */
export function checkoutModulePackageJson(): string {
  const project = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { imports?: unknown };
  return JSON.stringify({ type: 'module', imports: project.imports });
}

export interface ChatRun {
  stdout: string;
  stderr: string;
  code: number | null;
  /** stdout split into lines, empty lines dropped. */
  lines: string[];
}

/**
 * Spawns the console chat (`node dist/cli/chat.js`) in `cwd` with exactly `env` (plus PATH) and the given
 * stdin, and resolves when it exits. The default deadline (45 s) is for a hang, not a speed check: a start on a busy
 * machine (`npm run test:stress`) took past 15 s.
 */
export async function runChat(input: string, options: { cwd: string; env?: Record<string, string>; timeoutMs?: number }): Promise<ChatRun> {
  const run = await runToExit('console chat', process.execPath, [path.join(ROOT, 'dist', 'cli', 'chat.js')], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', ...(options.env ?? {}) },
    input,
    timeoutMs: options.timeoutMs ?? 45_000,
  });
  return { ...run, lines: run.stdout.split('\n').filter((l) => l.length) };
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
export async function openExample(): Promise<Record<string, any>> {
  const example = await shippedExample();
  return { ...example, access: { ...example.access, mode: 'everyone' }, groups: { ...example.groups, policy: 'open' } };
}

/** config.example.json as shipped. */
export async function shippedExample(): Promise<Record<string, any>> {
  return JSON.parse(await readFile(path.join(ROOT, 'config.example.json'), 'utf8'));
}
