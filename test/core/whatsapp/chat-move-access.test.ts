import { expect } from 'chai';
import pingPlugin from '../../../plugins/ping/index.js';
import { startFakeSocketBot, type FakeSocketBot } from '../../../app/testing/fake-socket-bot.js';
import { isSentText, waText } from '../../fakes/baileys-socket.js';
import { allTexts } from '../../../app/testing/fake-model.js';

const ALICE = '6281200000007@s.whatsapp.net';
const ALICE_LID = '44400000000007@lid';

/** A chat first seen by its LID, then with its phone: what the owner set for it moves with it. */
describe('WhatsApp: a chat moving from its LID to its phone keeps its takeover pause and persona (fake socket)', function () {
  this.timeout(30_000);
  let bot: FakeSocketBot | undefined;
  // Each message its own turn at once: a burst's 1.5 s window (bursts.test.ts's subject) would wait in real time here.
  const oneTurnEach = { conversation: { debounceMs: 0 } };
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });

  it('the owner paused the chat (.bot off) while it was known by its LID: once its phone is learnt the bot stays quiet there', async () => {
    bot = await startFakeSocketBot(pingPlugin, { config: oneTurnEach });
    await bot.deliver(waText('.bot off', { from: ALICE_LID, fromMe: true }));
    expect(bot.app.bot.access.paused().map((p) => p.chatId)).to.deep.equal([ALICE_LID]);
    const sent = await bot.deliver(waText('hello, anyone?', { from: ALICE_LID, fromAlt: ALICE }));
    expect(sent.filter(isSentText)).to.deep.equal([]);
    expect(bot.model.requests).to.have.length(0);
    expect(bot.app.bot.access.paused().map((p) => p.chatId)).to.deep.equal([ALICE]);
  });

  it("the persona set while the chat was known by its LID (dashboard) still shapes the answers once its phone is learnt", async () => {
    bot = await startFakeSocketBot(pingPlugin, { config: { ...oneTurnEach, access: { mode: 'everyone' } } });
    await bot.app.bot.access.setPersona(ALICE_LID, 'Always answer like a pirate.', 'owner');
    await bot.deliver(waText('hello, anyone?', { from: ALICE_LID, fromAlt: ALICE }));
    expect(bot.model.requests).to.have.length(1);
    expect(allTexts(bot.model.requests[0]!).join('\n')).to.include('Always answer like a pirate.');
    expect(bot.app.bot.access.persona(ALICE)).to.equal('Always answer like a pirate.');
    expect(bot.app.bot.access.persona(ALICE_LID)).to.equal(undefined);
  });
});
