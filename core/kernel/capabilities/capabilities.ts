import type { CapabilityStatus } from '../../api/capability-status.js';
/**
 * ✔ usable, ⚠ usable but impaired, – off (not set up: optional), ✘ missing: the one symbol the start log, `.status`
 * and the dashboard show.
 */
export function capabilityMark(status: CapabilityStatus): '✔' | '⚠' | '–' | '✘' {
  return !status.ok ? (status.notConfigured ? '–' : '✘') : status.degraded ? '⚠' : '✔';
}

/** The state in one word: available, impaired, off (not set up) or missing. */
export function capabilityWord(status: CapabilityStatus): 'available' | 'impaired' | 'off' | 'missing' {
  return !status.ok ? (status.notConfigured ? 'off' : 'missing') : status.degraded ? 'impaired' : 'available';
}

interface Entry {
  detect: () => Promise<CapabilityStatus> | CapabilityStatus;
  live?: () => CapabilityStatus;
  /** The live check's `ok` alone, without its words: `has` and `lacks` are asked several times per message. */
  liveOk?: () => boolean;
  detected?: CapabilityStatus;
  /** The fix in words for when it is missing, whichever check (start or live) says so. */
  fix?: string;
}

/**
 * The capabilities the bot has: detected once at start (one start-log table) and, for those that change at run
 * time (audio keys exhausted, every chat provider cooling down), re-checked through a `live` check when used.
 *
 * @example
 * capabilities.define('python', async () => ({ ok: true, detail: 'Python 3.11.7' }));
 * await capabilities.detectAll();
 * capabilities.missing(['python', 'sandbox']); // ['sandbox'] when bubblewrap does not work
 */
export class Capabilities {
  private readonly entries = new Map<string, Entry>();

  /** Declares (or replaces) a capability's detector, optional run-time check and the fix said when it is missing. */
  define(name: string, detect: Entry['detect'], live?: Entry['live'], fix?: string): void {
    const previous = this.entries.get(name);
    this.entries.set(name, { detect, live, detected: previous?.detected, fix: fix ?? previous?.fix });
  }

  /**
   * Replaces only the run-time check of a capability (e.g. the audio key pool's live state). `ok`, when given, must
   * say what `live().ok` says, cheaply: `has` and `lacks` then ask it instead of making the status with its words.
   *
   * @example capabilities.setLive('audio', () => pool.status(), () => pool.usableCount() > 0);
   */
  setLive(name: string, live: () => CapabilityStatus, ok?: () => boolean): void {
    const entry = this.entries.get(name);
    if (entry) {
      entry.live = live;
      entry.liveOk = ok;
    } else this.entries.set(name, { detect: live, live, liveOk: ok });
  }

  known(name: string): boolean {
    return this.entries.has(name);
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  /** Runs every detector in parallel; one that throws is reported as missing with its message. */
  async detectAll(): Promise<void> {
    await Promise.all(
      [...this.entries.values()].map(async (entry) => {
        try {
          entry.detected = await entry.detect();
        } catch (err) {
          entry.detected = { ok: false, detail: `check failed: ${(err as Error).message}` };
        }
      }),
    );
  }

  /** Current status: the live check when there is one, else what was detected at start (with the fix when missing). */
  status(name: string): CapabilityStatus {
    const entry = this.entries.get(name);
    if (!entry) return { ok: false, detail: 'nothing provides this capability' };
    const status = this.currentStatus(entry);
    return !status.ok && !status.fix && entry.fix ? { ...status, fix: entry.fix } : status;
  }

  private currentStatus(entry: Entry): CapabilityStatus {
    if (entry.live) {
      try {
        return entry.live();
      } catch (err) {
        return { ok: false, detail: `check failed: ${(err as Error).message}` };
      }
    }
    return entry.detected ?? { ok: false, detail: 'not checked yet' };
  }

  has(name: string): boolean {
    const entry = this.entries.get(name);
    if (!entry) return false;
    const liveOk = entry.liveOk;
    // Asked for every plugin's and tool's needs on every message: only `ok` is wanted, so no status with its fix is made.
    if (!liveOk) return this.currentStatus(entry).ok;
    try {
      return liveOk();
    } catch {
      return false;
    }
  }

  /** The names in `needs` that are not available right now. */
  missing(needs: readonly string[]): string[] {
    // Asked for every plugin on every message: most plugins need nothing.
    if (!needs.length) return [];
    return needs.filter((n) => !this.has(n));
  }

  /** True when one of `needs` is not available right now (`missing` without making the list). */
  lacks(needs: readonly string[]): boolean {
    for (const name of needs) if (!this.has(name)) return true;
    return false;
  }

  /** Every capability with its status, for the start log and the dashboard. */
  report(): Array<{ name: string } & CapabilityStatus> {
    return this.names().map((name) => ({ name, ...this.status(name) }));
  }
}
