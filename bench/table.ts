import type { ScenarioResult } from './result.js';

const fmt = (v: number) => {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  return a >= 1000 ? Math.round(v).toLocaleString('en-US') : a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : v.toFixed(2);
};

/**
 * The results as a plain-text table (one block per scenario), then the sanity checks.
 *
 * @example console.log(renderTable(results));
 */
export function renderTable(results: ScenarioResult[]): string {
  const rows: string[][] = [['metric', 'median', 'p99', 'unit', 'n', 'target', '']];
  const titles = new Map<number, string>();
  for (const r of results) {
    titles.set(rows.length, r.skipped ? `${r.title}: skipped: ${r.skipped}` : r.title);
    for (const m of r.metrics) {
      rows.push([`  ${m.name}`, fmt(m.median), fmt(m.p99), m.unit, String(m.n), m.target ?? '', m.target ? (m.met ? 'met' : 'MISSED') : '']);
      if (m.note) rows.push([`    (${m.note})`, '', '', '', '', '', '']);
    }
  }
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => (r[c].startsWith('    (') ? 0 : r[c].length))));
  const out: string[] = [];
  rows.forEach((r, i) => {
    const title = titles.get(i);
    if (title) out.push('', title);
    if (r[0].startsWith('    (')) out.push(r[0]);
    else out.push(r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : c <= 2 || c === 4 ? cell.padStart(widths[c]) : cell.padEnd(widths[c]))).join('  ').trimEnd());
  });
  out.push('', 'sanity checks:');
  for (const r of results) for (const c of r.checks) out.push(`  ${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`);
  return out.join('\n');
}
