import { expect } from 'chai';
import checkins, { CHECKIN_PROMPT } from '../../../plugins/checkins/index.js';
import { definePlugin, defineTool } from '../../../core/kernel/plugin/contract.js';
import { Type } from '@sinclair/typebox';
import { FakeModel, lastText, type ModelAnswer, type ModelRequest } from '../../../app/testing/fake-model.js';
import { startTestBot, type TestBot, type TestClock, type TestBotOptions } from '../../../app/testing/test-kit.js';

const ALICE = '10000000001@s.whatsapp.net';
const BOB = '10000000002@s.whatsapp.net';
const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

/** A tool the check-in's model may look things up with (the tools path). */
const lookups: string[] = [];
const notes = definePlugin({
  name: 'notes',
  description: 'test: a lookup tool',
  setup: () => ({ tools: [defineTool({ name: 'lookup_notes', description: 'look up notes', effects: { outsideText: false, acts: 'nothing' }, parameters: Type.Object({}), run: () => (lookups.push('called'), 'no open items') })] }),
});

const isCheckin = (r: ModelRequest) => lastText(r) === CHECKIN_PROMPT;

/** A bot with check-ins, answering a check-in pass with `checkin(request)` and anything else with "model: …". */
async function start(checkin: (r: ModelRequest) => ModelAnswer, extra: TestBotOptions = {}): Promise<TestBot> {
  return startTestBot([checkins, notes], {
    model: (r) => (isCheckin(r) || r.messages.at(-1)?.role === 'tool' ? checkin(r) : `model: ${lastText(r)}`),
    options: { everyMinutes: 60 },
    ...extra,
    // No jitter: a follow-up goes out at its time on the faked clock.
    config: { sending: { jitterMs: 0 }, ...(extra.config ?? {}) },
  });
}

/** Opts Alice's chat in (all day), moves the clock one pass on and resolves once that pass is over. */
async function onePass(bot: TestBot, clock: TestClock, optIn = '.checkin on 00:00-23:59 max 2'): Promise<void> {
  if (optIn) expect((await bot.send(optIn)).join('\n')).to.match(/Check-ins on/);
  const seen = bot.logs().filter((l) => /^check-in: /.test(String(l.msg))).length;
  const over = () => bot.logs().filter((l) => /^check-in: /.test(String(l.msg))).length > seen;
  await clock.tick(HOUR);
  // A follow-up in several parts goes out at the outbox's pace: the faked clock moves on until the pass is over.
  for (let second = 0; second < 600 && !over(); second++) await clock.tick(1000);
  expect(over(), 'the check-in pass did not finish').to.equal(true);
  await bot.app.bot.idle();
}

/** Everything the bot did after the opt-in's confirmation. */
const after = (bot: TestBot, mark: number) => bot.transport.actions.slice(mark);

