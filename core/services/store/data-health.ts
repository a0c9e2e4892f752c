import path from 'node:path';
import type { Logger } from '../../api/logger.js';
import type { OwnerNotifier } from '../notices/owner-notifier.js';
import { describeWriteError } from '../../api/errors.js';

/** A data file that was found unreadable or of the wrong shape and moved aside (its bytes kept). */
export interface SetAsideFile {
  file: string;
  movedTo: string;
  reason: string;
  at: number;
}

/** A file whose latest content could not be written (kept in memory, retried). */
export interface UnsavedFile {
  file: string;
  reason: string;
  since: number;
}

/**
 * What is wrong with the data folder right now: files set aside at load, files that could not be written. The log
 * gets one line per file and incident; the owners get one notice per incident (`data-write`) and one on recovery.
 * The app shows `setAside` and `unsaved` on the dashboard and reports unsaved files at stop.
 *
 * Stores find the health of their data folder through `healthFor(file)` (data-domain.ts), so plugin and transport
 * stores report here without being wired one by one.
 */
export class DataHealth {
  readonly setAside: SetAsideFile[] = [];
  private readonly failing = new Map<string, UnsavedFile>();
  private readonly setAsideListeners = new Set<(file: SetAsideFile) => void>();

  constructor(
    readonly root: string,
    private readonly log?: Logger,
    private readonly notices?: () => OwnerNotifier | undefined,
  ) {}

  private name(file: string): string {
    const rel = path.relative(this.root, file);
    return rel && !rel.startsWith('..') ? rel : file;
  }

  /** A file was moved aside at load. */
  corrupt(file: string, movedTo: string, reason: string): void {
    const setAside = { file, movedTo, reason, at: Date.now() };
    this.setAside.push(setAside);
    for (const listener of this.setAsideListeners) {
      try {
        listener(setAside);
      } catch (err) {
        this.log?.warn({ err, file }, 'a listener of set-aside files failed');
      }
    }
    this.log?.warn({ file, movedTo, reason }, `data file ${this.name(file)} was set aside (${reason}); kept its bytes in ${path.basename(movedTo)} and started it empty`);
  }

  /**
   * Calls `listener` with every file set aside from now on (the index of set-aside files keeps itself current from
   * it); returns the function that stops it.
   */
  onSetAside(listener: (file: SetAsideFile) => void): () => void {
    this.setAsideListeners.add(listener);
    return () => void this.setAsideListeners.delete(listener);
  }

  /** A file of an older version was migrated (it is rewritten in the current version). */
  migrated(file: string, from: number, to: number): void {
    this.log?.info({ file, from, to }, `data file ${this.name(file)} migrated from v${from} to v${to}`);
  }

  /** Lines of an append-only log that could not be replayed (a torn last line after a crash) were skipped. */
  skippedLines(file: string, count: number, reason: string): void {
    this.skipped += count;
    this.log?.warn({ file, count, reason }, `data file ${this.name(file)}: skipped ${count} unreadable line(s) (${reason}); everything else was kept`);
  }

  /** How many log lines were skipped at load since start (a crash mid-append leaves at most one per chat). */
  skipped = 0;

  /** A write failed; logged once per file until it succeeds again. */
  writeFailed(file: string, err: unknown): void {
    if (this.failing.has(file)) return;
    const reason = describeWriteError(err);
    this.failing.set(file, { file, reason, since: Date.now() });
    this.log?.error({ file, err: (err as Error)?.message, code: (err as NodeJS.ErrnoException)?.code }, `could not save ${this.name(file)}: ${reason}; keeping it in memory and retrying`);
    if (this.failing.size === 1) this.notices?.()?.raise('data-write', `The bot cannot save its data: ${reason}. Changes are kept in memory and retried; they are lost if the bot stops before the problem is fixed.`);
  }

  /** A file that had failed was written. */
  writeRecovered(file: string): void {
    if (!this.failing.delete(file)) return;
    this.log?.info({ file }, `saved ${this.name(file)} again`);
    if (this.failing.size === 0) this.notices?.()?.recover('data-write', 'The bot can save its data again; nothing pending was lost.');
  }

  /** Files whose latest content is not on disk. */
  unsaved(): UnsavedFile[] {
    return [...this.failing.values()];
  }
}
