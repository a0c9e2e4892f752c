import { expect } from 'chai';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { install as installFakeTimers } from '@sinonjs/fake-timers';
import { safeFileName } from '../../../core/index.js';
import { domainFor } from '../../../core/services/store/data-domain.js';
import { databaseFor } from '../../../core/services/store/database.js';
import { storeDatabaseText, storedDocuments } from '../../helpers/disk-text.js';
import { FakeModel, lastText, startTestBot, type ModelRequest, type TestBot, type TestClock } from '../../../app/testing/index.js';
import { UnsavedDataError } from '../../../app/app.js';
import { MemoryTransport } from '../../../core/adapters/memory/memory-transport.js';
import type { OutgoingMedia, SentMessage } from '../../../core/kernel/port/message.js';
import mydata from '../../../plugins/mydata/index.js';
import remind from '../../../plugins/remind/index.js';
import { startWebServer, type WebServer } from '../../../web/server.js';
import { ALICE, BOB, BOT, FAST_SENDING, UNPACED_SENDS, GROUP, say } from '../../helpers/chat.js';
import { tempDir } from '../../helpers/checkout.js';
import { csrfOf, login, request, sameOrigin, TOKEN } from '../../web/web-helpers.js';

/** The remind options these tests use, as config.json and as the dashboard's form fields. */
const OPTIONS = { timeZone: 'Asia/Jakarta', minRepeatSeconds: 1 };

/** A memory transport that keeps the content of documents the bot sends (`.mydata` removes its file after sending). */
class KeepingTransport extends MemoryTransport {
  documents: string[] = [];
  /** While set, a reminder being sent waits here, as on a slow connection (see `sendingReminder`). */
  hold?: Promise<void>;
  /** Reminders handed to the transport so far, held or not. */
  reminderSends = 0;
  override async sendText(chatId: string, text: string, options?: { quotedId?: string }): Promise<SentMessage> {
    if (/^(⏰|🔁) Reminder[,:]/.test(text)) {
      this.reminderSends++;
      await this.hold;
    }
    return super.sendText(chatId, text, options);
  }
  override async sendMedia(chatId: string, media: OutgoingMedia): Promise<SentMessage> {
    this.documents.push(await readFile(media.path, 'utf8'));
    return super.sendMedia(chatId, media);
  }
}

interface Bot {
  t: TestBot;
  transport: KeepingTransport;
  web?: WebServer;
  /** Every text the bot sent to `chatId` so far. */
  texts(chatId?: string): string[];
  say(text: string, from?: { senderId?: string; chatId?: string; id?: string }): Promise<string>;
  stop(): Promise<void>;
}

async function start(opts: { dir?: string; enabled?: boolean; dashboard?: boolean; plugins?: Array<typeof remind>; env?: Record<string, string> } = {}): Promise<Bot> {
  const transport = new KeepingTransport([BOT]);
  const t = await startTestBot(opts.plugins ?? [remind], {
    dir: opts.dir,
    transport,
    env: { ...(opts.dashboard ? { CONFIG_TOKEN: TOKEN } : {}), ...(opts.env ?? {}) },
    config: { port: 0, sending: FAST_SENDING, plugins: { remind: { enabled: opts.enabled ?? true, ...OPTIONS } } },
    sendPacing: UNPACED_SENDS,
  });
  const web = opts.dashboard ? await startWebServer(t.app, () => transport) : undefined;
  return {
    t,
    transport,
    web,
    texts: (chatId) => t.replies(chatId),
    say: (text, from) => say(t, text, from),
    async stop() {
      await web?.close();
      await t.stop();
    },
  };
}

/** Switches the remind plugin on or off the way an owner does: the dashboard's plugin form, over HTTP. */
async function switchRemind(web: WebServer, on: boolean): Promise<void> {
  const { cookie } = await login(web.port, TOKEN);
  const page = await request(web.port, { path: '/config/plugins', headers: { cookie } });
  const form = new URLSearchParams({ _csrf: csrfOf(page.body), plugin: 'remind', access: 'everyone', ...Object.fromEntries(Object.entries(OPTIONS).map(([k, v]) => [`opt:${k}`, String(v)])) });
  if (on) form.set('enabled', 'on');
  const res = await request(web.port, { method: 'POST', path: '/config/plugins/save', headers: { cookie, ...sameOrigin(web.port) }, body: form.toString() });
  expect(res.status, [...res.body.matchAll(/Not saved[^<]*|class="field-error"[^>]*>[^<]*/g)].map((m) => m[0]).join('; ')).to.equal(303);
}

