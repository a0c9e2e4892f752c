import { expect } from 'chai';
import { storedHistory } from '../../helpers/disk-text.js';
import path from 'node:path';
import { FakeGateway } from '../../fakes/openai-gateway.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

const ANA = '10000000001@s.whatsapp.net';

/** The first text reply of a push. */
const textOf = (actions: unknown[]) => (actions.find((a) => (a as { type?: string }).type === 'text') as { text?: string } | undefined)?.text ?? '';

describe('.mydata delete: two bots in one process keep their own pending confirmations', function () {
  this.timeout(60_000);
  let gw: FakeGateway;
  let a: TestBot | undefined;
  let b: TestBot | undefined;
  before(async () => {
    gw = await FakeGateway.start('primary');
  });
  after(() => gw.close());
  afterEach(async () => {
    for (const t of [a, b]) await t?.stop();
    a = b = undefined;
  });

  const history = async (t: TestBot) => {
    await t.app.bot.histories.flush();
    return JSON.stringify(storedHistory(path.join(t.dir, 'data'), ANA));
  };

  it('a confirm in bot B neither deletes nor uses up the delete Ana asked for in bot A', async () => {
    const env = { API_KEY: 'test-key-123456', BASE_URL: `${gw.url}/v1`, MODEL: 'm' };
    a = await startTestBot('bundled', { env });
    b = await startTestBot('bundled', { env });
    await a.transport.push({ senderId: ANA, text: 'ana keeps her diary in bot A' });
    await b.transport.push({ senderId: ANA, text: 'ana keeps her shopping list in bot B' });

    expect(textOf(await a.transport.push({ senderId: ANA, text: '.mydata delete' }))).to.match(/confirm within 5 minutes/);
    // Same person, other bot: nothing is waiting there, and nothing is deleted in either bot.
    expect(textOf(await b.transport.push({ senderId: ANA, text: '.mydata delete confirm' }))).to.match(/no delete waiting for confirmation/);
    expect(await history(b)).to.include('ana keeps her shopping list in bot B');
    expect(await history(a)).to.include('ana keeps her diary in bot A');

    // Bot A's question is still there: its confirm deletes in bot A only.
    expect(textOf(await a.transport.push({ senderId: ANA, text: '.mydata delete confirm' }))).to.match(/^Done: I deleted everything/);
    expect(await history(a)).to.not.include('ana keeps her diary in bot A');
    expect(await history(b)).to.include('ana keeps her shopping list in bot B');
  });
});
