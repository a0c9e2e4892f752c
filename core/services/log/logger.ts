import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import path from 'node:path';
import { recentProblems } from './recent-problems.js';
import { logTail } from './log-tail.js';
import { withSecretForms } from './secret-forms.js';
import { API_TOKEN_SHAPE } from '../../api/errors.js';

// A CommonJS package, required: an ES import of one has Node parse its source for export names and wrap it (~5 ms of
// a start for each such package).
const pino = createRequire(import.meta.url)('pino') as typeof import('pino').default;

export type { Logger } from 'pino';

const REDACTED = '[redacted]';
/** Known secret-bearing fields, dropped even before the value redactor runs. */
const REDACT_FIELDS = { paths: ['apiKey', '*.apiKey', 'token', '*.token', 'headers.authorization', '*.headers.authorization'], censor: REDACTED };
/** A log file past this size at start is kept as `<file>.1` and a new one begun (one old file, never more). */
const LOG_FILE_ROLL_BYTES = 10 * 1024 * 1024;

/**
 * Replaces every secret value in a text. Used on every log line and on any text that could carry an upstream's
 * error body. `secrets` are taken as given: the logger passes each in all its forms (`withSecretForms`).
 *
 * @example redact('key sk-123 failed', ['sk-123']) // 'key [redacted] failed'
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret && out.includes(secret)) out = out.split(secret).join(REDACTED);
  // API tokens are known by shape only (their secrets are kept hashed).
  return out.includes('wabot_') ? out.replace(API_TOKEN_SHAPE, REDACTED) : out;
}

/** A stream that redacts secrets from each chunk before handing it on. Pino writes one line per chunk. */
class RedactingStream extends Writable {
  constructor(private readonly inner: NodeJS.WritableStream, private readonly secrets: () => readonly string[], private readonly onLine?: (line: string) => void) {
    super();
  }
  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    const text = redact(chunk.toString(), this.secrets());
    this.onLine?.(text);
    this.inner.write(text) ? done() : this.inner.once('drain', () => done());
  }
}

type PrettyFactory = (options: Record<string, unknown>) => NodeJS.WritableStream;

/** pino-pretty is loaded only for a terminal: a service logging JSON never pays for it at start. */
function loadPretty(): PrettyFactory {
  const mod = createRequire(import.meta.url)('pino-pretty') as PrettyFactory & { default?: PrettyFactory };
  return mod.default ?? mod;
}

/** Loggers that print readable lines (tables are then printed without their JSON fields). */
const prettyLoggers = new WeakSet<object>();

/** True when `log` prints readable lines rather than JSON objects. */
export function isPrettyLogger(log: object): boolean {
  return prettyLoggers.has(log);
}

export interface LoggerOptions {
  level?: string;
  secrets?: readonly string[];
  /** Force pretty (true) or JSON (false); default: pretty when stderr is a terminal. */
  pretty?: boolean;
  /** Where lines go; default stderr (stdout belongs to the console chat protocol). */
  destination?: NodeJS.WritableStream;
  /**
   * A terminal chat: every line goes to this file (JSON lines, mode 0600, the folder made when missing), and only
   * warnings and errors to `destination` — so the log never interleaves with the chat typed in the same terminal.
   */
  file?: string;
}

/**
 * The service logger: pino, pretty in a terminal and JSON otherwise, always on stderr, with every secret
 * value replaced by `[redacted]` before it is written.
 *
 * @example
 * const log = createLogger({ secrets: settings.secrets });
 * log.info({ plugin: 'ping' }, 'loaded');
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  // Each secret also as a text carrying it escaped or encoded shows it (a JSON log line escapes a `"` in a key).
  const secrets = withSecretForms(options.secrets ?? []);
  const destination = options.destination ?? process.stderr;
  const pretty = options.pretty ?? Boolean((destination as NodeJS.WriteStream).isTTY);
  // Warnings and errors also go to the dashboard's "last errors" ring (JSON lines, before pretty-printing).
  // Every line also feeds the dashboard's live log tail.
  const keep = (l: string) => {
    recentProblems.take(l);
    logTail.take(l);
  };
  if (options.file) return fileLogger(options, secrets, destination, pretty, keep);
  const sink = pretty
    ? new RedactingStream(loadPretty()({ destination, colorize: Boolean((destination as NodeJS.WriteStream).isTTY), sync: true, ignore: 'pid,hostname' }), () => secrets, keep)
    : new RedactingStream(destination, () => secrets, keep);
  const logger = pino(
    {
      level: options.level ?? 'info',
      base: undefined,
      // Belt and braces: known secret-bearing fields are dropped even before the value redactor runs.
      redact: REDACT_FIELDS,
    },
    sink,
  );
  if (pretty) prettyLoggers.add(logger);
  return logger;
}

/**
 * Every line (JSON) to `options.file`, warnings and errors also to `destination` (readable when `pretty`). The dashboard's
 * log tail and "last errors" read the file's lines, so they see everything as usual.
 */
function fileLogger(options: LoggerOptions, secrets: string[], destination: NodeJS.WritableStream, pretty: boolean, keep: (line: string) => void): Logger {
  const file = options.file as string;
  mkdirSync(path.dirname(file), { recursive: true });
  if (existsSync(file) && statSync(file).size > LOG_FILE_ROLL_BYTES) renameSync(file, `${file}.1`);
  // Synchronous writes: the last lines before a crash are in the file.
  const fileStream = pino.destination({ dest: file, sync: true, append: true, mode: 0o600 });
  // One line per warning on the terminal (its fields are in the file): a chat screen, not a log viewer.
  const terminal = pretty ? loadPretty()({ destination, colorize: Boolean((destination as NodeJS.WriteStream).isTTY), sync: true, ignore: 'pid,hostname', hideObject: true }) : destination;
  const logger = pino(
    {
      level: options.level ?? 'info',
      base: undefined,
      redact: REDACT_FIELDS,
    },
    pino.multistream([
      { level: 'trace', stream: new RedactingStream(fileStream as unknown as NodeJS.WritableStream, () => secrets, keep) },
      { level: 'warn', stream: new RedactingStream(terminal, () => secrets) },
    ]),
  );
  return logger;
}