/**
 * Moves the bot's fake clock on a quarter second at a time until `check` gives something (what the bot does later on
 * its own: a reminder firing), letting the writes each step started finish first, so the clock never runs ahead of
 * the bot. Fails after `limitMs` of the fake clock.
 */
async function tickUntil<T>(bot: Bot, clock: TestClock, check: () => T | undefined | false, what: string, limitMs = 60_000): Promise<T> {
  const data = domainFor(path.join(bot.t.dir, 'data'));
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  for (let waited = 0; ; waited += 250) {
    const hit = check();
    if (hit) return hit;
    if (waited > limitMs) throw new Error(`${what}: not seen in ${limitMs / 1000} s of the test's clock; sent so far: ${bot.texts().join(' | ')}`);
    await clock.tick(250);
    await turn();
    await data.whenNotWriting();
    await turn();
  }
}

const reminderFile = (dir: string, chatId: string) => path.join(dir, 'data', 'reminders', `${safeFileName(chatId)}.json`);
/** A chat's reminders as the store database keeps them on disk (JSON text; '' when it keeps none). */
const remindersOnDisk = (dir: string, chatId: string) => JSON.stringify(storedDocuments(path.join(dir, 'data'), 'remind', 'reminders')[chatId] ?? '');
const zonesOnDisk = (dir: string) => storedDocuments(path.join(dir, 'data'), 'remind', 'time-zones')[''] as { zones: Record<string, string> };
/** A broken disk under the store database: every write fails (SQLITE_READONLY) until `fixed`. */
const breakWrites = (dir: string) => databaseFor(path.join(dir, 'data')).exec('PRAGMA query_only = ON');
const fixWrites = (dir: string) => databaseFor(path.join(dir, 'data')).exec('PRAGMA query_only = OFF');

