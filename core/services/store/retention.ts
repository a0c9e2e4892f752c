import { lstat, opendir, realpath, rmdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../log/logger.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** One folder under the data dir and how long its files are kept. */
export interface RetentionRule {
  /** Folder name directly under the data dir, e.g. `media`. */
  folder: string;
  maxAgeDays: number;
}

/** The data layout's retention: incoming media 30 days, files the bot produced 7 days. */
export const RETENTION_RULES: readonly RetentionRule[] = [
  { folder: 'media', maxAgeDays: 30 },
  { folder: 'generated', maxAgeDays: 7 },
];

/** What one sweep of one folder did. */
export interface SweepReport {
  folder: string;
  maxAgeDays: number;
  /** Paths removed, relative to the folder. */
  removed: string[];
  bytes: number;
  /** Set when the folder was skipped on purpose (e.g. it is a symlink). */
  skipped?: string;
}

export interface RetentionOptions {
  dataDir: string;
  log: Logger;
  /** Clock for tests; default Date.now. */
  now?: () => number;
  /** Time between sweeps; default one day. */
  intervalMs?: number;
  rules?: readonly RetentionRule[];
}

/** Where a part with data past its retention (a plugin's stores, the WhatsApp adapter's) adds its sweep to the daily pass. */
export interface DailySweeps {
  /**
   * Runs `sweep` in every daily pass from now on (not at once: the part sweeps itself at start). Returns the remover,
   * for when the part stops.
   */
  add(name: string, sweep: () => Promise<unknown>): () => void;
}

export interface RetentionSweeper extends DailySweeps {
  /**
   * Sweeps every folder, then runs every added sweep, now; resolves with what was removed from the folders. A failing
   * sweep is logged and the others still run. Overlapping calls share one pass.
   */
  sweepNow(): Promise<SweepReport[]>;
  /** Resolves once the pass under way (if any) is done. */
  whenSwept(): Promise<void>;
  /** Stops the daily timer (a sweep in progress finishes). */
  stop(): void;
}

/**
 * Removes old files under `dir` (a folder inside `root`). Never follows a symlink: a link inside the folder is
 * judged (and removed) as the link itself, never its target, and a linked directory is not entered. Sub-folders
 * that were old and are empty afterwards are removed; `root` itself is kept. Returns true when something was kept.
 */
async function sweepFolder(dir: string, root: string, cutoff: number, report: SweepReport, log: Logger): Promise<boolean> {
  let handle;
  try {
    handle = await opendir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') log.warn({ folder: dir, err: (err as Error).message }, 'retention: cannot read folder');
    return true;
  }
  let keptSomething = false;
  for await (const entry of handle) {
    const full = path.join(dir, entry.name);
    try {
      // lstat, not stat: the age and kind of the entry itself, never of what a link points to.
      const info = await lstat(full);
      if (info.isDirectory()) {
        // Judge the folder's age before sweeping it: removing files inside updates its mtime.
        const oldFolder = info.mtimeMs < cutoff;
        const keptInside = await sweepFolder(full, root, cutoff, report, log);
        // A fresh empty folder may be a job's temp folder about to be filled: only old ones go.
        if (!keptInside && oldFolder) await rmdir(full);
        else keptSomething = true;
        continue;
      }
      if (info.mtimeMs < cutoff) {
        await unlink(full);
        report.removed.push(path.relative(root, full));
        report.bytes += info.isFile() ? info.size : 0;
      } else {
        keptSomething = true;
      }
    } catch (err) {
      keptSomething = true;
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') log.warn({ file: full, err: (err as Error).message }, 'retention: could not remove an old file');
    }
  }
  return keptSomething;
}

/**
 * Sweeps `data/media/` (files older than 30 days) and `data/generated/` (older than 7 days) once at start and then
 * daily, and logs what it removed. It is the bot's one retention timer: the plugins' stores and the WhatsApp adapter
 * `add` their own sweeps (logs past `keepDays`), which run in the same daily pass. It never touches anything outside those folders: it does not follow symlinks,
 * and a folder that is itself a symlink is skipped with a warning (deleting by age through a link could reach files
 * elsewhere on the machine).
 *
 * @example
 * const sweeper = startRetentionSweeper({ dataDir: settings.dataDir, log });
 * // on shutdown:
 * sweeper.stop();
 */
export function startRetentionSweeper(options: RetentionOptions): RetentionSweeper {
  const now = options.now ?? Date.now;
  const rules = options.rules ?? RETENTION_RULES;
  const log = options.log;
  let running: Promise<SweepReport[]> | undefined;
  const added = new Set<{ name: string; sweep: () => Promise<unknown> }>();

  async function sweepOne(rule: RetentionRule): Promise<SweepReport> {
    const report: SweepReport = { folder: rule.folder, maxAgeDays: rule.maxAgeDays, removed: [], bytes: 0 };
    const root = path.join(options.dataDir, rule.folder);
    let info;
    try {
      info = await lstat(root);
    } catch {
      return report; // nothing stored yet
    }
    if (info.isSymbolicLink() || !info.isDirectory()) {
      report.skipped = info.isSymbolicLink() ? `is a symlink (to ${await realpath(root).catch(() => '?')}); not swept` : 'is not a folder';
      log.warn({ folder: root }, `retention: ${root} ${report.skipped}`);
      return report;
    }
    await sweepFolder(root, root, now() - rule.maxAgeDays * DAY_MS, report, log);
    if (report.removed.length) {
      log.info(
        { folder: root, count: report.removed.length, bytes: report.bytes, removed: report.removed.slice(0, 50) },
        `retention: removed ${report.removed.length} file(s) older than ${rule.maxAgeDays} days from ${rule.folder}/`,
      );
    } else {
      log.debug({ folder: root }, `retention: nothing older than ${rule.maxAgeDays} days in ${rule.folder}/`);
    }
    return report;
  }

  const sweepNow = (): Promise<SweepReport[]> => {
    running ??= (async () => {
      try {
        // The parts' sweeps start at once (each marks itself under way, so a part's whenSwept waits for it), beside
        // the folders; one part's failure stays its own: the others are swept, and the bot stays up.
        const parts = [...added].map(async ({ name, sweep }) => {
          try {
            await sweep();
          } catch (err) {
            log.error({ err, part: name }, `retention: the sweep of ${name} failed (tried again tomorrow)`);
          }
        });
        const reports: SweepReport[] = [];
        for (const rule of rules) {
          try {
            reports.push(await sweepOne(rule));
          } catch (err) {
            log.error({ err, folder: rule.folder }, `retention: sweeping ${rule.folder}/ failed (tried again tomorrow)`);
          }
        }
        await Promise.all(parts);
        return reports;
      } finally {
        running = undefined;
      }
    })();
    return running;
  };

  const runLogged = () => {
    sweepNow().catch((err) => log.error({ err }, 'retention: sweep failed'));
  };
  runLogged();
  const timer = setInterval(runLogged, options.intervalMs ?? DAY_MS);
  timer.unref();
  return {
    sweepNow,
    add(name, sweep) {
      const entry = { name, sweep };
      added.add(entry);
      return () => void added.delete(entry);
    },
    whenSwept: async () => void (await running?.catch(() => undefined)),
    stop: () => clearInterval(timer),
  };
}
