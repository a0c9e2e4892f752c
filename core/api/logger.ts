/**
 * The logger a plugin gets (`host.log`, `ctx.log`): structured lines, an object of fields first, then the message.
 * The bot's logger (pino) is one; described here without pino so the plugin API package needs no dependency on it.
 *
 * @example
 * host.log.info({ chat: ctx.chatId, took: ms }, 'reminder sent');
 */
export interface LogFn {
  (fields: object, message?: string, ...args: unknown[]): void;
  (message: string, ...args: unknown[]): void;
}

export interface Logger {
  trace: LogFn;
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  fatal: LogFn;
  /** A logger whose every line carries `bindings` too (e.g. `{ plugin: 'remind' }`). */
  child(bindings: Record<string, unknown>): Logger;
  /** The lowest level written: 'trace', 'debug', 'info', 'warn', 'error', 'fatal' or 'silent'. */
  level: string;
}
