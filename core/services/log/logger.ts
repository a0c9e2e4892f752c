import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import { createRequire } from 'node:module';
import { recentProblems } from './recent-problems.js';
import { logTail } from './log-tail.js';

export type { Logger } from 'pino';

const REDACTED = '[redacted]';

/**
 * Replaces every secret value in a text. Used on every log line and on any text that could carry an upstream's
 * error body.
 *
 * @example redact('key sk-123 failed', ['sk-123']) // 'key [redacted] failed'
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret && out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
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
  const secrets = [...(options.secrets ?? [])];
  const destination = options.destination ?? process.stderr;
  const pretty = options.pretty ?? Boolean((destination as NodeJS.WriteStream).isTTY);
  // Warnings and errors also go to the dashboard's "last errors" ring (JSON lines, before pretty-printing).
  // Every line also feeds the dashboard's live log tail.
  const keep = (l: string) => {
    recentProblems.take(l);
    logTail.take(l);
  };
  const sink = pretty
    ? new RedactingStream(loadPretty()({ destination, colorize: Boolean((destination as NodeJS.WriteStream).isTTY), sync: true, ignore: 'pid,hostname' }), () => secrets, keep)
    : new RedactingStream(destination, () => secrets, keep);
  const logger = pino(
    {
      level: options.level ?? 'info',
      base: undefined,
      // Belt and braces: known secret-bearing fields are dropped even before the value redactor runs.
      redact: { paths: ['apiKey', '*.apiKey', 'token', '*.token', 'headers.authorization', '*.headers.authorization'], censor: REDACTED },
    },
    sink,
  );
  if (pretty) prettyLoggers.add(logger);
  return logger;
}
