import { PassThrough } from 'node:stream';
import { createApp, type App, type AppOptions } from '../../app/app.js';
import { ConsoleTransport } from '../../core/adapters/console/console-transport.js';
import { reportUnsaved } from '../../core/services/lifecycle/stop-signals.js';
import type { ChatRun } from './checkout.js';
import { chatOutput } from './chat-output.js';
import { dateAhead } from './clock-ahead.js';

/**
 * The console chat run in this process: the app and the console transport `npm run chat` builds (same config,
 * plugins, data and stdout lines), on in-memory streams instead of a spawned `node dist/cli/chat.js`. A spawn costs
 * over 2 s of CPU; this a fraction of it. For tests whose subject is what the bot says and keeps, not the process:
 * its start, exit code and signals stay tested on the real process (test/core/console/console.test.ts and the
 * spawning helpers in checkout.ts and live-chat.ts). The log is the product's JSON lines (stderr when piped).
 */
export interface ConsoleChat {
  stdout(): string;
  stderr(): string;
  /** stdout lines so far (empty lines dropped). */
  lines(): string[];
  send(line: string): void;
  /** Resolves with the first stdout line (counting from line `from`) that matches; rejects when the chat ends first or after `timeoutMs`. */
  waitForLine(pattern: RegExp, options?: { from?: number; timeoutMs?: number }): Promise<string>;
  /** Resolves when the log (or a console error) matches `pattern`. */
  waitForLog(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** Resolves once the chat has ended: 0 as `npm run chat` exits after a clean stop, 1 when it could not start or save. */
  exited: Promise<{ code: number }>;
  /** Ends the input and resolves with the exit code, once every line has been answered and the bot stopped. */
  endInput(): Promise<number>;
  /** The running app (once started), for what a test reads beside the chat. */
  app(): App | undefined;
  /** Writes raw input (no newline added). */
  write(text: string): void;
}

/**
 * Starts the console chat in `cwd` with exactly `env` (plus PATH), its input left open. `dateAheadMs`: the chat runs
 * that much later by `Date` (what `clockAhead` does to a spawned one: a start as if time had passed while it was down).
 */
export function startConsoleChat(options: { cwd: string; env?: Record<string, string>; dateAheadMs?: number; sendPacing?: AppOptions['sendPacing'] }): ConsoleChat {
  const input = new PassThrough();
  const output = new PassThrough();
  const errors = new PassThrough();
  const out = chatOutput({ logName: 'log', endedAs: 'ended' });
  let app: App | undefined;
  output.on('data', (chunk: Buffer) => out.addStdout(chunk));
  errors.on('data', (chunk: Buffer) => out.addStderr(chunk));
  const run = async (): Promise<number> => {
    try {
      app = await createApp({ cwd: options.cwd, env: { PATH: process.env.PATH ?? '', ...(options.env ?? {}) }, logDestination: errors, ...(options.sendPacing ? { sendPacing: options.sendPacing } : {}) });
    } catch (err) {
      errors.write(`\nCannot start: ${(err as Error).message}\n\n`);
      return 1;
    }
    const transport = new ConsoleTransport({ input, output, errors, cwd: options.cwd, debounceMs: app.config.conversation.debounceMs });
    await app.connect(transport);
    app.log.info('console chat ready');
    await transport.done;
    await app.bot.idle();
    try {
      await app.stop();
      return 0;
    } catch (err) {
      reportUnsaved(app.log, err as Error);
      return 1;
    }
  };
  const restoreDate = options.dateAheadMs ? dateAhead(options.dateAheadMs) : undefined;
  const exited = run().then((code) => {
    restoreDate?.();
    // The last writes reach the strings before anyone reads the end.
    return new Promise<{ code: number }>((resolve) => setImmediate(() => (out.end(), resolve({ code }))));
  });
  const { lines, waitFor } = out;
  return {
    stdout: out.stdout,
    stderr: out.stderr,
    lines,
    send: (line) => void input.write(`${line}\n`),
    waitForLine: (pattern, opts = {}) => waitFor(() => lines().slice(opts.from ?? 0).find((l) => pattern.test(l)), `a line matching ${pattern}`, opts.timeoutMs ?? 30_000),
    waitForLog: async (pattern, timeoutMs = 30_000) => {
      await waitFor(() => (pattern.test(out.stderr()) ? true : undefined), `a log matching ${pattern}`, timeoutMs);
    },
    exited,
    async endInput() {
      input.end();
      return (await exited).code;
    },
    app: () => app,
    write: (text) => void input.write(text),
  };
}

/**
 * Runs the console chat in this process over `input` (every line, then end of input) in `cwd` with exactly `env` (plus
 * PATH), and resolves once it has answered everything and stopped: what `runChat` gives for the spawned one.
 */
export async function runConsoleChat(input: string, options: { cwd: string; env?: Record<string, string>; sendPacing?: AppOptions['sendPacing'] }): Promise<ChatRun> {
  const chat = startConsoleChat(options);
  chat.write(input);
  const code = await chat.endInput();
  return { stdout: chat.stdout(), stderr: chat.stderr(), code, lines: chat.lines() };
}
