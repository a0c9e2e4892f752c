import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/** A program running in a real pseudo-terminal: what it shows (escape codes removed), typing, and its exit. */
export interface PtySession {
  child: ChildProcessWithoutNullStreams;
  /** Everything the terminal showed so far, without escape sequences. */
  screen(): string;
  /** The raw bytes the terminal showed so far (escape sequences included). */
  raw(): string;
  /** Types into the terminal (`\r` is Enter, `\x1b[B` the down arrow). */
  type(keys: string): void;
  /** Resolves once the screen shows `pattern` after what was shown when the last `type` was called. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** Waits for `pattern`, then types `keys`. */
  answer(pattern: RegExp, keys: string, timeoutMs?: number): Promise<void>;
  exited: Promise<number | null>;
}

const ESCAPES = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[=>()][0-9A-Za-z]?/g;

/**
 * Runs `argv` in a real pseudo-terminal made by util-linux `script` (stdin and stdout are a terminal for the
 * program, 120×40), with exactly `env` (plus PATH). node-pty would need a native build; `script` is on every Debian.
 *
 * @example
 * const t = startInPty([process.execPath, 'dist/cli/setup.js'], { cwd: dir });
 * await t.answer(/API key/, 'sk-…\r');
 */
export function startInPty(argv: string[], options: { cwd: string; env?: Record<string, string> }): PtySession {
  const quoted = argv.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn('script', ['-qfec', `stty cols 120 rows 40; exec ${quoted}`, '/dev/null'], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', TERM: 'xterm-256color', ...(options.env ?? {}) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let raw = '';
  let mark = 0;
  const watchers = new Set<() => void>();
  const poke = () => {
    for (const w of [...watchers]) w();
  };
  child.stdout.on('data', (d) => {
    raw += d;
    poke();
  });
  child.stderr.on('data', (d) => {
    raw += d;
    poke();
  });
  let done = false;
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      done = true;
      poke();
      resolve(code);
    }),
  );
  const strip = (text: string) => text.replace(ESCAPES, '');
  const waitFor = (pattern: RegExp, timeoutMs = 20_000) =>
    new Promise<void>((resolve, reject) => {
      const from = mark;
      const check = () => {
        if (pattern.test(strip(raw.slice(from)))) {
          finish();
          resolve();
        } else if (done) {
          finish();
          reject(new Error(`the program ended before showing ${pattern}\nscreen:\n${strip(raw)}`));
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`timed out waiting for ${pattern}\nscreen:\n${strip(raw)}`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        watchers.delete(check);
      };
      watchers.add(check);
      check();
    });
  const type = (keys: string) => {
    mark = raw.length;
    child.stdin.write(keys);
  };
  return {
    child,
    screen: () => strip(raw),
    raw: () => raw,
    type,
    waitFor,
    async answer(pattern, keys, timeoutMs) {
      await waitFor(pattern, timeoutMs);
      type(keys);
    },
    exited,
  };
}
