import type { Logger } from '../log/logger.js';

/** Exit codes of a stop: 0 clean, 1 data not saved (or the stop failed), 128+n when a second signal cut it short. */
const SIGNAL_EXIT: Record<string, number> = { SIGINT: 130, SIGTERM: 143 };

export interface StopSignalsOptions {
  log: Logger;
  /** The whole clean stop; rejects (naming what was not saved) when data could not be saved. Called once. */
  stop: () => Promise<void>;
  /** Exits after stdout/stderr are flushed. */
  exit: (code: number) => void;
  /** After this long the stop is given up and the process exits 1 (a hung socket must not keep it forever). */
  hardLimitMs: number;
}

/**
 * Makes a process stop cleanly on SIGTERM/SIGINT: the first signal runs `stop` once and exits 0, or 1 with the
 * reason on stderr when data could not be saved; a second signal exits at once. Returns `stopOnce`, the same
 * memoised stop, for the other ways a process ends (end of console input).
 *
 * @example
 * const stopOnce = handleStopSignals({ log, stop: () => app.stop(), exit: exitAfterFlush, hardLimitMs: 30_000 });
 */
export function handleStopSignals(options: StopSignalsOptions): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  const stopOnce = () => (stopping ??= options.stop());
  let received: string | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (received) {
      process.stderr.write(`\nSecond ${signal} while stopping: exiting at once; messages being handled and unsaved data are lost.\n`);
      process.exit(SIGNAL_EXIT[signal] ?? 1);
    }
    received = signal;
    options.log.info({ signal }, `${signal}: stopping (no new messages; those being handled may finish; send it again to exit at once)`);
    const watchdog = setTimeout(() => {
      process.stderr.write(`\nThe stop did not finish within ${Math.round(options.hardLimitMs / 1000)} s: exiting without waiting further; data may not be saved.\n`);
      options.exit(1);
    }, options.hardLimitMs);
    watchdog.unref();
    stopOnce().then(
      () => {
        options.log.info('stopped cleanly');
        options.exit(0);
      },
      (err: Error) => {
        reportUnsaved(options.log, err);
        options.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return stopOnce;
}

/** One clear line on stderr (and the log) when the stop could not save everything. */
export function reportUnsaved(log: Logger, err: Error): void {
  log.error({ err }, `stopped, but not cleanly: ${err.message}`);
  process.stderr.write(`\nStopped, but not cleanly: ${err.message}\n\n`);
}
