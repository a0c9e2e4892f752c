import { spawn } from 'node:child_process';
import os from 'node:os';
import type { EgressPolicy } from '../../core/media.js';
import { type Jail } from '../../core/index.js';
import { JailRefused } from '../../core/media.js';

/** A program that could not run or did not finish well. `code` is the exit code (null when killed or not started). */
export class ProcessFailed extends Error {
  constructor(
    message: string,
    readonly code: number | null,
    readonly stdout: string,
    readonly stderr: string,
    readonly reason: 'not-found' | 'timeout' | 'aborted' | 'exit',
  ) {
    super(message);
  }
}

export interface RunOptions {
  /** Stopped (SIGKILL) after this long. */
  timeoutMs: number;
  /** Called for every complete output line (stdout and stderr), e.g. to read progress. */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
  /** Stops the program when aborted (plugin stop). */
  signal?: AbortSignal;
  /** Exit codes that count as success (ffmpeg `-i` alone exits 1). Default [0]. */
  okCodes?: number[];
  /** Most stdout kept, in characters (yt-dlp's JSON can be a few MB). */
  maxStdout?: number;
}

/**
 * The environment handed to external programs: enough to run (PATH, HOME, locale, temp dir, proxy settings), and
 * nothing else — the bot's keys stay out of programs that fetch from the internet.
 */
export function childEnv(): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ', 'http_proxy', 'https_proxy', 'no_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'SSL_CERT_FILE', 'SSL_CERT_DIR'];
  const env: NodeJS.ProcessEnv = {};
  for (const name of keep) if (process.env[name] !== undefined) env[name] = process.env[name];
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  return env;
}

/**
 * Runs a program without a shell (arguments are never interpreted), streams its lines to `onLine`, and resolves
 * with its output, or rejects with ProcessFailed (not found, timed out, aborted, or a bad exit code).
 *
 * @example
 * const { stdout } = await runProcess('yt-dlp', ['--version'], { timeoutMs: 8000 });
 */
export function runProcess(cmd: string, args: string[], options: RunOptions): Promise<{ stdout: string; stderr: string; code: number }> {
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) return reject(new ProcessFailed(`${cmd} was stopped`, null, '', '', 'aborted'));
    const child = spawn(cmd, args, { env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    const maxStdout = options.maxStdout ?? 1_000_000;
    let stdout = '';
    let stderr = '';
    let ending: ProcessFailed['reason'] | undefined;
    const partial = { stdout: '', stderr: '' };
    const take = (stream: 'stdout' | 'stderr', chunk: Buffer) => {
      const text = chunk.toString();
      if (stream === 'stdout') {
        if (stdout.length < maxStdout) stdout += text;
      } else {
        stderr = (stderr + text).slice(-20_000); // the tail holds the error
      }
      if (!options.onLine) return;
      // Progress bars use \r to redraw a line: treat it as a line end too.
      const lines = (partial[stream] + text).split(/\r\n|\r|\n/);
      partial[stream] = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) options.onLine(line, stream);
    };
    child.stdout.on('data', (c: Buffer) => take('stdout', c));
    child.stderr.on('data', (c: Buffer) => take('stderr', c));
    const kill = (why: ProcessFailed['reason']) => {
      ending ??= why;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => kill('timeout'), options.timeoutMs);
    const onAbort = () => kill('aborted');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const finish = () => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    };
    child.on('error', (err: NodeJS.ErrnoException) => {
      finish();
      const notFound = err.code === 'ENOENT';
      reject(new ProcessFailed(notFound ? `${cmd} not found` : `${cmd} could not start: ${err.message}`, null, stdout, stderr, notFound ? 'not-found' : 'exit'));
    });
    child.on('close', (code) => {
      finish();
      for (const stream of ['stdout', 'stderr'] as const) if (partial[stream].trim()) options.onLine?.(partial[stream], stream);
      if (ending) return reject(new ProcessFailed(ending === 'timeout' ? `${cmd} took longer than ${Math.round(options.timeoutMs / 1000)} s and was stopped` : `${cmd} was stopped`, code, stdout, stderr, ending));
      if (code !== null && (options.okCodes ?? [0]).includes(code)) return resolve({ stdout, stderr, code });
      reject(new ProcessFailed(`${cmd} exited with code ${code}`, code, stdout, stderr, 'exit'));
    });
  });
}

