import path from 'node:path';
import { ROOT } from './checkout.js';
import { runToExit, type ProcessRun } from './run-to-exit.js';

export type ScriptRun = ProcessRun;

/**
 * Runs one of the program's entry points (`dist/cli/<name>.js`) in `cwd` with `args`, exactly `env` (plus PATH and
 * HOME) and stdin not a terminal, and resolves when it exits.
 *
 * @example const run = await runScript('setup', ['--yes'], { cwd: dir });
 */
export function runScript(name: string, args: string[], options: { cwd: string; env?: Record<string, string>; input?: string; timeoutMs?: number }): Promise<ScriptRun> {
  return runToExit(name, process.execPath, [path.join(ROOT, 'dist', 'cli', `${name}.js`), ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...(options.env ?? {}) },
    input: options.input,
    timeoutMs: options.timeoutMs ?? 60_000,
  });
}
