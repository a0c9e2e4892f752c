import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { chatOutput } from './chat-output.js';
import { ROOT } from './checkout.js';

/** A console chat that keeps running: write lines, wait for output, signal it, wait for its exit. */
export interface LiveChat {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  /** stdout lines so far (empty lines dropped). */
  lines: () => string[];
  send(line: string): void;
  /** Resolves with the first stdout line (counting from line `from`) that matches; rejects after `timeoutMs` (30 s: a start on a busy machine). */
  waitForLine(pattern: RegExp, options?: { from?: number; timeoutMs?: number }): Promise<string>;
  /** Resolves when stderr (from character `from` on) matches `pattern`. */
  waitForLog(pattern: RegExp, timeoutMs?: number, from?: number): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Ends stdin and resolves with the exit code; kills the chat and rejects when it is still running `timeoutMs` later. */
  endInput(timeoutMs?: number): Promise<number | null>;
}

/**
 * Spawns `node dist/cli/chat.js` in `cwd` with exactly `env` (plus PATH) and stdin left open.
 *
 * @example
 * const chat = startLiveChat({ cwd: dir, env });
 * await chat.waitForLog(/console chat ready/);
 * chat.send('.ping');
 * await chat.waitForLine(/^bot> pong/);
 */
export function startLiveChat(options: { cwd: string; env?: Record<string, string> }): LiveChat {
  const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'cli', 'chat.js')], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', ...(options.env ?? {}) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const out = chatOutput({ logName: 'stderr', endedAs: 'exited' });
  child.stdout.on('data', (d: Buffer) => out.addStdout(d));
  child.stderr.on('data', (d: Buffer) => out.addStderr(d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
    out.end();
  });
  const { lines, waitFor } = out;
  return {
    child,
    stdout: out.stdout,
    stderr: out.stderr,
    lines,
    send: (line) => child.stdin.write(`${line}\n`),
    waitForLine: (pattern, opts = {}) => waitFor(() => lines().slice(opts.from ?? 0).find((l) => pattern.test(l)), `a line matching ${pattern}`, opts.timeoutMs ?? 30_000),
    waitForLog: async (pattern, timeoutMs = 30_000, from = 0) => {
      await waitFor(() => (pattern.test(out.stderr().slice(from)) ? true : undefined), `a log matching ${pattern}`, timeoutMs);
    },
    exited,
    endInput(timeoutMs = 30_000) {
      child.stdin.end();
      return waitFor(() => (hasExited ? child.exitCode : undefined), 'the exit at end of input (the chat was kept alive)', timeoutMs).catch((err: unknown) => {
        child.kill('SIGKILL');
        throw err;
      });
    },
  };
}
