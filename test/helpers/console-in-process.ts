import { PassThrough } from 'node:stream';
import { createApp } from '../../app/app.js';
import { ConsoleTransport } from '../../core/adapters/console/console-transport.js';
import type { ChatRun } from './checkout.js';

/**
 * The console chat as `npm run chat` runs it with piped input, in this process: the same app (config.json and data in
 * `cwd`, the given environment), the console transport reading `input` line by line and printing `bot> …` lines, the
 * end of input waited for, every answer finished and the app stopped. Resolves like `runChat` (stdout, stderr with the
 * log's JSON lines and console errors, lines), with `code` 0 after a clean stop and 1 when the stop could not save
 * everything — what the process would exit with.
 *
 * For tests of what the bot does with console input (a `:document`, a `:voice`, a `:image`): they pay no process
 * start (about 2 s of CPU each) and no module loading. A test of the process itself (its exit code on a bad config, a
 * signal, the web port, the terminal) spawns it with `runChat`.
 */
export async function chatInProcess(input: string, options: { cwd: string; env?: Record<string, string> }): Promise<ChatRun> {
  let stdout = '';
  let stderr = '';
  const output = new PassThrough();
  const errors = new PassThrough();
  output.on('data', (chunk: Buffer) => (stdout += chunk));
  errors.on('data', (chunk: Buffer) => (stderr += chunk));
  const env = { PATH: process.env.PATH ?? '', ...(options.env ?? {}) };
  const app = await createApp({ cwd: options.cwd, env, logDestination: errors });
  const stdin = new PassThrough();
  const transport = new ConsoleTransport({ input: stdin, output, errors, cwd: options.cwd, debounceMs: app.config.conversation.debounceMs });
  let code = 0;
  try {
    await app.connect(transport);
    stdin.end(input);
    await transport.done;
    await app.bot.idle();
  } finally {
    try {
      await app.stop();
    } catch (err) {
      stderr += `${(err as Error).message}\n`;
      code = 1;
    }
  }
  return { stdout, stderr, code, lines: stdout.split('\n').filter((l) => l.length) };
}
