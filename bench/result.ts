/** One reported number (a row of the table): its median and p99 over the samples, and its target when it has one. */
export interface Metric {
  name: string;
  unit: string;
  median: number;
  p99: number;
  /** Samples behind median and p99. */
  n: number;
  /** The target, in words (e.g. "median ≤ 1.3"). */
  target?: string;
  /** Whether the target was met (undefined when the metric has no target). */
  met?: boolean;
  note?: string;
}

/** A sanity check: when one fails, the bench exits non-zero (timings never do). */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/** What one scenario reports. */
export interface ScenarioResult {
  id: string;
  title: string;
  metrics: Metric[];
  checks: Check[];
  /** Raw summaries for results.json. */
  data: Record<string, unknown>;
  /** Why a scenario did not run (e.g. the plugin it measures is not installed). */
  skipped?: string;
}

/**
 * Builds a metric row from a median and p99, judging the target on the number it names.
 *
 * @example metric('ratio', 'x', s.median, s.p99, s.n, 'median ≤ 1.3', s.median <= 1.3)
 */
export function metric(name: string, unit: string, median: number, p99: number, n: number, target?: string, met?: boolean, note?: string): Metric {
  const r = (v: number) => (Number.isFinite(v) ? Math.round(v * 10_000) / 10_000 : v);
  return { name, unit, median: r(median), p99: r(p99), n, ...(target ? { target, met } : {}), ...(note ? { note } : {}) };
}
