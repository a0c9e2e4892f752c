import { chmod, mkdir, rm } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { Logger } from '../log/logger.js';

/** The control channel's folder and socket inside DATA_DIR (owner-only: 0700 folder, 0600 socket). */
export const CONTROL_DIR = '.control';
export const CONTROL_SOCKET = 'bot.sock';

/** The longest unix socket path Linux accepts (sun_path is 108 bytes with its terminator). */
const MAX_SOCKET_PATH = 107;

/** How long a backup may hold the writes before they are let go anyway (a client that died). */
const MAX_HOLD_MS = 120_000;

export function controlSocketPath(dataDir: string): string {
  return path.join(dataDir, CONTROL_DIR, CONTROL_SOCKET);
}

export interface ControlHandlers {
  /** Flushes every store and holds all writes; resolves with the function that lets them go. */
  hold(): Promise<() => void>;
}

/**
 * A local control channel for `npm run backup`: a unix socket in `DATA_DIR/.control/` that only the owner's user can
 * open (the folder is 0700, the socket 0600; unix sockets are checked against those permissions). Line protocol:
 * `hold` → `held` once every store is flushed and writes are held; `release` (or closing the connection) → writes go
 * on (`released`). A hold ends by itself after two minutes.
 */
export async function startControlChannel(dataDir: string, handlers: ControlHandlers, log: Logger): Promise<{ close(): Promise<void> } | undefined> {
  const folder = path.join(dataDir, CONTROL_DIR);
  const socket = controlSocketPath(dataDir);
  if (socket.length > MAX_SOCKET_PATH) {
    log.warn({ socket }, 'the data folder path is too long for the backup control socket: npm run backup will copy without holding writes');
    return undefined;
  }
  await mkdir(folder, { recursive: true, mode: 0o700 });
  await chmod(folder, 0o700);
  // A socket left by a killed bot (the instance lock guarantees no live one uses it).
  await rm(socket, { force: true });
  const server = net.createServer((conn) => {
    let release: (() => void) | undefined;
    let timer: NodeJS.Timeout | undefined;
    const letGo = () => {
      if (timer) clearTimeout(timer);
      release?.();
      release = undefined;
    };
    let buffer = '';
    conn.setEncoding('utf8');
    conn.on('data', (chunk: string) => {
      buffer += chunk;
      let newline;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const command = buffer.slice(0, newline).trim();
        buffer = buffer.slice(newline + 1);
        if (command === 'hold' && !release) {
          handlers
            .hold()
            .then((let_go) => {
              release = let_go;
              timer = setTimeout(() => {
                log.warn('a backup held the writes for two minutes: letting them go');
                letGo();
              }, MAX_HOLD_MS);
              timer.unref();
              log.info('backup: stores flushed, writes held while the data folder is copied');
              conn.write('held\n');
            })
            .catch((err) => {
              log.error({ err }, 'backup: could not hold the writes');
              conn.end(`error ${(err as Error).message}\n`);
            });
        } else if (command === 'release') {
          letGo();
          conn.end('released\n');
        } else {
          conn.end('error unknown command\n');
        }
      }
    });
    conn.on('close', letGo);
    conn.on('error', letGo);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, () => resolve());
  });
  await chmod(socket, 0o600);
  server.unref();
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        void rm(socket, { force: true });
      }),
  };
}