describe('remind: switched off, .mydata, deleted messages, failed writes (real clock, real files)', function () {
  this.timeout(30_000);
  let bot: Bot | undefined;
  afterEach(async () => {
    await bot?.stop().catch(() => undefined);
    bot = undefined;
  });

  it('switched off in the dashboard, due reminders are held and nothing is sent; switched on, each goes out once, marked late', async () => {
    bot = await start({ dashboard: true });
    const clock = bot.t.useClock();
    await bot.say('.remind 4s take the tea out');
    await bot.say('.remind every "* * * * * *" stretch');
    await tickUntil(bot, clock, () => bot!.texts(ALICE).includes('🔁 Reminder: stretch'), 'the repeating one while switched on');
    await switchRemind(bot.web!, false);
    // A run handed to the send queue just before the switch may still go out; after that, nothing.
    await clock.tick(1100);
    await bot.t.app.bot.whenStoresIdle();
    const before = bot.texts(ALICE).length;
    await clock.tick(4000); // the tea falls due meanwhile
    await bot.t.app.bot.whenStoresIdle();
    expect(bot.texts(ALICE).slice(before), 'nothing sent while switched off').to.deep.equal([]);
    expect(await bot.say('.reminders')).to.match(/turned off/i);

    await switchRemind(bot.web!, true);
    const tea = await tickUntil(bot, clock, () => bot!.texts(ALICE).find((x) => x.startsWith('⏰ Reminder,') && x.includes('take the tea out')), 'the held reminder');
    expect(tea).to.match(/^⏰ Reminder, \d+ s late \(reminders were switched off when it was due, \w{3} \d{4}-\d\d-\d\d \d\d:\d\d(?::\d\d)?\): take the tea out$/);
    const late = await tickUntil(bot, clock, () => bot!.texts(ALICE).find((x, i) => i >= before && x.includes('stretch')), 'the held repeating one');
    expect(late).to.match(/^🔁 Reminder, \d+ s late \(reminders were switched off when it was due, .*\): stretch$/);
    // The runs missed while switched off are not sent in a burst: one late note, then the schedule goes on.
    await tickUntil(bot, clock, () => bot!.texts(ALICE).slice(before).filter((x) => x === '🔁 Reminder: stretch').length >= 1, 'the schedule going on');
    expect(bot.texts(ALICE).slice(before).filter((x) => /late.*stretch/.test(x))).to.have.length(1);
    expect(bot.texts(ALICE).filter((x) => x.includes('Reminder, ') && x.includes('take the tea out')), 'sent once').to.have.length(1);
    expect(await bot.say('.cancel 1')).to.match(/^Cancelled: 🔁 .* — stretch$/); // a quick stop: nothing left to send
  });

  it('a reminder already on its way when the owner switches reminders off and on again goes out once', async () => {
    bot = await start({ dashboard: true });
    const clock = bot.t.useClock();
    let release!: () => void;
    bot.transport.hold = new Promise((resolve) => (release = resolve));
    await bot.say('.remind 1s feed the cat');
    await tickUntil(bot, clock, () => bot!.transport.reminderSends === 1, 'the reminder handed to the transport');
    // Off and on while it is still being sent (a slow connection): switching on must not send it a second time.
    await switchRemind(bot.web!, false);
    await switchRemind(bot.web!, true);
    release();
    await bot.t.until(() => bot!.texts(ALICE).some((x) => x.includes('feed the cat') && x.includes('Reminder:')));
    await clock.tick(1500); // a second copy would follow within the per-chat pacing (one a second here)
    await bot.t.app.bot.whenStoresIdle();
    expect(bot.texts(ALICE).filter((x) => /Reminder.*: feed the cat$/.test(x) && !/set for/.test(x)), 'sent once').to.have.length(1);
    expect(bot.transport.reminderSends).to.equal(1);
  });

  it('off in config.json at start, a reminder that fell due while the bot was stopped waits until the dashboard switches it on', async () => {
    const dir = await tempDir();
    try {
      bot = await start({ dir });
      await bot.say('.remind 2s water the plants');
      await bot.stop();
      // The next start comes 10 s later by its clock: the reminder fell due while the bot was stopped.
      const later = installFakeTimers({ now: Date.now() + 10_000, toFake: ['Date'] });
      try {
        bot = await start({ dir, enabled: false, dashboard: true });
      } finally {
        later.uninstall();
      }
      const clock = bot.t.useClock();
      await clock.tick(10_000);
      await bot.t.app.bot.whenStoresIdle();
      expect(bot.texts(), 'nothing sent while off').to.deep.equal([]);
      await switchRemind(bot.web!, true);
      const late = await tickUntil(bot, clock, () => bot!.texts(ALICE).find((x) => x.includes('water the plants')), 'the late reminder');
      expect(late).to.match(/^⏰ Reminder, \d+ s late \(I was offline when it was due, .*\): water the plants$/);
    } finally {
      await bot?.stop();
      bot = undefined;
      await rm(dir, { recursive: true, force: true });
    }
  });

  it(".mydata exports the person's reminders and time zone; .mydata delete removes them, and they never fire", async () => {
    bot = await start({ plugins: [mydata, remind] });
    const clock = bot.t.useClock();
    await bot.say('.timezone Europe/Berlin');
    await bot.say('.timezone Asia/Tokyo', { senderId: BOB });
    await bot.say('.remind 2s private tea');
    await bot.say('.remind 1h alice in the group', { chatId: GROUP });
    await bot.say('.remind 1h bob in the group', { chatId: GROUP, senderId: BOB });

    await bot.transport.push({ text: '.mydata', senderId: ALICE });
    expect(bot.transport.documents).to.have.length(1);
    const section = JSON.parse(bot.transport.documents[0]).reminders as { timeZones: Record<string, string>; reminders: Record<string, Array<{ text: string; zone: string }>> };
    expect(section.timeZones).to.deep.equal({ [ALICE]: 'Europe/Berlin' });
    expect(Object.keys(section.reminders).sort()).to.deep.equal([ALICE, GROUP].sort());
    expect(section.reminders[ALICE].map((r) => r.text)).to.deep.equal(['private tea']);
    expect(section.reminders[GROUP].map((r) => r.text)).to.deep.equal(['alice in the group']);

    expect(await bot.say('.mydata delete')).to.include('your reminders and time zone');
    expect(await bot.say('.mydata delete confirm')).to.match(/reminders: 3\b/);
    expect(await bot.say('.reminders', { chatId: GROUP, senderId: BOB })).to.match(/\n1\. .* — bob in the group\nCancel/);
    expect(await bot.say('.timezone')).to.match(/^Your time zone: Asia\/Jakarta \(the bot's default\)/);
    expect(await bot.say('.timezone', { senderId: BOB })).to.match(/^Your time zone: Asia\/Tokyo\./);
    const onDisk = await storeDatabaseText(path.join(bot.t.dir, 'data'));
    expect(onDisk).to.not.match(/private tea|alice in the group|Europe\/Berlin/);
    expect(onDisk).to.match(/bob in the group/);
    await clock.tick(2300);
    await bot.t.app.bot.whenStoresIdle();
    expect(bot.texts(ALICE).filter((x) => x.includes('private tea')), 'never fires').to.have.length(1); // the confirmation only
  });

  it('.mydata exports the person’s scheduled tasks with their prompts; .mydata delete removes them from disk', async () => {
    bot = await start({ plugins: [mydata, remind] });
    expect(await bot.say('.schedule 1h summarise the plum news')).to.match(/^🗓️ Task scheduled/);
    expect(await bot.say('.schedule 1h bob wants kiwi prices', { senderId: BOB })).to.match(/^🗓️ Task scheduled/);
    await bot.transport.push({ text: '.mydata', senderId: ALICE });
    const exported = bot.transport.documents.at(-1)!;
    expect(exported).to.include('summarise the plum news');
    expect(exported).to.not.include('bob wants kiwi prices');
    await bot.say('.mydata delete');
    await bot.say('.mydata delete confirm');
    expect(await bot.say('.reminders')).to.not.include('plum news');
    expect(remindersOnDisk(bot.t.dir, ALICE)).to.not.include('plum news');
    expect(await bot.say('.reminders', { senderId: BOB })).to.include('bob wants kiwi prices');
  });

  it('.mydata delete whose removal of reminders cannot be written says so instead of "done"; the stop saves it once the disk is fixed', async () => {
    const dir = await tempDir();
    bot = await start({ dir, plugins: [mydata, remind] });
    await bot.say('.remind 1h private tea');
    breakWrites(dir);
    await bot.say('.mydata delete');
    const answer = await bot.say('.mydata delete confirm');
    expect(answer).to.match(/^I could not delete everything: .*reminders: could not save the reminders: the server's data folder is on a read-only file system/);
    // Told in words: no server path, no database engine's message.
    expect(answer).to.not.match(/\/tmp|data\/|\.json|readonly database/);
    expect(await bot.say('.reminders')).to.match(/^No reminders/); // gone from memory at once, the write retried
    fixWrites(dir);
    await bot.stop();
    bot = undefined;
    expect(await storeDatabaseText(path.join(dir, 'data'))).to.not.include('private tea');
    await rm(dir, { recursive: true, force: true });
  });

  it('a message deleted for everyone cancels the reminder it set (command or tool), and only that one', async () => {
    const model = await FakeModel.start((request: ModelRequest) =>
      request.messages.at(-1)?.role === 'tool' ? `done: ${lastText(request)}` : { tool: 'schedule_message', args: { when: 'in 2 seconds', text: 'call mom' } },
    );
    try {
      bot = await start({ env: { API_KEY: 'test-key-123456', BASE_URL: model.url, MODEL: 'test-model' } });
      const clock = bot.t.useClock();
      await bot.say('.remind 2s the surprise party plan', { id: 'set-by-command' });
      await bot.say('.remind 1h keep this one', { id: 'another-message' });
      await bot.say('.remind 3s still due', { id: 'third-message' });
      expect(await bot.say('remind me in two seconds to call mom', { id: 'set-by-tool' })).to.match(/^done: ⏰ Reminder set/);
      await bot.transport.revoke(ALICE, 'set-by-command');
      await bot.transport.revoke(ALICE, 'set-by-tool');
      expect(await bot.say('.reminders')).to.match(/^Reminders in this chat .*\n1\. .* — still due\n2\. .* — keep this one\nCancel/);
      // The other reminders of the chat still fire.
      await tickUntil(bot, clock, () => bot!.texts(ALICE).includes('⏰ Reminder: still due'), 'the reminder set by a message that was not deleted');
      await clock.tick(2_000); // what was deleted would have come by now, within the pacing (one a second here)
      expect(bot.texts(ALICE).filter((x) => /Reminder(, .*)?: (the surprise party plan|call mom)$/.test(x) && !/set/.test(x)), 'never sent').to.deep.equal([]);
      const file = remindersOnDisk(bot.t.dir, ALICE);
      expect(file).to.not.match(/surprise party|call mom/);
      expect(file).to.match(/keep this one/);
    } finally {
      await bot?.stop();
      bot = undefined;
      await model.close();
    }
  });

  it('a write that fails is told to the user, logged once, kept and retried, and saved by the stop once the disk is fixed', async () => {
    const dir = await tempDir();
    bot = await start({ dir });
    const folder = path.join(dir, 'data', 'reminders');
    await bot.say('.remind 1h first');
    await bot.say('.timezone Europe/Berlin');
    // Every write fails, as on a broken or read-only disk.
    breakWrites(dir);

    expect(await bot.say('.remind 2h second')).to.match(
      /^⏰ Reminder set for .*: second\n⚠️ I could not save that: the server's data folder is on a read-only file system\. I keep it in memory and keep trying to save it; if the bot stops before that is fixed, this reminder is lost\.$/,
    );
    expect(await bot.say('.cancel 1')).to.match(/^Cancelled: .* — first\n⚠️ I could not save that: .*the reminder may come back\.$/);
    expect(await bot.say('.timezone Asia/Tokyo')).to.match(/^Your time zone is now Asia\/Tokyo .*\n⚠️ I could not save that: /);
    // Still working from memory meanwhile.
    expect(await bot.say('.reminders')).to.match(/\n1\. .* — second\nCancel/);
    const file = reminderFile(dir, ALICE);
    const errors = bot.t.logs().filter((l) => l.level === 50 && l.file === file);
    expect(errors, 'logged once for the file').to.have.length(1);
    expect(errors[0].msg).to.match(/could not save reminders\/.*: .*retrying/);
    expect(bot.t.app.dataProblems().unsaved.map((u) => u.file).sort()).to.deep.equal([file, path.join(folder, 'timezones.json')].sort());

    // The disk is fixed before the stop: the stop's last try writes what was kept in memory.
    fixWrites(dir);
    await bot.stop();
    bot = undefined;
    const saved = JSON.parse(remindersOnDisk(dir, ALICE)) as { reminders: Array<{ text: string }> };
    expect(saved.reminders.map((r) => r.text)).to.deep.equal(['second']);
    expect(zonesOnDisk(dir).zones).to.deep.equal({ [ALICE]: 'Asia/Tokyo' });
    await rm(dir, { recursive: true, force: true });
  });

  it('a write still failing at the stop is named by the stop (exit non-zero)', async () => {
    bot = await start();
    const dir = bot.t.dir;
    const folder = path.join(dir, 'data', 'reminders');
    await bot.say('.remind 1h first');
    breakWrites(dir);
    expect(await bot.say('.remind 2h second')).to.include('⚠️ I could not save that');
    const stopped = await bot.t.app.stop().then(() => undefined, (err: unknown) => err);
    expect(stopped).to.be.instanceOf(UnsavedDataError);
    expect((stopped as UnsavedDataError).files.map((f) => f.file)).to.include(reminderFile(dir, ALICE));
    await bot.web?.close();
    bot = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('a file that is not JSON, or names another chat, is moved aside as <name>.corrupt-<time> with its bytes, named in the log and on the dashboard', async () => {
    const dir = await tempDir();
    const folder = path.join(dir, 'data', 'reminders');
    await mkdir(folder, { recursive: true });
    const broken = '{"version":1,"chatId":"' + BOB + '","reminders":[{"id":"x",';
    const wrongChat = JSON.stringify({ version: 1, chatId: GROUP, reminders: [] });
    const brokenZones = 'zones: none';
    await writeFile(reminderFile(dir, BOB), broken);
    await writeFile(path.join(folder, `${safeFileName('6281100000003@s.whatsapp.net')}.json`), wrongChat);
    await writeFile(path.join(folder, 'timezones.json'), brokenZones);
    await writeFile(reminderFile(dir, ALICE), JSON.stringify({ version: 1, chatId: ALICE, reminders: [{ id: 'a', text: 'kept', creator: ALICE, zone: 'UTC', createdAt: Date.now(), due: Date.now() + 3_600_000 }] }));
    try {
      bot = await start({ dir });
      expect(await bot.say('.reminders')).to.match(/— kept/);
      expect(await bot.say('.reminders', { senderId: BOB })).to.match(/^No reminders/);
      expect(await bot.say('.timezone')).to.match(/the bot's default/);
      const names = await readdir(folder);
      for (const [name, bytes] of [
        [`${safeFileName(BOB)}.json`, broken],
        [`${safeFileName('6281100000003@s.whatsapp.net')}.json`, wrongChat],
        ['timezones.json', brokenZones],
      ]) {
        const aside = names.find((n) => new RegExp(`^${name.replace(/[.]/g, '\\.')}\\.corrupt-\\d+$`).test(n));
        expect(aside, `${name} set aside: ${names.join(', ')}`).to.be.a('string');
        expect(await readFile(path.join(folder, aside!), 'utf8')).to.equal(bytes);
        expect(names, `${name} is gone from its place`).to.not.include(name);
        expect(bot.t.logs().some((l) => l.level === 40 && l.file === path.join(folder, name) && /set aside/.test(String(l.msg))), `${name} named in the log`).to.equal(true);
      }
      expect(bot.t.app.dataProblems().setAside.map((s) => path.basename(s.file)).sort()).to.deep.equal([`${safeFileName(BOB)}.json`, `${safeFileName('6281100000003@s.whatsapp.net')}.json`, 'timezones.json'].sort());
    } finally {
      await bot?.stop();
      bot = undefined;
      await rm(dir, { recursive: true, force: true });
    }
  });
});
