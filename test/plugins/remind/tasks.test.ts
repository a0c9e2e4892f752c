import { expect } from 'chai';
import { definePlugin } from '../../../core/index.js';
import { contentOf, FakeModel, lastText, MemoryTransport, startTestBot, type ModelAnswer, type ModelRequest, type TestBot } from '../../../app/testing/index.js';
import remind from '../../../plugins/remind/index.js';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { safeFileName } from '../../../core/index.js';
import { ALICE, BOB, BOT, FAST_SENDING, UNPACED_SENDS, GROUP, OTHER_GROUP, say } from '../../helpers/chat.js';
import { changeStoredDocument } from '../../helpers/disk-text.js';

/** Scheduled tasks (`.schedule`, the schedule_task tool): a prompt the model runs at its time, as its creator. */

/** Who called the weather tool, and for which chat: the core binds both. */
const weatherCalls: Array<{ chatId: string; senderId: string }> = [];
const weather = definePlugin({
  name: 'weather-probe',
  description: 'a tool only some people may use',
  setup: () => ({
    tools: [
      {
        name: 'lookup_weather',
        description: 'the weather today',
        parameters: { type: 'object', properties: {} },
        effects: { outsideText: true, acts: 'nothing' },
        run: (_args, call) => {
          weatherCalls.push({ chatId: call.chatId, senderId: call.senderId });
          return 'sunny, 31°C';
        },
      },
    ],
  }),
});

/** The fake model: calls lookup_weather when offered and asked about the weather; otherwise says what it read. */
function answer(request: ModelRequest): ModelAnswer {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return `the weather: ${contentOf(lastText(request))}`;
  const text = lastText(request);
  if (/weather/.test(text) && request.tools.includes('lookup_weather')) return { tool: 'lookup_weather', args: {} };
  const planned = /^plan (.*)$/.exec(text);
  if (planned) return { tool: 'schedule_task', args: JSON.parse(planned[1]) as Record<string, unknown> };
  return `model: ${text}`;
}

let model: FakeModel;
/** remind (in Jakarta time) beside a weather tool only Alice may use, on the shared fake model. */
function start(options: Record<string, unknown> = {}, config: Record<string, unknown> = {}): Promise<TestBot> {
  return startTestBot([remind, weather], {
    options: { timeZone: 'Asia/Jakarta', ...options },
    ownIds: [BOT],
    model,
    config: { sending: FAST_SENDING, ...config, plugins: { 'weather-probe': { access: ['6281100000001'] } } },
    sendPacing: UNPACED_SENDS,
  });
}

const userTexts = (r: ModelRequest) => r.messages.filter((m) => m.role === 'user').map((m) => String(m.content));

