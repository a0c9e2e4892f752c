import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sinon from 'sinon';
import { lastText, startTestBot, type ModelRequest, type TestBot } from '../../../app/testing/index.js';
import recall from '../../../plugins/recall/index.js';
import { RecallStore, type LoggedMessage } from '../../../plugins/recall/log-store.js';
import { closeDatabase } from '../../../core/services/store/database.js';
import { storeDatabaseText, storedSearchLogText } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

const ANA = '10000000001@s.whatsapp.net';
const DAY = 24 * 60 * 60 * 1000;

describe('recall retention: nothing past it stays anywhere', function () {
  this.timeout(20_000);
  const data = storeFolderPerTest({ prefix: 'recall-retention-edges-', inside: 'data' });
  let root: string;
  const y = new Date().getUTCFullYear();
  const m = new Date().getUTCMonth();
  /** `count` messages of Ana at `at`, `at + 1`, …, the first one saying `first`. */
  const burst = (count: number, at: number, first: string): LoggedMessage[] =>
    Array.from({ length: count }, (_, i) => ({ role: 'user' as const, senderId: ANA, text: i ? `chatter ${i} about the weather` : first, at: at + i }));
  /** Everything on disk of the log (the store database and its WAL), as text. */
  const onDisk = () => storeDatabaseText(data.dir);

  beforeEach(() => {
    root = path.join(data.dir, 'recall');
  });

  it("a month wholly past retention goes from the database and its word index (which held the month's words)", async () => {
    const old = Date.UTC(y, m - 3, 5);
    const logs = new RecallStore(root);
    const chat = logs.chat(ANA);
    await chat.addMany([...burst(20, old, 'the old safe code is flamingo9913'), ...burst(3, Date.UTC(y, m, 1, 1), 'the new safe code is heron')]);
    assert.equal((await chat.search('flamingo9913')).length, 1);
    await logs.flush();
    assert.match(await onDisk(), /flamingo9913/);

    assert.equal(await logs.prune(Date.UTC(y, m - 1, 1)), 20);
    assert.doesNotMatch(await onDisk(), /flamingo9913/);
    assert.deepEqual(await chat.search('flamingo9913'), [], 'the loaded chat forgot it');
    assert.deepEqual((await chat.search('safe code')).map((h) => h.message.text), ['the new safe code is heron']);
    assert.equal((await chat.where(() => true)).length, 3, 'the export sees only what is kept');
  });

  it('in the month the cutoff falls in, older messages go from disk, search and export, newer ones of that month stay', async () => {
    const cutoff = Date.UTC(y, m - 2, 15);
    const logs = new RecallStore(root);
    const chat = logs.chat(ANA);
    await chat.addMany([...burst(3, cutoff - 5 * DAY, 'the old locker is pelican12'), ...burst(2, cutoff + 2 * DAY, 'the new locker is heron34')]);
    assert.equal((await chat.search('locker')).length, 2, 'the chat is loaded with both');

    assert.equal(await logs.prune(cutoff), 3);
    assert.doesNotMatch(await onDisk(), /pelican12/);
    assert.match(await onDisk(), /heron34/);
    assert.deepEqual((await chat.search('locker')).map((h) => h.message.text), ['the new locker is heron34']);
    assert.deepEqual((await chat.where(() => true)).map((e) => e.text), ['the new locker is heron34', 'chatter 1 about the weather']);
    closeDatabase(data.dir);
    const restarted = new RecallStore(root).chat(ANA);
    assert.deepEqual((await restarted.search('locker')).map((h) => h.message.text), ['the new locker is heron34']);
  });
});

describe('recall retention in every chat', function () {
  this.timeout(20_000);
  const GROUP = '120363000000000066@g.us';
  let dir: string;
  let bot: TestBot | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'recall-retention-chats-'));
  });
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('the start sweep drops old messages of every chat, private and group, and keeps their newer ones', async () => {
    const start = (options: Record<string, unknown>) => startTestBot(recall, { dir, options, config: { groups: { commandsWithoutMention: true } }, model: () => 'noted' });
    bot = await start({});
    const old = Date.now() - 40 * DAY;
    const chats = [
      { chatId: ANA, senderId: ANA },
      { chatId: GROUP, senderId: ANA },
      { chatId: '10000000003@s.whatsapp.net', senderId: '10000000003@s.whatsapp.net' },
    ];
    for (const [i, chat] of chats.entries()) {
      await bot.send({ ...chat, text: `old harbour note ${i} pelican`, timestamp: old });
      await bot.send({ ...chat, text: `new harbour note ${i} heron` });
    }
    await bot.stop();

    bot = await start({ retentionDays: 30 });
    for (const [i, chat] of chats.entries()) {
      const [answer] = await bot.send({ ...chat, text: '.recall harbour' });
      assert.match(answer, new RegExp(`^🔎 1 message[\\s\\S]*new harbour note ${i} heron`), `${chat.chatId}: ${answer}`);
    }
    assert.doesNotMatch(storedSearchLogText(path.join(dir, 'data'), 'recall', 'recall'), /pelican/, 'no old message is left in the recall log');
  });
});

describe('recall retention between two daily sweeps', function () {
  this.timeout(20_000);
  let dir: string;
  let bot: TestBot | undefined;
  let clock: sinon.SinonFakeTimers | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'recall-retention-clock-'));
  });
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
    clock?.restore();
    clock = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('a message that grew older than retentionDays is no longer shown, by command or tool, even before the sweep removed it', async () => {
    clock = sinon.useFakeTimers({ now: Date.now(), toFake: ['setInterval', 'clearInterval', 'Date'] });
    // "where was the harbour?" makes the model call the recall tool; it then answers with the tool's result.
    const model = (request: ModelRequest) => {
      if (request.messages.at(-1)?.role === 'tool') return `tool said: ${lastText(request)}`;
      return lastText(request) === 'where was the harbour?' ? { tool: 'recall', args: { query: 'harbour' } } : 'noted';
    };
    bot = await startTestBot(recall, { dir, options: { retentionDays: 2 }, model });
    const start = Date.now();
    await bot.send({ text: 'the old harbour address is pelican lane', senderId: ANA, timestamp: start - 1.5 * DAY });
    await bot.send({ text: 'the new harbour address is heron street', senderId: ANA, timestamp: start - 0.5 * DAY });
    assert.match((await bot.send({ text: '.recall harbour', senderId: ANA }))[0], /^🔎 2 messages/);

    // A day later (the clock moves, no timer fires): the old message is 2.5 days old.
    clock.setSystemTime(start + DAY);
    const [answer] = await bot.send({ text: '.recall harbour', senderId: ANA });
    assert.match(answer, /^🔎 1 message in this chat about "harbour":[\s\S]*heron street/);
    assert.doesNotMatch(answer, /pelican/);
    const [tool] = await bot.send({ text: 'where was the harbour?', senderId: ANA });
    assert.match(tool, /heron street/);
    assert.doesNotMatch(tool, /pelican/);
  });
});
