import { expect } from 'chai';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { FakeGateway } from '../../fakes/openai-gateway.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { tempDir } from '../../helpers/checkout.js';
import { domainFor } from '../../../core/services/store/data-domain.js';

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

  it('with flushIntervalMs 60000, answered messages leave usage.json and budgets.json unwritten until stop, which writes every token', async () => {
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
      const files = await readdir(path.join(dir, 'data'));
      expect(files).not.to.include('usage.json');
      expect(files).not.to.include('budgets.json');
    } finally {
      await t.stop();
    }
    // 15 tokens per answer (the fake gateway's usage), two answers.
    const usage = JSON.parse(await readFile(path.join(dir, 'data', 'usage.json'), 'utf8'));
    expect(usage.totals.main).to.equal(30);
    expect(Object.values(usage.days).flatMap((day) => Object.values(day as Record<string, { requests: number }>)).map((c) => c.requests)).to.deep.equal([2]);
    const budgets = JSON.parse(await readFile(path.join(dir, 'data', 'budgets.json'), 'utf8'));
    expect(Object.values(budgets.tokens)).to.deep.equal([30]);
  });
});
