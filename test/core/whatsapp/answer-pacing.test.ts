import { expect } from 'chai';
import sinon from 'sinon';
import { definePlugin } from '../../../core/kernel/plugin/contract.js';
import pingPlugin from '../../../plugins/ping/index.js';
import { startFakeSocketBot, type FakeSocketBot } from '../../../app/testing/fake-socket-bot.js';
import { GROUP, isSentText, sentText, waText } from '../../fakes/baileys-socket.js';

const ALICE = '6281200000007@s.whatsapp.net';
const BOB = '6281200000008@s.whatsapp.net';

/** A command that answers with a stream of messages, as a long answer split in parts does. */
const stream = definePlugin({
  name: 'stream',
  description: 'test: answers in three messages',
  setup: () => ({
    commands: [
      {
        command: 'stream',
        run: async (ctx) => {
          for (const n of [1, 2, 3]) await ctx.reply(`part ${n}`);
        },
      },
    ],
  }),
});

/** Everything the bot sends goes through one outbox: a group's stream is spread, a private answer is never held back. */
describe('WhatsApp: answers paced by the outbox (fake socket, fake clock)', function () {
  this.timeout(30_000);
  let bot: FakeSocketBot | undefined;
  let clock: sinon.SinonFakeTimers | undefined;
  afterEach(async () => {
    clock?.restore();
    clock = undefined;
    await bot?.stop();
    bot = undefined;
  });

  it("spreads a group's stream of answers over time while a private answer meanwhile goes at once", async () => {
    bot = await startFakeSocketBot([stream, pingPlugin], { config: { groups: { policy: 'open', commandsWithoutMention: true } } });
    const socket = bot.socket;
    clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.now(), shouldClearNativeTimers: true });
    const groupSends = () => socket.sent.filter((r) => r.jid === GROUP && isSentText(r)).map(sentText);

    const firstPart = socket.nextSent(isSentText, GROUP);
    socket.deliver([waText('.stream', { chat: GROUP, from: BOB })]);
    expect(sentText(await firstPart)).to.equal('part 1');

    // The group's stream now waits its turn; a private answer does not wait behind it (no clock tick needed).
    const privateAnswer = socket.nextSent(isSentText, ALICE);
    socket.deliver([waText('.ping', { from: ALICE })]);
    expect(sentText(await privateAnswer)).to.match(/^pong/);
    expect(groupSends()).to.deep.equal(['part 1']);

    await clock.tickAsync(60_000);
    await bot.app.bot.idle();
    expect(groupSends()).to.deep.equal(['part 1', 'part 2', 'part 3']);
  });

  it('a private answer of several messages sends its first at once and the rest spaced after it', async () => {
    bot = await startFakeSocketBot(stream);
    const socket = bot.socket;
    clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.now(), shouldClearNativeTimers: true });
    const privateSends = () => socket.sent.filter((r) => r.jid === ALICE && isSentText(r)).map(sentText);
    const first = socket.nextSent(isSentText, ALICE);
    socket.deliver([waText('.stream', { from: ALICE })]);
    expect(sentText(await first)).to.equal('part 1');
    expect(privateSends()).to.deep.equal(['part 1']);
    await clock.tickAsync(10_000);
    await bot.app.bot.idle();
    expect(privateSends()).to.deep.equal(['part 1', 'part 2', 'part 3']);
  });
});