export interface JailedRunOptions extends RunOptions {
  /** Host files the program reads, shown read-only as `in/<name>` (refer to them so in `args`). */
  inputs?: Record<string, string>;
  /** Host folder that receives what the program writes to `out/`. */
  outputTo?: string;
  /** `egress`: out only through the checked egress proxy. Default: no network. */
  network?: 'none' | 'egress';
  /** Which destinations the egress proxy lets through (with `network: 'egress'`). */
  egress?: EgressPolicy;
  /** Other programs the job calls (by `jail.pathInside`). */
  tools?: string[];
  /** Largest total the program may write to `out/`. Default 1 GB. */
  diskBytes?: number;
}

/**
 * `runProcess` in the core jail: the program sees only its `in/` files and its `out/` folder (no data folder, no
 * other chat's files), runs as an unprivileged uid with bounded memory, processes and CPU, and has no network
 * unless it asks for the egress proxy. Same results and ProcessFailed reasons as runProcess.
 *
 * @example
 * await runInJail(host.jail, ffmpeg, ['-i', 'in/clip', 'out/clip.mp3'], { inputs: { clip: file }, outputTo: dir, timeoutMs: 60_000 });
 */
export async function runInJail(jail: Jail, cmd: string, args: string[], options: JailedRunOptions): Promise<{ stdout: string; stderr: string; code: number }> {
  if (options.signal?.aborted) throw new ProcessFailed(`${cmd} was stopped`, null, '', '', 'aborted');
  const seconds = Math.max(1, Math.ceil(options.timeoutMs / 1000));
  let result;
  try {
    result = await jail.run({
      kind: 'media',
      program: cmd,
      args,
      inputs: options.inputs,
      outputTo: options.outputTo,
      network: options.network,
      egress: options.egress,
      tools: options.tools,
      onLine: options.onLine,
      signal: options.signal,
      limits: {
        wallSeconds: seconds,
        // Converters use every core: the CPU budget is the wall time on each of them.
        cpuSeconds: seconds * Math.max(1, os.availableParallelism()),
        memoryMb: 1536,
        maxProcesses: 128,
        // Progress lines of a long download add up: the cap guards memory, not chattiness.
        maxOutputBytes: (options.maxStdout ?? 1_000_000) + 16_000_000,
        diskBytes: options.diskBytes ?? 1024 * 1024 * 1024,
      },
    });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT') throw new ProcessFailed(`${cmd} not found`, null, '', '', 'not-found');
    if (err instanceof JailRefused) throw new ProcessFailed(`${cmd} could not run: ${err.message}`, null, '', '', 'exit');
    throw err;
  }
  const { stdout, stderr } = result;
  if (result.setupFailed) throw new ProcessFailed(`${cmd} could not start in the jail: ${result.setupFailed}`, null, stdout, stderr, 'exit');
  if (result.stopped === 'time') throw new ProcessFailed(`${cmd} took longer than ${seconds} s and was stopped`, null, stdout, stderr, 'timeout');
  if (result.stopped === 'aborted') throw new ProcessFailed(`${cmd} was stopped`, null, stdout, stderr, 'aborted');
  if (result.stopped) throw new ProcessFailed(`${cmd} went over its ${result.stopped} limit and was stopped`, null, stdout, stderr, 'exit');
  const code = result.exitCode;
  if (code !== null && (options.okCodes ?? [0]).includes(code)) return { stdout, stderr, code };
  throw new ProcessFailed(`${cmd} exited with ${code === null ? `signal ${result.signal}` : `code ${code}`}${result.outOfMemory ? ' (out of memory)' : ''}`, code, stdout, stderr, 'exit');
}
