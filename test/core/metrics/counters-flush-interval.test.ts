import { expect } from 'chai';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { FakeGateway } from '../../fakes/openai-gateway.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { tempDir } from '../../helpers/checkout.js';
import { domainFor } from '../../../core/services/store/data-domain.js';
import { storedDocuments } from '../../helpers/disk-text.js';

describe('the bot writes its counters once per data.flushIntervalMs and at stop', function () {
  this.timeout(20000);
  let gw: FakeGateway;
  let dir: string;
  beforeEach(async () => {
    gw = await FakeGateway.start('primary');
    dir = await tempDir();
  });
  afterEach(async () => {
    await gw.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('with flushIntervalMs 60000, answered messages leave the usage and budgets in the store database unwritten until stop, which writes every token', async () => {
    const t = await startTestBot([], { dir, env: { API_KEY: 'sk-test-secret', BASE_URL: `${gw.url}/v1`, MODEL: 'main-b' }, config: { data: { flushIntervalMs: 60_000 } } });
    try {
      expect(t.transport.texts()).to.deep.equal([]);
      const clock = t.useClock();
      await t.transport.push({ text: 'hello' });
      await t.transport.push({ text: 'and again' });
      expect(t.transport.texts()).to.deep.equal(['primary: hello', 'primary: and again']);
      // Longer than the default interval (1 s): only the configured one may hold the counters back. A write that
      // fell due meanwhile has started: it is waited for.
      await clock.tick(1300);
      await domainFor(path.join(dir, 'data')).whenNotWriting();
      expect(storedDocuments(path.join(dir, 'data'), 'core', 'usage')).to.deep.equal({});
      expect(storedDocuments(path.join(dir, 'data'), 'core', 'budgets')).to.deep.equal({});
    } finally {
      await t.stop();
    }
    // 15 tokens per answer (the fake gateway's usage), two answers.
    const usage = storedDocuments(path.join(dir, 'data'), 'core', 'usage')[''] as any;
    expect(usage.totals.main).to.equal(30);
    expect(Object.values(usage.days).flatMap((day) => Object.values(day as Record<string, { requests: number }>)).map((c) => c.requests)).to.deep.equal([2]);
    const budgets = storedDocuments(path.join(dir, 'data'), 'core', 'budgets')[''] as any;
    expect(Object.values(budgets.tokens)).to.deep.equal([30]);
  });
});
