/** Summary of a sample set: the numbers the bench reports for every measured quantity. */
export interface Summary {
  n: number;
  median: number;
  p95: number;
  p99: number;
  min: number;
  max: number;
  mean: number;
}

/**
 * The p-th percentile by nearest rank (p in 0..100) of numbers sorted ascending.
 *
 * @example percentile([1, 2, 3, 4], 50) // 2
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (!sorted.length) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/**
 * Median, p95, p99, min, max and mean of a sample set.
 *
 * @example summarize([3, 1, 2]).median // 2
 */
export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const mean = sorted.reduce((s, v) => s + v, 0) / (sorted.length || 1);
  return { n: sorted.length, median: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99), min: sorted[0] ?? NaN, max: sorted[sorted.length - 1] ?? NaN, mean };
}

/**
 * Least-squares slope of y over x (units of y per unit of x); 0 for fewer than two points.
 *
 * @example slope([0, 1, 2], [10, 12, 14]) // 2
 */
export function slope(x: readonly number[], y: readonly number[]): number {
  const n = Math.min(x.length, y.length);
  if (n < 2) return 0;
  const mx = x.slice(0, n).reduce((s, v) => s + v, 0) / n;
  const my = y.slice(0, n).reduce((s, v) => s + v, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (x[i] - mx) * (y[i] - my);
    den += (x[i] - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** Rounds for display and JSON (3 significant decimals are plenty for ms). */
export function round(value: number, digits = 3): number {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** A summary with every number rounded. */
export function rounded(s: Summary, digits = 3): Summary {
  return Object.fromEntries(Object.entries(s).map(([k, v]) => [k, k === 'n' ? v : round(v, digits)])) as unknown as Summary;
}

/**
 * Runs the floor and the bot once each, the order flipped every pair (A/B), so drift and noise hit both alike.
 *
 * @example const [floorMs, botMs] = await abPair(i, floorOnce, botOnce);
 */
export async function abPair<T>(i: number, floor: () => T | Promise<T>, bot: () => T | Promise<T>): Promise<[T, T]> {
  if (i % 2 === 0) {
    const f = await floor();
    return [f, await bot()];
  }
  const b = await bot();
  return [await floor(), b];
}
