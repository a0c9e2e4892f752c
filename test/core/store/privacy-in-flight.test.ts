import { expect } from 'chai';
import path from 'node:path';
import { completion, FakeGateway, lastUserText } from '../../fakes/openai-gateway.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { everyFileText } from '../../helpers/disk-text.js';

const ANA = '10000000001@s.whatsapp.net';
const GROUP = '120363000000000049@g.us';
const BOT = '62899999999';

/**
 * A person's delete while the bot is still answering them elsewhere (issue 49): the answer, which may repeat their
 * words, comes back after the delete and must not bring them back.
 */
describe('privacy: a delete while an answer to the person is still being made', function () {
  this.timeout(30_000);
  let gw: FakeGateway;
  let t: TestBot;
  afterEach(async () => {
    await t?.stop();
    await gw?.close();
  });

  it(".mydata delete while the bot answers the person in a group: the answer that comes back after it is not kept", async () => {
    gw = await FakeGateway.start('gw');
    t = await startTestBot('bundled', { env: { API_KEY: 'k', BASE_URL: gw.url, MODEL: 'm' } });
    t.app.bot.setConfig({ ...t.app.config, groups: { ...t.app.config.groups, policy: 'open' }, targetUserIds: [BOT] });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let asked!: () => void;
    const requested = new Promise<void>((resolve) => (asked = resolve));
    gw.next(async (req) => {
      asked();
      await held;
      return { status: 200, json: completion(`gw: ${lastUserText(req)}`) };
    });
    const answered = t.transport.push({ id: 'ana-asks', chatId: GROUP, senderId: ANA, senderName: 'Ana', text: `@${BOT} my bike lock is 66204`, mentions: [`${BOT}@s.whatsapp.net`] });
    await requested;
    await t.app.bot.privacy.deleteFor([ANA]);
    release();
    const replies = await answered;
    expect(replies.map((r) => (r as { text?: string }).text).join(' ')).to.include('66204');
    await t.app.bot.idle();
    await t.app.bot.histories.flush();
    expect((await t.app.bot.histories.recent(GROUP)).map((e) => e.text).join(' ')).to.not.include('66204');
    expect(await everyFileText(path.join(t.dir, 'data'), 'latin1')).to.not.include('66204');
  });
});
