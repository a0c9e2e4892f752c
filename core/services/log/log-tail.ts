/** One log line as the dashboard's live tail shows it (already redacted). */
export interface TailLine {
  seq: number;
  time: number;
  level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';
  msg: string;
  part?: string;
}

const LEVELS: Record<number, TailLine['level']> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
export const LEVEL_RANK: Record<TailLine['level'], number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

/**
 * The last log lines, for the dashboard's log view, with listeners for the live tail (server-sent events).
 * Fed with each redacted JSON line before pretty-printing.
 *
 * @example const off = logTail.subscribe((line) => send(line)); … off();
 */
export class LogTail {
  private readonly items: TailLine[] = [];
  private readonly listeners = new Set<(line: TailLine) => void>();
  private seq = 0;
  constructor(private readonly size = 300) {}

  take(raw: string): void {
    if (!raw.startsWith('{')) return;
    try {
      const entry = JSON.parse(raw) as { level: number; time: number; msg?: string; plugin?: string; part?: string; err?: { message?: string } };
      const level = LEVELS[entry.level];
      if (!level) return;
      const line: TailLine = {
        seq: ++this.seq,
        time: entry.time,
        level,
        msg: `${entry.msg ?? ''}${entry.err?.message ? `: ${entry.err.message}` : ''}`.slice(0, 1000),
        part: entry.plugin ?? entry.part,
      };
      this.items.push(line);
      if (this.items.length > this.size) this.items.shift();
      for (const listener of this.listeners) listener(line);
    } catch {
      /* not a JSON line */
    }
  }

  /** Oldest first, at or above `level`. */
  list(level: TailLine['level'] = 'trace'): TailLine[] {
    return this.items.filter((l) => LEVEL_RANK[l.level] >= LEVEL_RANK[level]);
  }

  subscribe(listener: (line: TailLine) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** The process-wide tail the service logger feeds. */
export const logTail = new LogTail();
