import { spawn } from 'node:child_process';

export interface ProcessRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `command` with `args` in `cwd` with exactly `env`, stdin fed `input` and then closed (not a terminal), and
 * resolves with its exit code and what it printed; a run longer than `timeoutMs` is killed and rejects with its output
 * (named `what`).
 *
 * @example const run = await runToExit('backup', process.execPath, ['dist/cli/backup.js'], { cwd, env: { PATH }, timeoutMs: 60_000 });
 */
export function runToExit(what: string, command: string, args: string[], options: { cwd: string; env: Record<string, string>; input?: string; timeoutMs: number }): Promise<ProcessRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what} did not exit within ${options.timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, options.timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}
