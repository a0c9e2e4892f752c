import { expect } from 'chai';
import { Writable } from 'node:stream';
import { createLogger } from '../../../core/services/log/logger.js';
import { UserBudgets } from '../../../core/services/providers/budgets.js';
import { UsageLedger } from '../../../core/services/providers/usage.js';
import { storedDocuments } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

const quietLog = () => createLogger({ level: 'silent', pretty: false, destination: new Writable({ write: (_c, _e, done) => done() }) });

/** The core's counters document (`usage`, `budgets`) as the store database in `dir` holds it on disk. */
const stored = (dir: string, name: 'usage' | 'budgets'): any => storedDocuments(dir, 'core', name)[''];

/**
 * Runs `step` back to back for `ms` (a busy bot: a change arrives during every write) and counts the writes of the
 * core's `name` document meanwhile: every step changes the counts, so each stored value seen is one write. Sampled
 * after every step (a missed write only lowers the count). Returns the writes seen and the steps run.
 */
async function countWrites(dir: string, name: 'usage' | 'budgets', ms: number, step: () => Promise<void> | void): Promise<{ writes: number; steps: number }> {
  const seen = new Set<string>();
  const until = Date.now() + ms;
  let steps = 0;
  while (Date.now() < until) {
    await step();
    steps++;
    // A turn of the event loop, as a bot's message handling has: the interval's timer may fire.
    await new Promise((resolve) => setImmediate(resolve));
    const doc = stored(dir, name);
    if (doc) seen.add(JSON.stringify(doc));
  }
  return { writes: seen.size, steps };
}

describe('counters under a steady stream of messages (issue 24)', function () {
  this.timeout(20_000);
  const folder = storeFolderPerTest({ prefix: 'wabot-counters-' });

  // Changes back to back for 1.2 s against a 300 ms interval: at most 5 writes. Writing again as soon as a write
  // ended (a change always arrives during one) made this a write after write with their fsyncs, hundreds of them.
  it('usage is written about once per flush interval, not write after write', async () => {
    const intervalMs = 300;
    const usage = new UsageLedger(folder.dir, quietLog(), intervalMs);
    await usage.load();
    const { writes, steps } = await countWrites(folder.dir, 'usage', 1200, () => usage.record('primary', 'm', 'main', { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 }, 'u1'));
    expect(writes).to.be.within(1, 5, `${writes} writes of the usage in 1.2 s`);
    await usage.flush();
    const doc = stored(folder.dir, 'usage');
    const day = Object.values(doc.days)[0] as Record<string, { requests: number; total: number }>;
    expect(day['primary|m']).to.include({ requests: steps, total: 12 * steps });
  });

  it('budgets are written about once per flush interval, and flush() writes the last change at once', async () => {
    const intervalMs = 300;
    const budgets = new UserBudgets(folder.dir, Date.now, intervalMs);
    await budgets.load();
    const { writes, steps } = await countWrites(folder.dir, 'budgets', 1200, () => budgets.spend('u1', false, 5));
    expect(writes).to.be.within(1, 5, `${writes} writes of the budgets in 1.2 s`);
    await budgets.spend('u1', false, 5);
    await budgets.flush();
    expect(stored(folder.dir, 'budgets').tokens.u1).to.equal((steps + 1) * 5);
  });
});
