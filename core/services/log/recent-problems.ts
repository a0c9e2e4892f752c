/** One warning or error the log saw, for the dashboard's "last errors" (already redacted). */
export interface Problem {
  time: number;
  level: 'warn' | 'error' | 'fatal';
  msg: string;
  plugin?: string;
}

const LEVELS: Record<number, Problem['level']> = { 40: 'warn', 50: 'error', 60: 'fatal' };

/**
 * Keeps the last `size` warnings and errors written to the log. Fed with each (redacted) JSON log line.
 *
 * @example const problems = new RecentProblems(); problems.take('{"level":50,"msg":"boom"}'); problems.list();
 */
export class RecentProblems {
  private readonly items: Problem[] = [];
  constructor(private readonly size = 50) {}

  take(line: string): void {
    if (!line.includes('"level":4') && !line.includes('"level":5') && !line.includes('"level":6')) return;
    try {
      const entry = JSON.parse(line) as { level: number; time: number; msg?: string; plugin?: string; err?: { message?: string } };
      const level = LEVELS[entry.level];
      if (!level) return;
      this.items.push({ time: entry.time, level, msg: `${entry.msg ?? ''}${entry.err?.message ? `: ${entry.err.message}` : ''}`.slice(0, 500), plugin: entry.plugin });
      if (this.items.length > this.size) this.items.shift();
    } catch {
      /* not a JSON line */
    }
  }

  /** Newest first. */
  list(): Problem[] {
    return [...this.items].reverse();
  }
}

/** The process-wide ring the service logger feeds. */
export const recentProblems = new RecentProblems();
