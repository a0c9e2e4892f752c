import { statfs } from 'node:fs/promises';
import type { Logger } from '../log/logger.js';
import type { OwnerNotifier } from '../notices/owner-notifier.js';

export interface FreeSpace {
  freeBytes: number;
  totalBytes: number;
  /** Below the configured threshold. */
  low: boolean;
  checkedAt: number;
}

export interface DiskWatch {
  /** The last measurement (undefined until the first one, or where statfs is not available). */
  current(): FreeSpace | undefined;
  /** Measures now, tells the owners on a change between low and enough. */
  check(): Promise<FreeSpace | undefined>;
  stop(): void;
}

const MB = 1024 * 1024;

/** "1.2 GB" / "180 MB": free space as owners read it. */
export function formatBytes(bytes: number): string {
  return bytes >= 1024 * MB ? `${(bytes / 1024 / MB).toFixed(1)} GB` : `${Math.floor(bytes / MB)} MB`;
}

/**
 * Watches the free space of the data folder (`fs.statfs`): owners are told (notice `disk-low`) when it falls below
 * `thresholdMb`, before writes start failing, and told again when it is back.
 *
 * @example const disk = await startDiskWatch({ dataDir, thresholdMb: () => 200, log, notices: () => bot.notices });
 */
export async function startDiskWatch(options: {
  dataDir: string;
  thresholdMb: () => number;
  log: Logger;
  notices: () => OwnerNotifier;
  intervalMs?: number;
}): Promise<DiskWatch> {
  let last: FreeSpace | undefined;
  let wasLow = false;
  async function check(): Promise<FreeSpace | undefined> {
    try {
      const s = await statfs(options.dataDir);
      const freeBytes = Number(s.bavail) * Number(s.bsize);
      const threshold = options.thresholdMb() * MB;
      last = { freeBytes, totalBytes: Number(s.blocks) * Number(s.bsize), low: threshold > 0 && freeBytes < threshold, checkedAt: Date.now() };
    } catch (err) {
      options.log.debug({ err }, 'could not measure the free space of the data folder');
      return last;
    }
    if (last.low && !wasLow) {
      options.log.warn({ dataDir: options.dataDir, freeBytes: last.freeBytes }, `the data folder has only ${formatBytes(last.freeBytes)} free`);
      options.notices().raise('disk-low', `The data folder ${options.dataDir} has only ${formatBytes(last.freeBytes)} free (threshold ${options.thresholdMb()} MB). Free some space before writes start failing.`);
    } else if (!last.low && wasLow) {
      options.notices().recover('disk-low', `The data folder has ${formatBytes(last.freeBytes)} free again.`);
    }
    wasLow = last.low;
    return last;
  }
  await check();
  const timer = setInterval(() => void check(), options.intervalMs ?? 60_000);
  timer.unref();
  return { current: () => last, check, stop: () => clearInterval(timer) };
}
