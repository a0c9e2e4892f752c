import { expect } from 'chai';
import { readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { createLogger } from '../../../core/services/log/logger.js';
import { UserBudgets } from '../../../core/services/providers/budgets.js';
import { UsageLedger } from '../../../core/services/providers/usage.js';
import { tempDir } from '../../helpers/checkout.js';

const quietLog = () => createLogger({ level: 'silent', pretty: false, destination: new Writable({ write: (_c, _e, done) => done() }) });

/**
 * Runs `step` back to back for `ms` (a busy bot: a change arrives during every write) and counts the atomic
 * replacements of `file` meanwhile: each write renames a new file over it. Sampled after every
 * step (a missed write only lowers the count). Returns the writes seen and the steps run.
 */
async function countReplacements(file: string, ms: number, step: () => Promise<void> | void): Promise<{ writes: number; steps: number }> {
  const seen = new Set<string>();
  const until = Date.now() + ms;
  let steps = 0;
  while (Date.now() < until) {
    await step();
    steps++;
    // The inode alone is reused by the next file at once; with the nanosecond change time it names one write.
    const st = await stat(file, { bigint: true }).catch(() => undefined);
    if (st) seen.add(`${st.ino}:${st.ctimeNs}`);
  }
  return { writes: seen.size, steps };
}

describe('counters under a steady stream of messages (issue 24)', function () {
  this.timeout(20_000);
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir('wabot-counters-');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  // Changes back to back for 1.2 s against a 300 ms interval: at most 5 writes. Writing again as soon as a write
  // ended (a change always arrives during one) made this a write after write with their fsyncs, hundreds of them.
  it('usage.json is written about once per flush interval, not write after write', async () => {
    const intervalMs = 300;
    const usage = new UsageLedger(dir, quietLog(), intervalMs);
    await usage.load();
    const file = path.join(dir, 'usage.json');
    const { writes, steps } = await countReplacements(file, 1200, () => usage.record('primary', 'm', 'main', { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 }, 'u1'));
    expect(writes).to.be.within(1, 5, `${writes} writes of usage.json in 1.2 s`);
    await usage.flush();
    const doc = JSON.parse(await readFile(file, 'utf8'));
    const day = Object.values(doc.days)[0] as Record<string, { requests: number; total: number }>;
    expect(day['primary|m']).to.include({ requests: steps, total: 12 * steps });
  });

  it('budgets.json is written about once per flush interval, and flush() writes the last change at once', async () => {
    const intervalMs = 300;
    const budgets = new UserBudgets(dir, Date.now, intervalMs);
    await budgets.load();
    const file = path.join(dir, 'budgets.json');
    const { writes, steps } = await countReplacements(file, 1200, () => budgets.spend('u1', false, 5));
    expect(writes).to.be.within(1, 5, `${writes} writes of budgets.json in 1.2 s`);
    await budgets.spend('u1', false, 5);
    await budgets.flush();
    expect(JSON.parse(await readFile(file, 'utf8')).tokens.u1).to.equal((steps + 1) * 5);
  });
});
