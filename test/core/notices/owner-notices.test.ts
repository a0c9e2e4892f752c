import { expect } from 'chai';
import sinon from 'sinon';
import { createLogger } from '../../../core/services/log/logger.js';
import { OwnerNotices } from '../../../core/services/notices/owner-notices.js';
import { definePlugin } from '../../../core/index.js';
import { createApp } from '../../../app/app.js';
import { MemoryTransport } from '../../../core/adapters/memory/memory-transport.js';
import { startTestBot, type TestBot, type TestClock } from '../../../app/testing/index.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { PassThrough } from 'node:stream';

const OWNERS = ['6281200000001', '6281200000002'];
const quiet = definePlugin({ name: 'quiet', description: 'nothing', setup: () => ({}) });
const fakeTimers = () => sinon.useFakeTimers({ now: Date.now(), toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'], shouldClearNativeTimers: true });

describe('owner notices (through the app)', () => {
  let t: TestBot | undefined;
  let clock: TestClock | undefined;
  afterEach(async () => {
    clock?.restore();
    clock = undefined;
    await t?.stop();
    t = undefined;
  });

  const noticeTexts = () => t!.transport.actions.filter((a) => a.type === 'text').map((a) => a.type === 'text' && `${a.chatId} ${a.text}`);

  it("reaches each owner's private chat once per incident and once on recovery, and is logged", async () => {
    t = await startTestBot([quiet], { config: { owners: OWNERS } });
    clock = t.useClock();
    const notices = t.app.bot.host('quiet').notices;
    expect(notices).to.equal(t.app.notices).and.equal(t.app.bot.notices);

    notices.raise('disk-low', 'Free space is below 200 MB.');
    notices.raise('disk-low', 'Free space is below 150 MB.');
    await clock.tick(60_000);
    notices.raise('disk-low', 'Free space is below 100 MB.');
    await clock.tick(60_000);
    expect(noticeTexts()).to.have.members(OWNERS.map((o) => `${o}@s.whatsapp.net ⚠️ Free space is below 200 MB.`));
    expect(noticeTexts()).to.have.length(2);

    notices.recover('disk-low', 'Free space is back above 200 MB.');
    notices.recover('disk-low', 'Free space is back above 200 MB.');
    await clock.tick(60_000);
    expect(noticeTexts()).to.have.length(4);
    expect(noticeTexts().slice(2)).to.have.members(OWNERS.map((o) => `${o}@s.whatsapp.net ✅ Free space is back above 200 MB.`));

    const logged = t.logs().filter((l) => l.incident === 'disk-low').map((l) => l.msg);
    expect(logged).to.deep.equal(['Free space is below 200 MB.', 'Free space is back above 200 MB.']);
  });

  it('without owners: log only, said once at start', async () => {
    t = await startTestBot([quiet], { config: { owners: [] } });
    clock = t.useClock();
    t.app.notices.raise('logged-out', 'WhatsApp logged the bot out.');
    t.app.notices.recover('logged-out', 'Linked again.');
    await clock.tick(10 * 60_000);
    expect(t.transport.actions).to.deep.equal([]);
    expect(t.logs().filter((l) => /no owners/.test(l.msg))).to.have.length(1);
    expect(t.logs().filter((l) => l.incident === 'logged-out').map((l) => l.msg)).to.deep.equal(['WhatsApp logged the bot out.', 'Linked again.']);
  });

  it('a notice raised before the transport is connected waits for it', async () => {
    const dir = await tempDir();
    await writeConfig(dir, { owners: [OWNERS[0]], sending: { perChatPerMinute: 60, globalPerMinute: 600, jitterMs: 0 } });
    const silent = createLogger({ level: 'silent', pretty: false, destination: new PassThrough(), secrets: [] });
    const app = await createApp({ cwd: dir, env: { PATH: process.env.PATH ?? '', API_KEY: 'k-123456', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm' }, plugins: [quiet], logger: silent, skipHealthProbe: true });
    try {
      app.notices.raise('early', 'Raised before the connection.');
      // Whatever the raise does at once is done (it has no transport to send to yet).
      await new Promise(setImmediate);
      const transport = new MemoryTransport();
      await app.connect(transport);
      await transport.until(() => transport.actions.length);
      expect(transport.actions.map((a) => a.type === 'text' && `${a.chatId} ${a.text}`)).to.deep.equal([`${OWNERS[0]}@s.whatsapp.net ⚠️ Raised before the connection.`]);
    } finally {
      await app.stop();
    }
  });
});

describe('owner notices: never a flood', () => {
  let clock: sinon.SinonFakeTimers;
  let sent: string[];
  let notices: OwnerNotices;
  let limits: { minIntervalMinutes: number; maxPerHour: number };
  beforeEach(() => {
    clock = fakeTimers();
    sent = [];
    limits = { minIntervalMinutes: 30, maxPerHour: 3 };
    notices = new OwnerNotices({
      log: createLogger({ level: 'silent', pretty: false, destination: new PassThrough(), secrets: [] }),
      owners: () => ['111'],
      sendToOwner: async (_owner, text) => void sent.push(text),
      limits: () => limits,
    });
  });
  afterEach(() => {
    notices.stop();
    clock.restore();
  });

  it('an incident that comes back within the minimum interval is told once the interval is over, if it lasts', async () => {
    notices.raise('key-rejected:second', 'The second gateway rejected its key.');
    notices.recover('key-rejected:second', 'The second gateway accepts its key again.');
    notices.raise('key-rejected:second', 'The second gateway rejected its key again.');
    await clock.tickAsync(29 * 60_000);
    expect(sent).to.deep.equal(['⚠️ The second gateway rejected its key.', '✅ The second gateway accepts its key again.']);
    await clock.tickAsync(2 * 60_000);
    expect(sent).to.have.length(3);
    expect(sent[2]).to.equal('⚠️ The second gateway rejected its key again.');
  });

  it('a flap that is over before the interval ends is not told at all (nor its recovery)', async () => {
    notices.raise('flap', 'down');
    notices.recover('flap', 'up');
    notices.raise('flap', 'down again');
    notices.recover('flap', 'up again');
    await clock.tickAsync(2 * 60 * 60_000);
    expect(sent).to.deep.equal(['⚠️ down', '✅ up']);
  });

  it('a link-down incident is not sent over the link that broke: one late notice with the time and the recovery once it is back', async () => {
    const raisedAt = Date.now();
    notices.raise('logged-out', 'WhatsApp logged the bot out: scan the new QR.', { linkDown: true });
    await clock.tickAsync(3 * 60 * 60_000);
    expect(sent).to.deep.equal([]);
    expect(notices.incidents()).to.deep.equal([{ key: 'logged-out', text: 'WhatsApp logged the bot out: scan the new QR.', active: true, since: raisedAt, recoveredAt: undefined, linkDown: true }]);
    notices.recover('logged-out', 'WhatsApp is linked again.');
    await clock.tickAsync(0);
    const when = `${new Date(raisedAt).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
    expect(sent).to.deep.equal([`⚠️ Late notice (from ${when}, when WhatsApp could not carry it): WhatsApp logged the bot out: scan the new QR.\n✅ WhatsApp is linked again.`]);
    expect(notices.incidents()[0]).to.include({ active: false, recoveredAt: raisedAt + 3 * 60 * 60_000 });
    // An ordinary incident is still told at once.
    notices.raise('disk-low', 'Free space is below 200 MB.');
    await clock.tickAsync(0);
    expect(sent.at(-1)).to.equal('⚠️ Free space is below 200 MB.');
    expect(notices.incidents().map((i) => i.key)).to.deep.equal(['disk-low', 'logged-out']);
  });

  it('caps incident notices per hour over all keys; the rest go out when the hour frees a slot', async () => {
    for (let i = 0; i < 5; i++) notices.raise(`k${i}`, `incident ${i}`);
    await clock.tickAsync(0);
    expect(sent).to.deep.equal(['⚠️ incident 0', '⚠️ incident 1', '⚠️ incident 2']);
    notices.recover('k4', 'k4 over');
    await clock.tickAsync(61 * 60_000);
    expect(sent.slice(3)).to.deep.equal(['⚠️ incident 3']);
  });
});
