import path from 'node:path';
import type { CliIo } from '../../cli/io.js';
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

/** The commands `runCommand` runs in this process, each loaded at its first use. */
const COMMANDS = {
  setup: async () => (await import('../../cli/setup/command.js')).runSetup,
  doctor: async () => (await import('../../cli/doctor/command.js')).runDoctorCommand,
  backup: async () => (await import('../../cli/backup/backup-command.js')).runBackup,
  restore: async () => (await import('../../cli/backup/restore-command.js')).runRestore,
} satisfies Record<string, () => Promise<(io: CliIo) => Promise<number>>>;

/**
 * Runs one of the program's commands in this process, as `runScript` runs its entry point: in `cwd` with `args`,
 * exactly `env` (plus PATH and HOME), not in a terminal; resolves with its exit code and what it printed. A spawned
 * node costs over a second of CPU; this a fraction. For tests whose subject is what the command does and says: the
 * process itself (its exit code as the shell sees it, a terminal) stays tested with `runScript` and the pty.
 *
 * @example const run = await runCommand('setup', ['--yes'], { cwd: dir });
 */
export async function runCommand(name: keyof typeof COMMANDS, args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<ScriptRun> {
  const command = await COMMANDS[name]();
  let stdout = '';
  let stderr = '';
  const code = await command({
    args,
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...(options.env ?? {}) },
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    terminal: false,
  });
  return { code, stdout, stderr };
}
