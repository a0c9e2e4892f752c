import type { Logger } from '../../services/log/logger.js';

/**
 * What libsignal (Baileys' Signal library) prints with `console.info` / `console.warn` when it opens, closes or
 * migrates a session: the line's words, followed by the whole session record — its root key and the ratchet's
 * private key among them. Those must never reach a log, so these lines are kept to their words, at debug.
 */
const LIBSIGNAL_LINES = [
  'Closing session',
  'Opening session',
  'Removing old closed session',
  'Session already closed',
  'Session already open',
  'Migrating session to',
  'Closing open session in favor of incoming prekey bundle',
  'Decrypted message with closed session',
];

type ConsoleLike = Pick<Console, 'info' | 'warn'>;

let installed: { target: ConsoleLike; log: Logger; undo: () => void } | undefined;

/**
 * Routes libsignal's session lines on `target` (the global console) to `log` at debug, without the session record;
 * every other console line passes through unchanged. Installed once per target; a later call moves the lines to its
 * logger (the transport started last). Returns the undo.
 *
 * @example
 * quietSignalConsole(log); // then a session change logs { line: 'Closing session:' } at debug, no keys
 */
export function quietSignalConsole(log: Logger, target: ConsoleLike = console): () => void {
  if (installed?.target === target) {
    installed.log = log;
    return installed.undo;
  }
  const original = { info: target.info, warn: target.warn };
  const filtered = (level: 'info' | 'warn') =>
    (...args: unknown[]): void => {
      const first = args[0];
      if (typeof first === 'string' && LIBSIGNAL_LINES.some((line) => first.startsWith(line))) {
        (installed?.target === target ? installed.log : log).debug({ line: first }, 'Signal session change (libsignal; its session record is not logged)');
        return;
      }
      original[level].apply(target, args);
    };
  target.info = filtered('info');
  target.warn = filtered('warn');
  const undo = () => {
    target.info = original.info;
    target.warn = original.warn;
    if (installed?.target === target) installed = undefined;
  };
  installed = { target, log, undo };
  return undo;
}