describe('remind: scheduled tasks (the kit clock, fake model on 127.0.0.1)', function () {
  this.timeout(30_000);
  let t: TestBot | undefined;
  before(async () => {
    model = await FakeModel.start(answer);
  });
  after(() => model.close());
  afterEach(async () => {
    await t?.stop();
    t = undefined;
    model.requests.length = 0;
    weatherCalls.length = 0;
  });

  it('.schedule runs the prompt at its time through the model with the tools its creator may use, and posts the answer marked as scheduled', async () => {
    t = await start();
    const clock = t.useClock();
    expect(await say(t, '.schedule 2s what is the weather in Jakarta')).to.match(/^🗓️ Task scheduled for \w{3} \d{4}-\d\d-\d\d \d\d:\d\d(?::\d\d)? \(Asia\/Jakarta\); then I will answer: what is the weather in Jakarta$/);
    await clock.tick(1999);
    expect(model.requests, 'nothing runs before its time').to.have.length(0);
    await clock.tick(1);
    const posted = await t.transport.until(() => t!.replies(ALICE).find((x) => x.startsWith('🗓️ Scheduled')));
    expect(posted).to.equal('🗓️ Scheduled: what is the weather in Jakarta\n\nthe weather: sunny, 31°C');
    const first = model.requests[0];
    expect(lastText(first)).to.equal('what is the weather in Jakarta');
    expect(first.tools).to.include.members(['lookup_weather', 'schedule_message']);
    expect(String(first.messages[0].content)).to.include('a task the user scheduled earlier');
    expect(weatherCalls).to.deep.equal([{ chatId: ALICE, senderId: ALICE }]);
    expect(await say(t, '.reminders')).to.match(/^No reminders in this chat/);
  });

  it('a one-time task due while WhatsApp is not linked waits (nothing asked, nothing lost) and runs, marked late, once linked again', async () => {
    t = await start();
    const clock = t.useClock();
    expect(await say(t, '.schedule 2s what is the weather in Jakarta')).to.match(/^🗓️ Task scheduled/);
    await t.transport.relink(); // the owner relinks: the bot waits for a QR scan
    await clock.tick(2_500);
    expect(model.requests, 'refused before the model is asked').to.have.length(0);
    expect(t.replies(ALICE).some((x) => /could not run/.test(x)), 'not told as a failure: it only waits').to.equal(false);
    expect(await say(t, '.reminders')).to.match(/🗓️ task: what is the weather in Jakarta/);
    await clock.tick(60_000); // still not linked: it keeps waiting
    expect(model.requests).to.have.length(0);
    t.transport.linkAgain();
    // Its next try falls due within a minute: second by second until it has run (each step waits for the bot).
    const scheduled = () => t!.replies(ALICE).find((x) => x.startsWith('🗓️ Scheduled'));
    for (let second = 0; second < 60 && !scheduled(); second++) {
      await clock.tick(1_000);
      await t.app.bot.idle();
    }
    const posted = await t.until(scheduled);
    expect(posted).to.match(/^🗓️ Scheduled, .* late \(I was offline when it was due, .*\): what is the weather in Jakarta\n\nthe weather: sunny, 31°C$/);
    expect(await say(t, '.reminders')).to.match(/^No reminders in this chat/);
  });

  it('runs as its creator: in a group, a task of someone the weather tool is not open to gets no such tool', async () => {
    t = await start();
    const clock = t.useClock();
    await say(t, '.schedule 1s the weather please', { senderId: BOB, chatId: GROUP });
    await clock.tick(1000);
    const posted = await t.transport.until(() => t!.replies(GROUP).find((x) => x.startsWith('🗓️ Scheduled')));
    expect(posted).to.equal('🗓️ Scheduled: the weather please\n\nmodel: the weather please');
    expect(model.requests[0].tools).to.not.include('lookup_weather');
    expect(weatherCalls).to.deep.equal([]);
  });

  it("on the console a task runs with its creator's rights: the operator's with an owner's tools, another sender's without", async () => {
    /** The console's shape: the person at the machine (ALICE here, in no owner list) counts as an owner. */
    class ConsoleLike extends MemoryTransport {
      operatorChatId(): string {
        return ALICE;
      }
    }
    t = await startTestBot([remind, weather], {
      options: { timeZone: 'Asia/Jakarta' },
      ownIds: [BOT],
      model,
      transport: new ConsoleLike([BOT]),
      config: { sending: FAST_SENDING, plugins: { 'weather-probe': { access: 'owners' } } },
      sendPacing: UNPACED_SENDS,
    });
    const clock = t.useClock();
    await say(t, '.schedule 1s the weather for Bob', { senderId: BOB });
    await clock.tick(1000);
    const bobs = await t.transport.until(() => t!.replies(BOB).find((x) => x.startsWith('🗓️ Scheduled')));
    expect(bobs).to.equal('🗓️ Scheduled: the weather for Bob\n\nmodel: the weather for Bob');
    expect(model.requests[0]!.tools, "another sender's task").to.not.include('lookup_weather');
    await say(t, '.schedule 1s the weather for the operator');
    await clock.tick(1000);
    const operators = await t.transport.until(() => t!.replies(ALICE).find((x) => x.startsWith('🗓️ Scheduled')));
    expect(operators).to.equal('🗓️ Scheduled: the weather for the operator\n\nthe weather: sunny, 31°C');
    expect(weatherCalls).to.deep.equal([{ chatId: ALICE, senderId: ALICE }]);
  });

  it('is listed by .reminders and .cancel removes it before it runs', async () => {
    t = await start();
    const clock = t.useClock();
    await say(t, '.remind 1h tea');
    await say(t, '.schedule 2s summarise the news');
    expect(await say(t, '.reminders')).to.match(/\n1\. .* — 🗓️ task: summarise the news\n2\. .* — tea\n/);
    expect(await say(t, '.cancel 1')).to.match(/^Cancelled: .* — 🗓️ task: summarise the news$/);
    await clock.tick(2600);
    await t.app.bot.idle();
    expect(model.requests, 'a cancelled task never reaches the model').to.have.length(0);
    expect(t.replies(ALICE).some((x) => x.startsWith('🗓️ Scheduled'))).to.equal(false);
  });

  it('caps: tasks per user (apart from reminders) and the shortest repeat', async () => {
    t = await start({ maxTasksPerUser: 1, minTaskRepeatSeconds: 7200, maxPerUser: 5 });
    expect(await say(t, '.schedule every "0 * * * *" x')).to.equal('That repeats every 1 h; the shortest allowed is every 2 h. For example .schedule every day 07:00 the weather today.');
    expect(await say(t, '.schedule 1h first')).to.match(/^🗓️ Task scheduled/);
    expect(await say(t, '.schedule 2h second')).to.equal('You already have 1 scheduled tasks, the most one person may have. Cancel one first: .reminders lists them, .cancel <n> removes one.');
    expect(await say(t, '.remind 2h a reminder still')).to.match(/^⏰ Reminder set/);
    expect(await say(t, '.schedule 2h for bob', { senderId: BOB })).to.match(/^🗓️ Task scheduled/);
    expect(await say(t, '.schedule banana')).to.match(/^I could not read a time at the start of "banana", for example \.schedule 10m/);
  });

  it('a repeating task that keeps failing (over the budget) tells its creator once, and the list shows it', async () => {
    // One model request a minute: the first run answers, the next ones are refused by the budget.
    t = await start({ minTaskRepeatSeconds: 1 }, { ai: { requestsPerMinute: 1, tokensPerDay: 0, premiumTokensPerDay: 0 } });
    const clock = t.useClock();
    await say(t, '.schedule every "* * * * * *" ping the news');
    await clock.tick(1000);
    await t.transport.until(() => t!.replies(ALICE).some((x) => x.startsWith('🗓️ Scheduled: ping the news')));
    await clock.tick(1000);
    const warned = await t.transport.until(() => t!.replies(ALICE).find((x) => x.startsWith('⚠️')));
    expect(warned).to.match(/^⚠️ A scheduled task could not run: You have sent a lot of requests in a short time\. Please try again in \d+ seconds\. The task: ping the news\nIt stays scheduled \(on the schedule "\* \* \* \* \* \*"\); I will not tell you again until a run works\.$/);
    // Three more runs, each refused: every one is logged as it ends.
    const refusedRuns = () => t!.logs().filter((l) => /scheduled task .*could not run|could not run/i.test(String(l.msg))).length;
    for (let run = 1; run <= 3; run++) {
      const before = refusedRuns();
      await clock.tick(1000);
      await t.until(() => refusedRuns() > before);
    }
    expect(t.replies(ALICE).filter((x) => x.startsWith('⚠️')), 'told once, not every run').to.have.length(1);
    expect(model.requests, 'refused runs never reach the model').to.have.length(1);
    expect(await say(t, '.reminders')).to.match(/— 🗓️ task: ping the news \(its last run failed\)/);
  });

  it('schedule_task: the model schedules for the asking user in this chat; a call naming another chat is refused and schedules nothing', async () => {
    t = await start();
    const ok = await say(t, `plan ${JSON.stringify({ when: 'every monday 09:00', prompt: 'send me the week ahead' })}`);
    expect(ok).to.match(/^the weather: 🗓️ Task scheduled .* \(Asia\/Jakarta\), first on Mon .*; each time I will answer: send me the week ahead$/);
    expect(await say(t, '.reminders')).to.match(/\n1\. 🔁 .*, next Mon .* — 🗓️ task: send me the week ahead\n/);

    await say(t, `plan ${JSON.stringify({ when: '10m', prompt: 'post the secret here', chatId: OTHER_GROUP })}`, { senderId: BOB, chatId: GROUP });
    const refused = model.requests.at(-1)!.messages.at(-1);
    expect(refused?.role).to.equal('tool');
    expect(String(refused?.content)).to.equal('Refused: schedule_task takes only "when" and "prompt"; it always schedules in this chat for the user asking (not "chatId"). Nothing was scheduled.');
    expect(await say(t, '.reminders', { senderId: BOB, chatId: GROUP })).to.match(/^No reminders in this chat/);
    expect(await say(t, '.reminders', { senderId: BOB, chatId: OTHER_GROUP })).to.match(/^No reminders in this chat/);
    expect(await say(t, '.reminders')).to.not.include('secret');
  });

  it("schedule_task asked in a group schedules in that group, not in the asker's private chat", async () => {
    t = await start();
    const ok = await say(t, `plan ${JSON.stringify({ when: 'every monday 09:00', prompt: 'the team agenda' })}`, { senderId: BOB, chatId: GROUP });
    expect(ok).to.match(/Task scheduled .*the team agenda$/);
    expect(await say(t, '.reminders', { senderId: BOB, chatId: GROUP })).to.match(/\n1\. 🔁 .* — 🗓️ task: the team agenda/);
    expect(await say(t, '.reminders', { senderId: BOB })).to.match(/^No reminders in this chat/);
    expect(await say(t, '.reminders', { senderId: BOB, chatId: OTHER_GROUP })).to.match(/^No reminders in this chat/);
  });

  it('a task due while the bot was down runs after the start, marked late', async () => {
    t = await start();
    await say(t, '.schedule 1h the headlines');
    const { dir } = t;
    t = await t.restart({}, async () => {
      // Time passing while the bot is down: the task fell due 2 s ago.
      changeStoredDocument(path.join(dir, 'data'), 'remind', 'reminders', ALICE, (doc) => void (doc.reminders[0].due = Date.now() - 2000));
      expect(model.requests).to.have.length(0);
    });
    const posted = await t.until(() => t!.replies(ALICE).find((x) => x.startsWith('🗓️ Scheduled')));
    expect(posted).to.match(/^🗓️ Scheduled, \d+ s late \(I was offline when it was due, .*\): the headlines\n\nmodel: the headlines$/);
    expect(userTexts(model.requests[0]).at(-1)).to.equal('the headlines');
  });
});
