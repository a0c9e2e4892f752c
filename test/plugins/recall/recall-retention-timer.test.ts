import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sinon from 'sinon';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import recall from '../../../plugins/recall/index.js';
import { storedSearchLogText } from '../../helpers/disk-text.js';

const ANA = '10000000001@s.whatsapp.net';
const DAY = 24 * 60 * 60 * 1000;

describe('recall: the daily retention sweep', function () {
  this.timeout(20_000);
  let dir: string;
  let bot: TestBot | undefined;
  let clock: sinon.SinonFakeTimers | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'recall-retention-'));
  });
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
    clock?.restore();
    clock = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  /** The recall log's rows as the store database holds them on disk. */
  const onDisk = async () => storedSearchLogText(path.join(dir, 'data'), 'recall', 'recall');

  it('removes messages that grew older than retentionDays while the bot runs, from disk and search, and keeps newer ones', async () => {
    // Only the clock and the intervals are fake: file work and the fake model run on real time.
    clock = sinon.useFakeTimers({ now: Date.now(), toFake: ['setInterval', 'clearInterval', 'Date'] });
    bot = await startTestBot(recall, { dir, options: { retentionDays: 2 }, model: () => 'noted' });
    const start = Date.now();
    await bot.send({ text: 'the old harbour address is pelican lane', senderId: ANA, timestamp: start - 1.5 * DAY });
    await bot.send({ text: 'the new harbour address is heron street', senderId: ANA, timestamp: start - 0.5 * DAY });
    assert.match((await bot.send({ text: '.recall harbour', senderId: ANA }))[0], /^🔎 2 messages/);
    assert.match(await onDisk(), /pelican lane/, 'younger than two days at start: kept by the start sweep');

    // A day later the old message is 2.5 days old, the new one 1.5: only the timer can have removed it.
    clock.tick(DAY);
    await bot.app.bot.whenStoresIdle();
    assert.doesNotMatch(await onDisk(), /pelican lane/);
    assert.match(await onDisk(), /heron street/);
    const [answer] = await bot.send({ text: '.recall harbour', senderId: ANA });
    assert.match(answer, /^🔎 1 message in this chat about "harbour":[\s\S]*heron street/);
    assert.ok(bot.logs().some((l) => l.removed === 1 && /dropped messages past retention/.test(String(l.msg))), 'the sweep is logged');
  });
});
