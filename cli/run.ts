import { handleStopSignals } from '../core/services/lifecycle/stop-signals.js';
import type { App } from '../app/app.js';
import { ConfigError } from '../core/services/config/config-file.js';
import { SettingsError } from '../core/services/config/settings.js';
import { InstanceLockedError } from '../core/services/lifecycle/instance-lock.js';
import { PluginError } from '../core/api/errors.js';

/** A start-up problem the owner can fix, told in one line without a stack (a port in use, say). */
export class CannotStartError extends Error {}

/** The one line for a web port another program holds: which port, and how to fix it. */
export function portInUseMessage(port: number, host: string): string {
  return `port ${port} on ${host} is already in use (is another copy of the bot running?). Stop the program that holds it, or set another "port" in config.json (0 picks a free one).`;
}

/**
 * Runs a CLI entry point: a settings/config problem is printed as one clear message (no stack) and exits 1;
 * anything else prints the stack and exits 1.
 */
export async function runCli(main: () => Promise<void>): Promise<void> {
  try {
    await main();
  } catch (err) {
    if (err instanceof SettingsError || err instanceof ConfigError || err instanceof PluginError || err instanceof InstanceLockedError || err instanceof CannotStartError) {
      process.stderr.write(`\nCannot start: ${err.message}\n\n`);
    } else {
      process.stderr.write(`\nCannot start: ${(err as Error).stack ?? String(err)}\n\n`);
    }
    process.exitCode = 1;
  }
}

/** Writes out whatever is pending on stdout and stderr, then exits (a bare process.exit() can lose piped lines). */
export function exitAfterFlush(code: number): void {
  let pending = 2;
  const done = () => {
    if (--pending === 0) process.exit(code);
  };
  process.stdout.write('', done);
  process.stderr.write('', done);
}

/**
 * SIGTERM/SIGINT stop the app the same way in every entry point: no new messages, those being handled finish
 * (bounded by `shutdown.graceSeconds`), stores flush, the web server closes; exit 0, or 1 naming what could not be
 * saved. A second signal exits at once. Returns the stop, for an entry point that ends on its own (end of input).
 */
export function stopOnSignals(app: App, server: { close(): Promise<void> }): () => Promise<void> {
  return handleStopSignals({
    log: app.log,
    stop: async () => {
      try {
        await app.stop();
      } finally {
        await server.close();
      }
    },
    exit: exitAfterFlush,
    hardLimitMs: app.config.shutdown.graceSeconds * 1000 + 20_000,
  });
}
