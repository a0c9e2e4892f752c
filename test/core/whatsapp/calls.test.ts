import { expect } from 'chai';
import { startFakeSocketBot, type FakeSocketBot } from '../../../app/testing/whatsapp.js';
import ping from '../../../plugins/ping/index.js';

const CALLER = '6281233334444@s.whatsapp.net';
const OWNER = '6281299990000';
const GROUP_ID = '120363000000000321@g.us';

/** Incoming calls (issue 54): declined with a message, separately for private chats and groups; never answered. */
describe('WhatsApp: incoming calls (fake socket)', function () {
  this.timeout(60_000);
  let bot: FakeSocketBot | undefined;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });

  /** Rings and resolves once the bot has finished with the call: what it sent meanwhile. */
  async function ring(o: Parameters<FakeSocketBot['socket']['ring']>[0]) {
    const before = bot!.socket.sent.length;
    const id = bot!.socket.ring(o);
    await bot!.transport.idle();
    return { id, sent: bot!.socket.sent.slice(before).map((s) => ({ to: s.jid, text: (s.content as { text?: string }).text })) };
  }

  it("a person's call is declined and answered with the default message; the owners hear nothing by default", async () => {
    bot = await startFakeSocketBot(ping, { config: { owners: [OWNER] } });
    const { id, sent } = await ring({ from: CALLER });
    expect(bot.socket.rejectedCalls).to.deep.equal([{ id, from: CALLER }]);
    expect(sent).to.deep.equal([{ to: CALLER, text: "I can't take calls. Please write to me, or send a voice note." }]);
    // A note to the owners would be queued before the owner's own answer: only that answer reaches them.
    await bot.send('.ping', { from: `${OWNER}@s.whatsapp.net` });
    const toOwner = bot.socket.sent.filter((s) => s.jid === `${OWNER}@s.whatsapp.net`).map((s) => (s.content as { text?: string }).text);
    expect(toOwner).to.have.length(1);
    expect(toOwner[0]).to.match(/^pong/);
  });

  it('a group call rings on by default (not declined, nothing sent); a group rule declines it with its own message', async () => {
    bot = await startFakeSocketBot(ping);
    const first = await ring({ from: CALLER, group: GROUP_ID });
    expect(bot.socket.rejectedCalls).to.deep.equal([]);
    expect(first.sent).to.deep.equal([]);
    await bot.stop();
    bot = await startFakeSocketBot(ping, { config: { calls: { groups: { decline: true, message: 'No group calls here, please.' } } } });
    const second = await ring({ from: CALLER, group: GROUP_ID, video: true });
    expect(bot.socket.rejectedCalls).to.deep.equal([{ id: second.id, from: CALLER }]);
    expect(second.sent).to.deep.equal([{ to: GROUP_ID, text: 'No group calls here, please.' }]);
  });

  it('a configured message replaces the default; tellOwner notes each declined call to the owners; the same call reported twice is handled once', async () => {
    bot = await startFakeSocketBot(ping, { config: { owners: [OWNER], calls: { private: { decline: true, message: 'Busy, text me!' }, tellOwner: true } } });
    const toOwner = bot.socket.nextSent(undefined, `${OWNER}@s.whatsapp.net`);
    const { id, sent } = await ring({ from: CALLER, video: true });
    expect(sent[0]).to.deep.equal({ to: CALLER, text: 'Busy, text me!' });
    // The owners' note goes out paced, after the decline.
    expect(((await toOwner).content as { text: string }).text).to.equal('📞 Video call from +6281233334444: declined with the message.');
    const again = await ring({ from: CALLER, id });
    expect(again.sent.filter((m) => m.to === CALLER)).to.deep.equal([]);
    expect(bot.socket.rejectedCalls).to.have.length(1);
  });

  it('declining without a message (an empty one) sends nothing; decline false lets a person\'s call ring', async () => {
    bot = await startFakeSocketBot(ping, { config: { calls: { private: { decline: true, message: '' } } } });
    const quiet = await ring({ from: CALLER });
    expect(bot.socket.rejectedCalls.map((c) => c.id)).to.deep.equal([quiet.id]);
    expect(quiet.sent).to.deep.equal([]);
    await bot.stop();
    bot = await startFakeSocketBot(ping, { config: { calls: { private: { decline: false, message: 'unused' } } } });
    const ringing = await ring({ from: CALLER });
    expect(bot.socket.rejectedCalls).to.deep.equal([]);
    expect(ringing.sent).to.deep.equal([]);
  });
});