describe('checkins: a check-in with nothing to say sends nothing, on every path (fake clock)', function () {
  this.timeout(30_000);
  let bot: TestBot | undefined;
  let spare: FakeModel | undefined;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
    await spare?.close();
    spare = undefined;
    lookups.length = 0;
  });

  for (const [path, answer] of [
    ['a plain answer', 'NO_REPLY'],
    ['the token wrapped by the model', '**NO_REPLY.**'],
    ['the token on a line after words', 'Thinking about it…\n\nNO_REPLY'],
  ] as const) {
    it(`${path}: nothing reaches the chat, and the hidden prompt is not in the history`, async () => {
      bot = await start(() => answer);
      const clock = bot.useClock();
      await bot.send('I will call the bank tomorrow');
      const mark = bot.transport.actions.length + 1;
      await onePass(bot, clock);
      const sent = after(bot, mark);
      if (path === 'the token on a line after words') expect(sent.map((a) => (a as { text?: string }).text)).to.deep.equal(['Thinking about it…']);
      else expect(sent).to.deep.equal([]);
      expect(JSON.stringify(bot.transport.actions)).to.not.include('NO_REPLY');
      expect(JSON.stringify(await bot.app.bot.histories.recent(ALICE))).to.not.include('Check-in pass').and.not.include('NO_REPLY');
    });
  }

  it('through a tool: the model looks something up, then stays silent: nothing is sent', async () => {
    bot = await start((r) => (r.messages.at(-1)?.role === 'tool' ? 'NO_REPLY' : { tool: 'lookup_notes', args: {} }));
    const clock = bot.useClock();
    await onePass(bot, clock);
    expect(lookups).to.deep.equal(['called']);
    expect(bot.transport.actions.filter((a) => a.type !== 'text' || !/Check-ins on/.test(a.text))).to.deep.equal([]);
  });

  it('after a failover: the first provider is down, the second answers the token: nothing is sent', async () => {
    spare = await FakeModel.start(() => 'never asked');
    const down = spare.url;
    await spare.close();
    bot = await start(() => 'NO_REPLY', { env: { PRIMARY_GATEWAY_API_KEY: 'k1', PRIMARY_GATEWAY_BASE_URL: down, PRIMARY_GATEWAY_MODEL: 'm1' } });
    spare = undefined;
    const clock = bot.useClock();
    await onePass(bot, clock);
    expect(bot.model.requests.filter(isCheckin)).to.have.length(1);
    expect(bot.transport.actions.filter((a) => a.type !== 'text' || !/Check-ins on/.test(a.text))).to.deep.equal([]);
  });

  it('split messages: a long follow-up with the token as a paragraph goes out in parts, none of them the token', async () => {
    const long = `${'You said you would call the bank. '.repeat(150)}\n\nNO_REPLY\n\n${'And the plumber. '.repeat(150)}`;
    bot = await start(() => long);
    const clock = bot.useClock();
    const mark = bot.transport.actions.length + 1;
    await onePass(bot, clock);
    const parts = after(bot, mark).map((a) => (a as { text?: string }).text ?? '');
    expect(parts.length).to.be.greaterThan(1);
    expect(parts.join('\n')).to.include('call the bank').and.include('plumber').and.not.include('NO_REPLY');
  });

  it('a free-text answer of the model that is the token alone, or ends in it, never reaches the chat either', async () => {
    bot = await startTestBot(checkins, { model: (r) => (/quiet/.test(lastText(r)) ? 'NO_REPLY' : 'Sure.\nNO_REPLY') });
    expect(await bot.send('be quiet')).to.deep.equal([]);
    expect(await bot.send('say something')).to.deep.equal(['Sure.']);
  });

  it('with something to say: at most the daily cap, only within the active hours, only in the chat that opted in', async () => {
    bot = await start(() => 'You said you would call the bank — done?');
    const clock = bot.useClock();
    // The three passes (a little over three hours) under one day's cap: started late in the day (UTC), the clock first
    // moves past midnight, or the cap would start again midway and a third follow-up be due.
    const leftToday = DAY - (clock.now() % DAY);
    if (leftToday < 6 * HOUR) await clock.tick(leftToday + 30 * 60_000);
    await onePass(bot, clock, '.checkin on 00:00-23:59 max 2');
    await onePass(bot, clock, '');
    await onePass(bot, clock, '');
    const followUps = bot.transport.actions.filter((a) => a.type === 'text' && /call the bank/.test(a.text));
    expect(followUps.map((a) => a.chatId)).to.deep.equal([ALICE, ALICE]);
    expect(bot.transport.actions.some((a) => a.chatId === BOB)).to.equal(false);
    // Outside its hours: no pass asks the model at all.
    const asked = bot.model.requests.filter(isCheckin).length;
    expect((await bot.send('.checkin off')).join('')).to.match(/off/);
    const local = new Date(clock.now()).getUTCHours();
    const closed = `${String((local + 3) % 24).padStart(2, '0')}:00-${String((local + 4) % 24).padStart(2, '0')}:00`;
    await onePass(bot, clock, `.checkin on ${closed} max 5`);
    expect(bot.model.requests.filter(isCheckin)).to.have.length(asked);
  });

  it('only the person of a private chat or an owner opts a chat in', async () => {
    bot = await startTestBot(checkins, { config: { owners: ['10000000009'], groups: { commandsWithoutMention: true } } });
    expect((await bot.send({ chatId: 'team@g.us', senderId: BOB, text: '.checkin on' })).join('')).to.match(/Only an owner/);
    expect((await bot.send('.checkin')).join('')).to.match(/Check-ins are off here/);
  });
});
