import { expect } from 'chai';
import { readdir, readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import sinon from 'sinon';
import { safeFileName } from '../../../core/index.js';
import { lastText, startTestBot, type ModelAnswer, type ModelRequest, type TestBot } from '../../../app/testing/index.js';
import remind from '../../../plugins/remind/index.js';
import { ALICE, BOB, BOT, CAROL, FAST_SENDING, GROUP, say } from '../../helpers/chat.js';
import { tempDir } from '../../helpers/checkout.js';
import { changeStoredDocument, storedDocuments } from '../../helpers/disk-text.js';

/** remind in Jakarta time unless `options` say otherwise. */
function start(options: Record<string, unknown> = {}, extra: { dir?: string; owners?: string[]; model?: (request: ModelRequest) => ModelAnswer } = {}): Promise<TestBot> {
  return startTestBot(remind, {
    options: { timeZone: 'Asia/Jakarta', ...options },
    ownIds: [BOT],
    dir: extra.dir,
    model: extra.model,
    config: { sending: FAST_SENDING, owners: extra.owners ?? [] },
  });
}

describe('remind plugin', function () {
  this.timeout(20_000);
  let t: TestBot | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  it('a reminder due in 2 s fires in its chat, through the bot-initiated sender, and is then gone', async () => {
    t = await start();
    const clock = t.useClock();
    const limiter = sinon.spy(t.app.outbox, 'sendText');
    expect(await say(t, '.remind 2s take the tea out')).to.match(/^⏰ Reminder set for \w{3} \d{4}-\d\d-\d\d \d\d:\d\d(?::\d\d)? \(Asia\/Jakarta\): take the tea out$/);
    await clock.tick(1999);
    expect(t.replies(ALICE)).to.not.include('⏰ Reminder: take the tea out');
    await clock.tick(1);
    await t.transport.until(() => t!.replies(ALICE).includes('⏰ Reminder: take the tea out'));
    expect(limiter.calledWith(ALICE, '⏰ Reminder: take the tea out'), 'sent through the safe-sending limiter').to.equal(true);
    expect(await say(t, '.reminders')).to.match(/^No reminders in this chat/);
  });

  it('a recurring reminder fires twice, is listed, and .cancel stops it', async () => {
    t = await start({ minRepeatSeconds: 1 });
    const clock = t.useClock();
    const runs = () => t!.replies(ALICE).filter((x) => x === '🔁 Reminder: stretch').length;
    expect(await say(t, '.remind every "* * * * * *" stretch')).to.match(/^🔁 Reminder set on the schedule "\* \* \* \* \* \*" \(Asia\/Jakarta\), first on .*: stretch$/);
    await clock.tick(1000);
    await t.transport.until(() => runs() >= 1);
    await clock.tick(1000);
    await t.transport.until(() => runs() >= 2);
    expect(await say(t, '.reminders')).to.match(/\n1\. 🔁 on the schedule "\* \* \* \* \* \*", next .* — stretch\n/);
    expect(await say(t, '.cancel 1')).to.match(/^Cancelled: 🔁 .* — stretch$/);
    const fired = runs();
    await clock.tick(2500);
    await t.app.bot.whenStoresIdle();
    expect(runs(), 'no run after .cancel').to.equal(fired);
    expect(await say(t, '.reminders')).to.match(/^No reminders/);
  });

  it('.reminders numbers this chat only, soonest first; .cancel <n> removes that one and says which', async () => {
    t = await start();
    await say(t, '.remind 3h second');
    await say(t, '.remind 1h first');
    await say(t, '.remind 2h elsewhere', { senderId: BOB });
    const list = await say(t, '.reminders');
    expect(list).to.match(/\n1\. .* — first\n2\. .* — second\n/);
    expect(list).to.not.include('elsewhere');
    expect(await say(t, '.cancel 3')).to.equal('There is no reminder 3 here: this chat has 2. .reminders lists them.');
    expect(await say(t, '.cancel x')).to.match(/^Which one\? .reminders lists them numbered/);
    expect(await say(t, '.cancel 1')).to.match(/^Cancelled: .* — first$/);
    expect(await say(t, '.reminders')).to.match(/\n1\. .* — second\nCancel one/);
  });

  it('bad, past and out-of-limit times get a clear sentence with an example, and nothing is set', async () => {
    t = await start({ maxPerUser: 2, minRepeatSeconds: 3600 });
    expect(await say(t, '.remind banana split')).to.match(/^I could not read a time at the start of "banana split", for example \.remind 10m tea/);
    expect(await say(t, '.remind 2020-01-01 10:00 old')).to.equal(
      'Wed 2020-01-01 10:00 (Asia/Jakarta) has already passed: give a time in the future, for example .remind 10m tea, .remind 18:30 call mom, .remind tomorrow 9am dentist, .remind "next monday 9:00" standup.',
    );
    expect(await say(t, '.remind 25:00 x')).to.match(/^25:00 is not a time of day: use HH:MM .* for example \.remind 18:30 call mom\.$/);
    expect(await say(t, '.remind 2026-02-30 10:00 x')).to.match(/^2026-02-30 10:00 is not a date and time I can read/);
    expect(await say(t, '.remind "next blursday" x')).to.match(/^I could not read "next blursday" as a time, for example/);
    expect(await say(t, '.remind 10m')).to.match(/^What should I remind you of\? .* for example \.remind 10m/);
    expect(await say(t, '.remind every "61 * * * *" x')).to.match(/^"61 \* \* \* \*" is not a cron pattern I can read .*: for example \.remind every day 07:00/);
    expect(await say(t, '.remind every "*/5 * * * *" x')).to.equal('That repeats every 5 min; the shortest allowed is every 1 h. For example .remind every day 07:00 stretch.');
    expect(await say(t, '.remind every someday 07:00 x')).to.match(/^I could not read when it repeats: for example/);
    expect(await say(t, '.reminders')).to.match(/^No reminders/);
    await say(t, '.remind 1h one');
    await say(t, '.remind every day 07:00 two');
    expect(await say(t, '.remind 2h three')).to.equal('You already have 2 reminders, the most one person may have. Cancel one first: .reminders lists them, .cancel <n> removes one.');
    expect(await say(t, '.remind 2h for bob', { senderId: BOB })).to.match(/^⏰ Reminder set/);
  });

  it('reads times in the plugin zone, a user’s own .timezone, and in a group each reminder in its creator’s zone', async () => {
    t = await start({ timeZone: 'Asia/Jakarta' });
    expect(await say(t, '.remind 2031-01-15 09:00 jakarta')).to.equal('⏰ Reminder set for Wed 2031-01-15 09:00 (Asia/Jakarta): jakarta');
    expect(await say(t, '.timezone europe/berlin')).to.match(/^Your time zone is now Europe\/Berlin \(it is \w{3} \d{4}-\d\d-\d\d \d\d:\d\d/);
    expect(await say(t, '.timezone Mars/Olympus')).to.match(/^"Mars\/Olympus" is not a time zone I know\. Use an Area\/City name, for example \.timezone Europe\/Berlin/);
    expect(await say(t, '.timezone')).to.match(/^Your time zone: Europe\/Berlin\. Set yours/);
    expect(await say(t, '.remind 2031-07-15 09:00 berlin summer')).to.equal('⏰ Reminder set for Tue 2031-07-15 09:00 (Europe/Berlin): berlin summer');
    // In a group, Alice (Berlin) sets one; Bob (the plugin's zone) sees it in her zone, named.
    expect(await say(t, '.remind 2031-01-15 09:00 group berlin', { chatId: GROUP })).to.equal('⏰ Reminder set for Wed 2031-01-15 09:00 (Europe/Berlin): group berlin');
    expect(await say(t, '.remind 2031-01-15 09:00 group jakarta', { chatId: GROUP, senderId: BOB })).to.equal('⏰ Reminder set for Wed 2031-01-15 09:00 (Asia/Jakarta): group jakarta');
    const list = await say(t, '.reminders', { chatId: GROUP, senderId: BOB });
    expect(list).to.equal(
      'Reminders in this chat (times in Asia/Jakarta unless shown):\n1. Wed 2031-01-15 09:00 — group jakarta\n2. Wed 2031-01-15 09:00 (Europe/Berlin) — group berlin\nCancel one with .cancel <n>.',
    );
    // The instants on disk: 09:00 in Jakarta (UTC+7) is 02:00 UTC, 09:00 in Berlin is 08:00 UTC in winter, 07:00 in summer.
    await t.app.stop();
    const stored = (name: string) => storedDocuments(path.join(t!.dir, 'data'), 'remind', name);
    const own = stored('reminders')[ALICE] as never;
    const group = stored('reminders')[GROUP] as never;
    const due = (doc: { reminders: Array<{ text: string; due: number }> }, text: string) => new Date(doc.reminders.find((r) => r.text === text)!.due).toISOString();
    expect(due(own, 'jakarta')).to.equal('2031-01-15T02:00:00.000Z');
    expect(due(own, 'berlin summer')).to.equal('2031-07-15T07:00:00.000Z');
    expect(due(group, 'group berlin')).to.equal('2031-01-15T08:00:00.000Z');
    expect(due(group, 'group jakarta')).to.equal('2031-01-15T02:00:00.000Z');
    const zones = stored('time-zones')[''];
    expect(zones.zones).to.deep.equal({ [ALICE]: 'Europe/Berlin' });
  });

  it('HH:MM means today, or tomorrow once past; a natural phrase and a quoted time end where they should', async () => {
    t = await start({ timeZone: 'UTC' });
    // The date fixed (timers stay real): "today" and "tomorrow" are the same days for the bot and for this test,
    // even when the test runs across midnight (UTC).
    const now = new Date(t.useClock(['Date']).now());
    const pad = (n: number) => String(n).padStart(2, '0');
    const soon = new Date(now.getTime() + 5 * 60_000);
    const past = new Date(now.getTime() - 5 * 60_000);
    const day = (d: Date) => d.toISOString().slice(0, 10);
    expect(await say(t, `.remind ${pad(soon.getUTCHours())}:${pad(soon.getUTCMinutes())} soon`)).to.include(`${day(soon)} ${pad(soon.getUTCHours())}:${pad(soon.getUTCMinutes())} (UTC): soon`);
    const tomorrow = new Date(past.getTime() + 86_400_000);
    expect(await say(t, `.remind ${pad(past.getUTCHours())}:${pad(past.getUTCMinutes())} later`)).to.include(`${day(tomorrow)} ${pad(past.getUTCHours())}:${pad(past.getUTCMinutes())} (UTC): later`);
    const inTwoHours = new Date(Math.floor(now.getTime() / 60_000) * 60_000 + 2 * 3_600_000);
    expect(await say(t, '.remind in 2 hours to call mom')).to.match(new RegExp(`${day(inTwoHours)} ${pad(inTwoHours.getUTCHours())}:${pad(inTwoHours.getUTCMinutes())}(:\\d\\d)? \\(UTC\\): call mom$`));
    expect(await say(t, '.remind "next monday 9:00" standup now')).to.match(/^⏰ Reminder set for Mon \d{4}-\d\d-\d\d 09:00 \(UTC\): standup now$/);
    // The day after today (not after `past`, which is yesterday in the first five minutes after midnight).
    const nextDay = new Date(now.getTime() + 86_400_000);
    expect(await say(t, '.remind tomorrow 9am dentist')).to.equal(`⏰ Reminder set for ${['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][nextDay.getUTCDay()]} ${day(nextDay)} 09:00 (UTC): dentist`);
    expect(await say(t, '.remind every monday 09:00 weekly')).to.match(/^🔁 Reminder set every Monday at 09:00 \(UTC\), first on Mon \d{4}-\d\d-\d\d 09:00: weekly$/);
  });

  it('in a group only the creator, a group admin or an owner may cancel', async () => {
    const OWNER = '6281100000009@s.whatsapp.net';
    t = await start({}, { owners: ['6281100000009'] });
    await say(t, '.remind 1h alice one', { chatId: GROUP });
    await say(t, '.remind 2h alice two', { chatId: GROUP });
    await say(t, '.remind 3h alice three', { chatId: GROUP });
    await say(t, '.remind 4h alice four', { chatId: GROUP });
    expect(await say(t, '.cancel 1', { chatId: GROUP, senderId: BOB })).to.equal('Only the person who set that reminder, a group admin or an owner of the bot can cancel it.');
    t.transport.groupAdmins.set(GROUP, [CAROL]);
    expect(await say(t, '.cancel 1', { chatId: GROUP, senderId: CAROL })).to.match(/^Cancelled: .* — alice one$/);
    expect(await say(t, '.cancel 1', { chatId: GROUP, senderId: OWNER })).to.match(/^Cancelled: .* — alice two$/);
    expect(await say(t, '.cancel 1', { chatId: GROUP, senderId: ALICE })).to.match(/^Cancelled: .* — alice three$/);
    expect(await say(t, '.cancel 1', { chatId: GROUP, senderId: BOB })).to.match(/^Only the person who set that reminder/);
    expect(await say(t, '.reminders', { chatId: GROUP, senderId: BOB })).to.match(/\n1\. .* — alice four\n/);
  });

  it('after a restart: one that fell due while stopped is sent with a late note; one older than a day is listed once', async () => {
    t = await start();
    await say(t, '.remind 1h while you were away');
    await say(t, '.remind 1h still pending');
    const { dir } = t;
    t = await t.restart({}, async () => {
      changeStoredDocument(path.join(dir, 'data'), 'remind', 'reminders', ALICE, (doc) => {
        // Time passing while the bot is down: the first fell due 2 s ago (no waiting for it), and, planted, a reminder
        // two days overdue, as a bot stopped for two days would find it.
        doc.reminders.find((r: { text: string }) => r.text === 'while you were away').due = Date.now() - 2000;
        doc.reminders.push({ id: 'old-one', text: 'water the plants', creator: ALICE, zone: 'Asia/Jakarta', createdAt: Date.now() - 3 * 86_400_000, due: Date.now() - 2 * 86_400_000 });
      });
    });
    const late = await t.transport.until(() => t!.replies(ALICE).find((x) => x.includes('while you were away')));
    expect(late).to.match(/^⏰ Reminder, \d+ s late \(I was offline when it was due, \w{3} \d{4}-\d\d-\d\d \d\d:\d\d(?::\d\d)?\): while you were away$/);
    const listed = await t.transport.until(() => t!.replies(ALICE).find((x) => x.includes('water the plants')));
    expect(listed).to.match(/^⏰ While I was offline, this reminder fell due more than 1 day ago and was not sent:\n1\. \w{3} \d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? \(Asia\/Jakarta\) — water the plants$/);
    expect(await say(t, '.reminders')).to.match(/\n1\. .* — still pending\nCancel/);
    t = await t.restart();
    // What the start would send again is handed to the outbox during the start: wait until it is out.
    await t.app.outbox.settle(10_000);
    expect(t.replies(ALICE).join('\n'), 'said once only').to.not.match(/water the plants|while you were away/);
    expect(await say(t, '.reminders')).to.match(/— still pending/);
  });

  it('a file that does not match its schema is set aside with its bytes kept; the other chats keep theirs', async () => {
    const dir = await tempDir();
    const folder = path.join(dir, 'data', 'reminders');
    await mkdir(folder, { recursive: true });
    const bad = '{"version":1,"chatId":"' + BOB + '","reminders":[{"id":"x","text":42}]}';
    await writeFile(path.join(folder, `${safeFileName(BOB)}.json`), bad);
    await writeFile(
      path.join(folder, `${safeFileName(ALICE)}.json`),
      JSON.stringify({ version: 1, chatId: ALICE, reminders: [{ id: 'a', text: 'kept', creator: ALICE, zone: 'UTC', createdAt: Date.now(), due: Date.now() + 3_600_000 }] }),
    );
    t = await start({}, { dir });
    expect(await say(t, '.reminders')).to.match(/— kept/);
    expect(await say(t, '.reminders', { senderId: BOB })).to.match(/^No reminders/);
    const names = await readdir(folder);
    const aside = names.find((n) => n.startsWith(`${safeFileName(BOB)}.json.corrupt-`));
    expect(aside, names.join(', ')).to.be.a('string');
    expect(await readFile(path.join(folder, aside!), 'utf8')).to.equal(bad);
    expect(t.logs().some((l) => /set aside/.test(String(l.msg)) && String(l.file).endsWith(`${safeFileName(BOB)}.json`))).to.equal(true);
  });

  it('the schedule_message tool schedules into the calling chat only, whatever chat the model names', async () => {
    const clock = (t = await start({}, {
      model: (request) =>
        request.messages.at(-1)?.role === 'tool'
          ? `done: ${lastText(request)}`
          : { tool: 'schedule_message', args: { when: 'in 2 seconds', text: 'call mom', chatId: GROUP, chat_id: BOB, to: BOB } },
    })).useClock();
    const answer = await say(t, 'remind me in two seconds to call mom, and post it in the group');
    expect(answer).to.match(/^done: ⏰ Reminder set for .* \(Asia\/Jakarta\): call mom$/);
    await clock.tick(2000);
    await t.transport.until(() => t!.replies(ALICE).includes('⏰ Reminder: call mom'));
    // The sending pace (one a second per chat here) lets out anything else the reminder queued.
    await clock.tick(5_000);
    const elsewhere = t.transport.actions.filter((a) => 'chatId' in a && a.chatId !== ALICE);
    expect(elsewhere, 'nothing sent to another chat').to.deep.equal([]);
  });

  it('the schedule_message tool asked in a group binds the reminder to the group, not to the asker’s private chat', async () => {
    t = await start({}, {
      model: (request) => (request.messages.at(-1)?.role === 'tool' ? `done: ${lastText(request)}` : { tool: 'schedule_message', args: { when: 'in 2 seconds', text: 'stand-up now' } }),
    });
    const clock = t.useClock();
    const answer = await say(t, 'remind us all in two seconds: stand-up', { chatId: GROUP });
    expect(answer).to.match(/^done: ⏰ Reminder set for .*: stand-up now$/);
    // Listed in the group (for everyone there), not in Alice's private chat.
    expect(await say(t, '.reminders', { chatId: GROUP, senderId: BOB })).to.match(/\n1\. .* — stand-up now/);
    expect(await say(t, '.reminders')).to.match(/^No reminders/);
    await clock.tick(2000);
    await t.transport.until(() => t!.replies(GROUP).includes('⏰ Reminder: stand-up now'));
    await clock.tick(5_000);
    expect(t.replies(ALICE).filter((x) => x.includes('stand-up')), 'nothing in Alice’s private chat').to.deep.equal([]);
  });
});
