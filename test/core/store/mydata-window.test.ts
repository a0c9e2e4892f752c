import { expect } from 'chai';
import { storedHistory } from '../../helpers/disk-text.js';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import sinon from 'sinon';
import { FakeGateway } from '../../fakes/openai-gateway.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

const ANA = '10000000001@s.whatsapp.net';
const MINUTE = 60_000;

/** The first text reply of a push. */
const textOf = (actions: unknown[]) => (actions.find((a) => (a as { type?: string }).type === 'text') as { text?: string } | undefined)?.text ?? '';

describe('.mydata delete confirm is taken only within its 5-minute window', function () {
  this.timeout(30_000);
  let gw: FakeGateway;
  let t: TestBot;
  let clock: sinon.SinonFakeTimers;
  before(async () => {
    gw = await FakeGateway.start('primary');
  });
  after(() => gw.close());
  beforeEach(async () => {
    t = await startTestBot('bundled', { env: { API_KEY: 'test-key-123456', BASE_URL: `${gw.url}/v1`, MODEL: 'm' }, config: {} });
    await t.transport.push({ senderId: ANA, text: 'ana keeps her diary here' });
    // Only the clock moves; the bot's own timers run as usual.
    clock = sinon.useFakeTimers({ now: Date.now(), toFake: ['Date'] });
  });
  afterEach(async () => {
    clock.restore();
    await t.stop();
    await rm(t.dir, { recursive: true, force: true });
  });

  const history = async () => {
    await t.app.bot.histories.flush();
    return storedHistory(path.join(t.dir, 'data'), ANA).map((e) => e.text).join('\n');
  };

  it('a confirmation 5 minutes and 1 second after the question deletes nothing and says the question expired', async () => {
    expect(textOf(await t.transport.push({ senderId: ANA, text: '.mydata delete' }))).to.match(/confirm within 5 minutes/);
    clock.tick(5 * MINUTE + 1000);
    const late = await t.transport.push({ senderId: ANA, text: '.mydata delete confirm' });
    expect(textOf(late)).to.match(/no delete waiting for confirmation \(it expires after 5 minutes\)/);
    expect(await history()).to.include('ana keeps her diary here');
    // The expired question is gone for good: confirming again at once does not revive it.
    expect(textOf(await t.transport.push({ senderId: ANA, text: '.mydata delete confirm' }))).to.match(/no delete waiting/);
    expect(await history()).to.include('ana keeps her diary here');
  });

  it('a confirmation 4 minutes 59 seconds after the question deletes', async () => {
    await t.transport.push({ senderId: ANA, text: '.mydata delete' });
    clock.tick(5 * MINUTE - 1000);
    expect(textOf(await t.transport.push({ senderId: ANA, text: '.mydata delete confirm' }))).to.match(/^Done: I deleted everything/);
    expect(await history()).to.not.include('ana keeps her diary here');
  });
});
