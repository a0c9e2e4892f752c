import assert from 'node:assert/strict';
import { mkdir, rm, utimes, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import sinon from 'sinon';
import { definePlugin, Store, Type, type PluginStore } from '../../../core/index.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import recall from '../../../plugins/recall/index.js';
import { tempDir } from '../../helpers/checkout.js';
import { storedSearchLogText } from '../../helpers/disk-text.js';

const ANA = '10000000001@s.whatsapp.net';
const DAY = 24 * 60 * 60 * 1000;

const Said = Type.Object({ text: Type.String(), by: Type.String(), at: Type.Number() });
const SAID = Store.chatLog('said', Said, { people: { author: (s) => s.by }, keepDays: 30, at: (s) => s.at });
let opened: PluginStore | undefined;
const sayings = definePlugin({
  name: 'sayings',
  description: 'Keeps what was said per chat for 30 days',
  stores: [SAID],
  setup(host) {
    opened = host.store;
    return {};
  },
});

describe('retention: one daily timer for the whole bot', function () {
  this.timeout(30_000);
  let dir: string;
  let bot: TestBot | undefined;
  let clock: sinon.SinonFakeTimers | undefined;
  let intervals: sinon.SinonSpy | undefined;
  // The spy lives in its own sandbox: in sinon's default one, a later file's `sinon.restore()` would restore it a
  // second time and put back what it wrapped, this test's fake setInterval, freezing that worker's timers.
  let spies: sinon.SinonSandbox | undefined;

  beforeEach(async () => {
    dir = await tempDir('one-daily-sweep-');
  });
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
    spies?.restore();
    spies = undefined;
    intervals = undefined;
    clock?.restore();
    clock = undefined;
    opened = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it("a day later a plugin's log, a tuned search log and a media file past their days are gone, by one daily interval", async () => {
    // Only the clock and the intervals are fake: file work and the fake model run on real time.
    clock = sinon.useFakeTimers({ now: Date.now(), toFake: ['setInterval', 'clearInterval', 'Date'] });
    spies = sinon.createSandbox();
    intervals = spies.spy(globalThis, 'setInterval');
    const start = Date.now();
    const media = path.join(dir, 'data', 'media');
    await mkdir(media, { recursive: true });
    const oldPhoto = path.join(media, 'photo-29-and-a-half-days.jpg');
    const newPhoto = path.join(media, 'photo-today.jpg');
    await writeFile(oldPhoto, 'old photo');
    await writeFile(newPhoto, 'new photo');
    const aged = new Date(start - 29.5 * DAY);
    await utimes(oldPhoto, aged, aged);

    bot = await startTestBot([recall, sayings], { dir, options: { retentionDays: 2 }, model: () => 'noted' });
    await bot.send({ text: 'the old harbour address is pelican lane', senderId: ANA, timestamp: start - 1.5 * DAY });
    await bot.send({ text: 'the new harbour address is heron street', senderId: ANA, timestamp: start - 0.5 * DAY });
    await opened!.chat(ANA).log(SAID).append({ text: 'said 29.5 days ago', by: ANA, at: start - 29.5 * DAY });
    await opened!.chat(ANA).log(SAID).append({ text: 'said today', by: ANA, at: start });
    await bot.app.bot.whenStoresIdle();
    await bot.app.dailySweeps.whenSwept();
    const recallOnDisk = () => storedSearchLogText(path.join(dir, 'data'), 'recall', 'recall');
    const said = async () => (await opened!.chat(ANA).log(SAID).read()).map((s) => s.text);
    assert.match(await recallOnDisk(), /pelican lane/, 'within its days at start');
    assert.deepEqual(await said(), ['said 29.5 days ago', 'said today']);
    assert.ok(existsSync(oldPhoto));

    // Every retention in the bot rides on one daily interval (the media sweeper's), whatever the plugins keep.
    const daily = intervals!.getCalls().filter((call) => call.args[1] === DAY);
    assert.equal(daily.length, 1, 'one daily timer');

    clock.tick(DAY);
    await bot.app.dailySweeps.whenSwept();
    await bot.app.bot.whenStoresIdle();
    assert.doesNotMatch(await recallOnDisk(), /pelican lane/, 'the tuned search log (recall, 2 days) was swept');
    assert.match(await recallOnDisk(), /heron street/);
    assert.deepEqual(await said(), ['said today'], "the plugin's log (30 days) was swept");
    assert.equal(existsSync(oldPhoto), false, 'the media file (30 days) was swept');
    assert.equal(existsSync(newPhoto), true);
  });
});
