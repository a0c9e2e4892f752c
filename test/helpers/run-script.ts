import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './checkout.js';

export interface ScriptRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs one of the program's entry points (`dist/app/<name>.js`) in `cwd` with `args`, exactly `env` (plus PATH and
 * HOME) and stdin not a terminal, and resolves when it exits.
 *
 * @example const run = await runScript('setup', ['--yes'], { cwd: dir });
 */
export function runScript(name: string, args: string[], options: { cwd: string; env?: Record<string, string>; input?: string; timeoutMs?: number }): Promise<ScriptRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'app', `${name}.js`), ...args], {
      cwd: options.cwd,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...(options.env ?? {}) },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not exit within ${options.timeoutMs ?? 60_000} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}
