import { expect } from 'chai';
import { copyFile, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import sinon from 'sinon';
import { createLogger } from '../../../core/services/log/logger.js';
import { UserBudgets } from '../../../core/services/providers/budgets.js';
import { UsageLedger } from '../../../core/services/providers/usage.js';
import { domainFor } from '../../../core/services/store/data-domain.js';
import { closeDatabase } from '../../../core/services/store/database.js';
import { storedDocuments } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

/** Waits for the writes under way in `dir` (the fake clock started them). */
const writesDone = (dir: string) => domainFor(dir).whenNotWriting();

/** The core's counters document (`usage`, `budgets`) as the store database in `dir` holds it on disk, or undefined before its first write. */
const readStored = (dir: string, name: 'usage' | 'budgets'): any => storedDocuments(dir, 'core', name)[''];

/** The document once the write under way has landed; it must hold what `ready` looks for. */
async function waitForStored(dir: string, name: 'usage' | 'budgets', ready: (doc: any) => boolean): Promise<any> {
  await writesDone(dir);
  const doc = readStored(dir, name);
  if (doc === undefined || !ready(doc)) throw new Error(`${name} does not hold the expected counts: ${JSON.stringify(doc)}`);
  return doc;
}

describe('counters (usage, budgets in the store database): written once per flush interval and at stop, never per message', function () {
  this.timeout(30000);
  const start = Date.parse('2026-11-22T10:00:00Z');
  const day = '2026-11-22';
  let clock: sinon.SinonFakeTimers | undefined;
  const folder = storeFolderPerTest({
    closing: () => {
      clock?.restore();
      clock = undefined;
    },
  });
  let warnings: string[];
  const log = () => {
    const sink = new PassThrough();
    sink.on('data', (chunk: Buffer) => warnings.push(...chunk.toString().split('\n').filter(Boolean).map((l) => JSON.parse(l).msg as string)));
    return createLogger({ level: 'warn', pretty: false, destination: sink });
  };
  beforeEach(() => {
    warnings = [];
  });

  /** Nine messages 100 ms apart (fake time), each followed by the write it may have started. */
  async function nineMessages(send: () => Promise<void> | void): Promise<void> {
    for (let i = 0; i < 9; i++) {
      await send();
      await clock!.tickAsync(100);
      await writesDone(folder.dir);
    }
  }

  it('usage: a burst of messages is one write when the interval is over, with every count; the next interval waits its turn', async () => {
    clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: start, shouldClearNativeTimers: true });
    const usage = new UsageLedger(folder.dir, log(), 1000);
    await usage.load();
    const message = () => usage.record('primary', 'main-a', 'main', { prompt_tokens: 10, completion_tokens: 5 }, 'user-1');

    await nineMessages(message);
    expect(readStored(folder.dir, 'usage'), 'usage written before the interval was over').to.equal(undefined);
    await clock.tickAsync(100);
    const first = await waitForStored(folder.dir, 'usage', (doc) => doc.days?.[day]?.['primary|main-a']?.requests === 9);
    expect(first.days[day]['primary|main-a']).to.deep.equal({ prompt: 90, completion: 45, total: 135, requests: 9 });
    expect(first.totals).to.deep.equal({ main: 135, premium: 0 });

    // The next messages start the next interval: the stored counts are left alone until it is over.
    await nineMessages(message);
    expect(readStored(folder.dir, 'usage').days[day]['primary|main-a'].requests, 'usage rewritten within one interval').to.equal(9);
    await clock.tickAsync(100);
    const second = await waitForStored(folder.dir, 'usage', (doc) => doc.days[day]['primary|main-a'].requests === 18);
    expect(second.totals.main).to.equal(270);
  });

  it('usage: stop writes what was counted a moment before, even before the first load finished', async () => {
    // A long interval: only the stop can have written it. The date fixed: the day the usage is counted under is known.
    clock = sinon.useFakeTimers({ toFake: ['Date'], now: start });
    const usage = new UsageLedger(folder.dir, log(), 60_000);
    usage.record('primary', 'main-a', 'main', { prompt_tokens: 7, completion_tokens: 3 }, 'user-1');
    usage.record('primary', 'premium-a', 'premium', { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, 'user-1');
    await usage.flush();
    const doc = readStored(folder.dir, 'usage');
    expect(doc?.days?.[day]).to.deep.equal({
      'primary|main-a': { prompt: 7, completion: 3, total: 10, requests: 1 },
      'primary|premium-a': { prompt: 1, completion: 1, total: 2, requests: 1 },
    });
    expect(doc.totals).to.deep.equal({ main: 10, premium: 2 });
    // The next start reads them back.
    closeDatabase(folder.dir);
    const again = new UsageLedger(folder.dir, log(), 60_000);
    expect((await again.snapshot()).totals).to.deep.equal({ main: 10, premium: 2 });
  });

  it('usage: a count made while the usage is being written is written too (at stop at the latest)', async () => {
    clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: start, shouldClearNativeTimers: true });
    const usage = new UsageLedger(folder.dir, log(), 1000);
    await usage.load();
    usage.record('primary', 'main-a', 'main', { total_tokens: 4 });
    // The interval is over: the write starts (and is still under way: it waits for the real file system).
    await clock.tickAsync(1000);
    usage.record('primary', 'main-a', 'main', { total_tokens: 6 });
    await usage.flush();
    expect(readStored(folder.dir, 'usage').totals.main).to.equal(10);
  });

  it("usage: the day's cached input adds up over requests (each request's cached part counted, none overwritten)", async () => {
    clock = sinon.useFakeTimers({ toFake: ['Date'], now: start });
    const usage = new UsageLedger(folder.dir, log(), 60_000);
    usage.record('primary', 'main-a', 'main', { prompt_tokens: 1200, completion_tokens: 30, prompt_tokens_details: { cached_tokens: 1024 } });
    usage.record('primary', 'main-a', 'main', { prompt_tokens: 10, completion_tokens: 2 });
    usage.record('primary', 'main-a', 'main', { prompt_tokens: 900, completion_tokens: 9, prompt_tokens_details: { cached_tokens: 512 } });
    await usage.flush();
    const doc = readStored(folder.dir, 'usage');
    expect(doc.days[day]['primary|main-a']).to.deep.equal({ prompt: 2110, cached: 1536, completion: 41, total: 2151, requests: 3 });
  });

  it('usage: the owner is warned once when a role reaches 80% of its quota, not before', async () => {
    const usage = new UsageLedger(folder.dir, log(), 60_000);
    usage.setQuotas(100, 0);
    usage.record('primary', 'main-a', 'main', { total_tokens: 79 });
    await usage.flush();
    expect(warnings.filter((w) => /80% of its token quota/.test(w))).to.deep.equal([]);
    usage.record('primary', 'main-a', 'main', { total_tokens: 1 });
    usage.record('primary', 'main-a', 'main', { total_tokens: 5 });
    await usage.flush();
    expect(warnings.filter((w) => /80% of its token quota/.test(w))).to.deep.equal(['main model has used 80% of its token quota']);
  });

  it('budgets: spending is written once the interval is over, not per message, and at stop', async () => {
    clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: start, shouldClearNativeTimers: true });
    const budgets = new UserBudgets(folder.dir, Date.now, 1000);
    await budgets.load();
    await nineMessages(() => budgets.spend('user-1', false, 10));
    expect(readStored(folder.dir, 'budgets'), 'budgets written before the interval was over').to.equal(undefined);
    await clock.tickAsync(100);
    await waitForStored(folder.dir, 'budgets', (doc) => doc.tokens?.['user-1'] === 90);
    // A premium answer counts against the premium budget and the daily one; the stop writes it at once.
    await budgets.spend('user-1', true, 5);
    await clock.tickAsync(500);
    await writesDone(folder.dir);
    expect(readStored(folder.dir, 'budgets').tokens, 'budgets rewritten within one interval').to.deep.equal({ 'user-1': 90 });
    await budgets.flush();
    const doc = readStored(folder.dir, 'budgets');
    expect(doc).to.deep.include({ day, tokens: { 'user-1': 95 }, premiumTokens: { 'user-1': 5 } });
    closeDatabase(folder.dir);
    expect(await new UserBudgets(folder.dir, Date.now, 1000).todayByUser()).to.deep.equal([{ userId: 'user-1', tokens: 95, premiumTokens: 5 }]);
  });

  it('budgets: a new UTC day starts every user at zero (what yesterday spent no longer refuses)', async () => {
    let now = Date.parse('2026-11-22T23:59:00Z');
    const budgets = new UserBudgets(folder.dir, () => now, 60_000);
    const limits = { requestsPerMinute: 0, tokensPerDay: 20, premiumTokensPerDay: 10, quotaMainTokens: 0, quotaPremiumTokens: 0, maxToolRounds: 3, maxToolCallsPerRound: 8, maxToolCallsPerMessage: 20, maxMemoryWritesPerMessage: 5, toolCallsPerDay: 2, showProvider: false, maxAnswerChars: 16_000, outageNoticeMinutes: 0, cacheControl: false };
    await budgets.spend('user-1', true, 25);
    expect([await budgets.takeToolCall('user-1', 2), await budgets.takeToolCall('user-1', 2), await budgets.takeToolCall('user-1', 2)]).to.deep.equal([true, true, false]);
    expect((await budgets.check('user-1', false, limits)).ok).to.equal(false);
    expect((await budgets.check('user-1', true, limits)).ok).to.equal(false);
    now += 2 * 60_000;
    expect(await budgets.check('user-1', true, limits)).to.deep.equal({ ok: true });
    expect(await budgets.check('user-1', false, limits)).to.deep.equal({ ok: true });
    expect(await budgets.takeToolCall('user-1', 2)).to.equal(true);
    expect(await budgets.toolCallsToday('user-1')).to.equal(1);
    await budgets.flush();
    expect(readStored(folder.dir, 'budgets')).to.deep.include({ day: '2026-11-23', tokens: {}, premiumTokens: {} });
  });

  it('usage.json and budgets.json of an earlier version are taken in once at the first start and kept aside under migrated/', async () => {
    const now = Date.parse('2026-11-22T12:00:00Z');
    const usageFile = '{"version":1,"days":{"2026-11-22":{"primary|main-a":{"prompt":70,"completion":30,"total":100,"requests":4}}},"totals":{"main":100,"premium":0},"warned":{"main":false,"premium":false}}';
    const budgetsFile = '{"version":1,"day":"2026-11-22","tokens":{"user-1":100},"premiumTokens":{}}';
    await writeFile(path.join(folder.dir, 'usage.json'), usageFile);
    await writeFile(path.join(folder.dir, 'budgets.json'), budgetsFile);
    const usage = new UsageLedger(folder.dir, log(), 60_000);
    const budgets = new UserBudgets(folder.dir, () => now, 60_000);
    expect((await usage.snapshot()).totals).to.deep.equal({ main: 100, premium: 0 });
    expect(await budgets.todayByUser()).to.deep.equal([{ userId: 'user-1', tokens: 100, premiumTokens: 0 }]);
    // Gone from data/, kept byte for byte under data/migrated/.
    expect((await readdir(folder.dir)).filter((n) => n.endsWith('.json'))).to.deep.equal([]);
    expect(await readFile(path.join(folder.dir, 'migrated', 'usage.json'), 'utf8')).to.equal(usageFile);
    expect(await readFile(path.join(folder.dir, 'migrated', 'budgets.json'), 'utf8')).to.equal(budgetsFile);

    // Counting goes on from there; a crash after the take-in and before the move leaves the file in place: the next
    // start must not take it in again over what was counted since.
    usage.record('primary', 'main-a', 'main', { total_tokens: 20 }, 'user-1');
    await budgets.spend('user-1', false, 20);
    await Promise.all([usage.flush(), budgets.flush()]);
    closeDatabase(folder.dir);
    await copyFile(path.join(folder.dir, 'migrated', 'usage.json'), path.join(folder.dir, 'usage.json'));
    await copyFile(path.join(folder.dir, 'migrated', 'budgets.json'), path.join(folder.dir, 'budgets.json'));
    expect((await new UsageLedger(folder.dir, log(), 60_000).snapshot()).totals).to.deep.equal({ main: 120, premium: 0 });
    expect(await new UserBudgets(folder.dir, () => now, 60_000).todayByUser()).to.deep.equal([{ userId: 'user-1', tokens: 120, premiumTokens: 0 }]);
    expect((await readdir(folder.dir)).filter((n) => n.endsWith('.json'))).to.deep.equal([]);
  });

  it('a usage.json or budgets.json that is no counters document is set aside with its bytes, and counting starts at zero', async () => {
    await writeFile(path.join(folder.dir, 'usage.json'), '[null, 7]');
    await writeFile(path.join(folder.dir, 'budgets.json'), '{"day": 5}');
    const usage = new UsageLedger(folder.dir, log(), 60_000);
    const budgets = new UserBudgets(folder.dir, Date.now, 60_000);
    expect((await usage.snapshot()).totals).to.deep.equal({ main: 0, premium: 0 });
    expect(await budgets.todayByUser()).to.deep.equal([]);
    const aside = (await readdir(folder.dir)).filter((n) => n.includes('.corrupt-')).sort();
    expect(aside.map((n) => n.replace(/-\d+$/, ''))).to.deep.equal(['budgets.json.corrupt', 'usage.json.corrupt']);
    expect(await readFile(path.join(folder.dir, aside[1]), 'utf8')).to.equal('[null, 7]');
    expect(await readFile(path.join(folder.dir, aside[0]), 'utf8')).to.equal('{"day": 5}');
  });
});
