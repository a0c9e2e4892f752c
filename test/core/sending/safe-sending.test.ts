import { expect } from 'chai';
import sinon from 'sinon';
import { definePlugin } from '../../../core/index.js';
import { MemoryTransport, startTestBot, type TestBot } from '../../../app/testing/index.js';
import { UNPACED_SENDS } from '../../helpers/chat.js';

/** A plugin whose command answers at once, so a reply's timing depends on nothing but the bot. */
const echo = definePlugin({
  name: 'echo',
  description: 'answers at once',
  setup: () => ({
    commands: [{ command: 'echo', run: async (ctx) => {
      await ctx.reply(`echo ${ctx.args}`);
    } }],
  }),
});

const LIMITS = { perChatPerMinute: 6, globalPerMinute: 20, jitterMs: 500 };
/**
 * The chats these tests write to first are owners': the bot starts a message only to an owner, a chat that wrote and
 * is let in, or a recipient the owner approved (the effect guard's rule); pacing is what is tested here.
 */
const RECIPIENTS = Array.from({ length: 50 }, (_, i) => `6281111${String(i).padStart(4, '0')}`); // 62811110000 among them

describe('safe sending: bot-initiated messages are paced, replies are not', () => {
  let t: TestBot;
  let clock: sinon.SinonFakeTimers | undefined;

  beforeEach(async () => {
    t = await startTestBot([echo], { config: { sending: LIMITS, owners: RECIPIENTS } });
  });
  afterEach(async () => {
    clock?.restore();
    clock = undefined;
    t.app.outbox.close();
    await t.stop();
  });

  const sentTo = (chatId: string) => t.transport.actions.filter((a) => a.type === 'text' && a.chatId === chatId);
  const botInitiated = () => t.transport.actions.filter((a) => a.type === 'text' && a.text.startsWith('note '));

  const fake = () => sinon.useFakeTimers({ now: Date.now(), toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'], shouldClearNativeTimers: true });

  it('paces a burst of 50 to one chat (perChatPerMinute), in order, while a reply there goes out at once', async () => {
    clock = fake();
    const host = t.app.bot.host('echo');
    const chat = '62811110000@s.whatsapp.net';
    const sends = Array.from({ length: 50 }, (_, i) => host.send(chat, `note ${i}`));
    await clock.tickAsync(0);

    // The user of that very chat writes meanwhile: answered at once, not queued behind the burst.
    const reply = await t.transport.push({ text: '.echo hi', senderId: chat });
    expect(reply.map((a) => a.type === 'text' && a.text)).to.deep.equal(['echo hi']);
    expect(botInitiated().length, 'at most the first bot-initiated send may have gone out').to.be.at.most(1);

    await clock.tickAsync(59_999);
    expect(botInitiated().length).to.be.within(LIMITS.perChatPerMinute - 1, LIMITS.perChatPerMinute);
    await clock.tickAsync(60_000);
    expect(botInitiated().length).to.be.within(2 * LIMITS.perChatPerMinute - 1, 2 * LIMITS.perChatPerMinute);
    const reply2 = await t.transport.push({ text: '.echo again', senderId: chat });
    expect(reply2).to.have.length(1);

    // Every one arrives in the end, in the order sent, the replies where they happened.
    await clock.tickAsync(10 * 60_000);
    await Promise.all(sends);
    const texts = sentTo(chat).map((a) => a.type === 'text' && a.text);
    expect(texts.filter((x) => String(x).startsWith('note '))).to.deep.equal(Array.from({ length: 50 }, (_, i) => `note ${i}`));
    expect(texts.indexOf('echo hi')).to.be.at.most(1);
    expect(texts.indexOf('echo again')).to.be.within(2 * LIMITS.perChatPerMinute - 1, 2 * LIMITS.perChatPerMinute + 1);
  });

  it('paces a burst of 50 to 50 chats (globalPerMinute) while replies to other users are not delayed', async () => {
    clock = fake();
    const host = t.app.bot.host('echo');
    const sends = Array.from({ length: 50 }, (_, i) => host.send(`6281111${String(i).padStart(4, '0')}@s.whatsapp.net`, `note ${i}`));
    await clock.tickAsync(0);
    for (const n of [1, 2, 3]) {
      const reply = await t.transport.push({ text: `.echo ${n}`, senderId: `6289999000${n}@s.whatsapp.net` });
      expect(reply.map((a) => a.type === 'text' && a.text)).to.deep.equal([`echo ${n}`]);
    }
    expect(botInitiated().length).to.be.at.most(1);

    await clock.tickAsync(59_999);
    expect(botInitiated().length).to.be.within(LIMITS.globalPerMinute - 1, LIMITS.globalPerMinute);
    await clock.tickAsync(10 * 60_000);
    await Promise.all(sends);
    expect(botInitiated().map((a) => a.type === 'text' && a.text)).to.deep.equal(Array.from({ length: 50 }, (_, i) => `note ${i}`));
  });

  it('holds sends made before the transport is linked until it is', async () => {
    clock = fake();
    let status: 'linked' | 'connecting' = 'connecting';
    sinon.stub(t.transport, 'session').callsFake(() => ({ status }));
    const sent = t.app.bot.host('echo').send('62811110000@s.whatsapp.net', 'note while offline');
    await clock.tickAsync(10_000);
    expect(botInitiated()).to.have.length(0);
    status = 'linked';
    await clock.tickAsync(5_000);
    await sent;
    expect(botInitiated()).to.have.length(1);
  });

  it('a send still waiting when the bot stops is rejected, not left hanging', async () => {
    clock = fake();
    const host = t.app.bot.host('echo');
    const results = Array.from({ length: 5 }, (_, i) => host.send('62811110000@s.whatsapp.net', `note ${i}`).then(() => 'sent', (e: Error) => e.message));
    await clock.tickAsync(0);
    expect(t.app.outbox.pending()).to.be.greaterThan(2);
    const dropped = t.app.outbox.close();
    expect(dropped).to.be.greaterThan(2);
    const outcomes = await Promise.all(results);
    expect(outcomes.filter((o) => o !== 'sent')).to.have.length(dropped);
    expect(outcomes.filter((o) => o !== 'sent')[0]).to.match(/stopping/);
  });
});

describe('safe sending at stop', () => {
  it('gives queued bot-initiated messages the rest of the grace time, but does not wait for a transport that is not linked', async () => {
    const t = await startTestBot([echo], { config: { sending: { perChatPerMinute: 60, globalPerMinute: 600, jitterMs: 0 }, shutdown: { graceSeconds: 30 }, owners: RECIPIENTS } });
    const host = t.app.bot.host('echo');
    const chat = '62811110000@s.whatsapp.net';
    const first = [0, 1, 2].map((i) => host.send(chat, `note ${i}`).then(() => 'sent', (e: Error) => `dropped: ${e.message}`));
    // Queued (each passed the recipient rule, an owner here), then the stop: linked, the three (one a second in this
    // chat) go out before the stop ends.
    await t.until(() => t.app.outbox.pending() + t.transport.actions.filter((a) => a.type === 'text').length >= 3);
    await t.stop();
    expect(await Promise.all(first)).to.deep.equal(['sent', 'sent', 'sent']);

    const t2 = await startTestBot([echo], { config: { sending: { perChatPerMinute: 60, globalPerMinute: 600, jitterMs: 0 }, shutdown: { graceSeconds: 30 }, owners: RECIPIENTS } });
    sinon.stub(t2.transport, 'session').returns({ status: 'connecting' });
    const waiting = t2.app.bot.host('echo').send(chat, 'note while offline').then(() => 'sent', () => 'dropped');
    // A stop that waited out the 30 s grace for it would run into mocha's 20 s timeout.
    await t2.stop();
    expect(await waiting).to.equal('dropped');
    sinon.restore();
  });
});

describe("safe sending unpaced (a test's sendPacing: UNPACED_SENDS)", () => {
  let clock: sinon.SinonFakeTimers | undefined;
  afterEach(() => {
    clock?.restore();
    clock = undefined;
    sinon.restore();
  });

  it('sends the bot-initiated messages without waiting on any clock, still one at a time and in the order sent', async () => {
    /** Each send takes a turn of the event loop, so two handed over at once would overlap here. */
    class Overlaps extends MemoryTransport {
      inFlight = 0;
      most = 0;
      override async sendText(chatId: string, text: string, options?: { quotedId?: string }) {
        this.most = Math.max(this.most, ++this.inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        try {
          return await super.sendText(chatId, text, options);
        } finally {
          this.inFlight--;
        }
      }
    }
    const transport = new Overlaps();
    const t = await startTestBot([echo], { config: { owners: ['62811110000', '62811110001'] }, sendPacing: UNPACED_SENDS, transport });
    try {
      const chat = '62811110000@s.whatsapp.net';
      const other = '62811110001@s.whatsapp.net';
      // The clock never moves: a send that waited for any timer would never go out.
      clock = sinon.useFakeTimers({ now: Date.now(), toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'], shouldClearNativeTimers: true });
      const host = t.app.bot.host('echo');
      await Promise.all(Array.from({ length: 40 }, (_, i) => host.send(i % 2 ? chat : other, `note ${i}`)));
      expect(transport.most, 'two sends were handed to the transport at once').to.equal(1);
      const texts = (chatId: string) => t.transport.actions.filter((a) => a.type === 'text' && a.chatId === chatId).map((a) => a.type === 'text' && a.text);
      expect(texts(chat)).to.deep.equal(Array.from({ length: 20 }, (_, i) => `note ${2 * i + 1}`));
      expect(texts(other)).to.deep.equal(Array.from({ length: 20 }, (_, i) => `note ${2 * i}`));
    } finally {
      clock?.restore();
      clock = undefined;
      await t.stop();
    }
  });
});
