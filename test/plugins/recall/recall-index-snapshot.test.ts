import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import recall from '../../../plugins/recall/index.js';
import { RecallStore, type LoggedMessage, type RecallStoreEvents } from '../../../plugins/recall/log-store.js';

const ANA = '10000000001@s.whatsapp.net';
const BUDI = '10000000002@s.whatsapp.net';
const HOUR = 60 * 60 * 1000;
const month = (at: number) => new Date(at).toISOString().slice(0, 7);

/** Events a store reported, by kind. */
function recorder() {
  const rebuilt: Array<{ file: string; messages: number; reason: string }> = [];
  const events: RecallStoreEvents = { indexRebuilt: (file, messages, reason) => rebuilt.push({ file, messages, reason }) };
  return { rebuilt, events };
}

/** `count` chatter messages of one chat, in this month, with a planted one at `plantAt`. */
function messages(count: number, start: number, plant: { at: number; text: string }): LoggedMessage[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `m-${i}`,
    role: 'user' as const,
    senderId: ANA,
    text: i === plant.at ? plant.text : `chatter line ${i} about the weather`,
    at: start + i,
  }));
}

describe('recall: index snapshots (the first search after a restart)', function () {
  this.timeout(20_000);
  let root: string;
  // Early in the current month, so every message lands in one month file whatever the day.
  const start = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1, 1);
  const snapshotFile = () => path.join(root, ANA, `${month(start)}.index`);
  const logFile = () => path.join(root, ANA, `${month(start)}.jsonl`);
  const store = (events: RecallStoreEvents) => new RecallStore(root, events, { snapshotMinLines: 10 });
  /** A restart: a new store over the same folder searches, then stops (so no snapshot is written behind the test's back). */
  const texts = async (events: RecallStoreEvents, query: string) => {
    const restarted = store(events);
    const hits = await restarted.chat(ANA).search(query, { limit: 20 });
    await restarted.flush();
    return hits.map((h) => h.message.text);
  };

  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'recall-snapshot-'));
    const first = store({});
    await first.chat(ANA).addMany(messages(40, start, { at: 3, text: 'the wifi password is tangerine42' }));
    await first.chat(BUDI).addMany([{ role: 'user', senderId: BUDI, text: 'budi keeps a quixotic walrus', at: start }]);
    await first.flush();
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('a large month is indexed from its log once (said in the log), then a restart loads its snapshot and finds old and new messages', async () => {
    assert.deepEqual(await readdir(path.join(root, ANA)), [`${month(start)}.jsonl`], 'no snapshot before the chat was ever searched');
    const cold = recorder();
    const loaded = store(cold.events);
    assert.deepEqual((await loaded.chat(ANA).search('tangerine42')).map((h) => h.message.id), ['m-3']);
    assert.deepEqual(cold.rebuilt.map((r) => [path.basename(r.file), r.messages, r.reason]), [[`${month(start)}.jsonl`, 40, 'no snapshot']]);
    await loaded.flush();
    assert.match(await readFile(snapshotFile(), 'utf8'), /^\{"recallIndex":1,/);

    // Messages logged after the snapshot (a crash before the next one): indexed on top of it at the next load.
    await store({}).chat(ANA).add({ role: 'user', senderId: ANA, text: 'the new gate code is heron9', at: start + 100 });
    const warm = recorder();
    assert.deepEqual(await texts(warm.events, 'tangerine42'), ['the wifi password is tangerine42']);
    assert.deepEqual(await texts(warm.events, 'heron9'), ['the new gate code is heron9']);
    assert.deepEqual(await texts(warm.events, 'weather'), Array.from({ length: 20 }, (_, i) => `chatter line ${39 - i} about the weather`), 'newest first');
    assert.deepEqual(warm.rebuilt, [], 'the snapshot was used, nothing re-indexed');
    assert.deepEqual(await texts(warm.events, 'quixotic walrus'), [], "another chat's words are not in this chat's index");
  });

  it('a corrupt, stale or foreign snapshot is rebuilt from the log without losing a message, and replaced', async () => {
    const cold = store({});
    await cold.chat(ANA).search('warm up');
    await cold.flush();
    const good = await readFile(snapshotFile(), 'utf8');

    // Corrupt: one byte of the index changed (the header's checksum catches it), then a cut file.
    await writeFile(snapshotFile(), good.replace('tangerine42', 'tangerine43'));
    let seen = recorder();
    assert.deepEqual(await texts(seen.events, 'tangerine42'), ['the wifi password is tangerine42']);
    assert.match(seen.rebuilt[0]?.reason ?? '', /snapshot is corrupt: its contents do not match their checksum/);
    await writeFile(snapshotFile(), good.slice(0, good.length / 2));
    seen = recorder();
    const reloaded = store(seen.events);
    assert.equal((await reloaded.chat(ANA).search('weather', { limit: 20 })).length, 20);
    assert.equal(await reloaded.chat(ANA).size(), 40, 'nothing lost');
    assert.match(seen.rebuilt[0]?.reason ?? '', /snapshot is corrupt/);
    // The rebuilt index is saved again: the next start uses it.
    await reloaded.flush();
    seen = recorder();
    assert.deepEqual(await texts(seen.events, 'tangerine42'), ['the wifi password is tangerine42']);
    assert.deepEqual(seen.rebuilt, []);

    // Stale: the month's file was changed behind the snapshot's back (same length, other words).
    const log = await readFile(logFile(), 'utf8');
    await writeFile(logFile(), log.replace('tangerine42', 'mandarine42'));
    seen = recorder();
    assert.deepEqual(await texts(seen.events, 'mandarine42'), ['the wifi password is mandarine42']);
    assert.deepEqual(await texts(recorder().events, 'tangerine42'), [], 'the old words are not found from the stale snapshot');
    assert.match(seen.rebuilt[0]?.reason ?? '', /snapshot is stale: the month's file changed since/);

    // Foreign: Ana's snapshot copied into Budi's folder under his month's name is never used for Budi.
    await copyFile(snapshotFile(), path.join(root, BUDI, `${month(start)}.index`));
    seen = recorder();
    const budi = new RecallStore(root, seen.events, { snapshotMinLines: 1 });
    assert.deepEqual(await budi.chat(BUDI).search('mandarine42'), []);
    assert.deepEqual((await budi.chat(BUDI).search('walrus')).map((h) => h.message.text), ['budi keeps a quixotic walrus']);
    assert.match(seen.rebuilt[0]?.reason ?? '', /snapshot is corrupt: it names another chat or month/);
  });

  it('removing a message deletes the snapshot holding its words at once, and the next snapshot leaves them out', async () => {
    const loaded = store({});
    await loaded.chat(ANA).search('warm up');
    await loaded.flush();
    assert.match(await readFile(snapshotFile(), 'utf8'), /tangerine42/);

    assert.equal(await loaded.chat(ANA).removeWhere((e) => e.id === 'm-3'), 1);
    assert.doesNotMatch(await readFile(snapshotFile(), 'utf8').catch(() => ''), /tangerine42/);
    await loaded.flush();
    assert.doesNotMatch(await readFile(snapshotFile(), 'utf8'), /tangerine42/);
    assert.doesNotMatch(await readFile(logFile(), 'utf8'), /tangerine42/);

    const seen = recorder();
    const again = store(seen.events);
    assert.deepEqual(await again.chat(ANA).search('tangerine42'), []);
    assert.deepEqual((await again.chat(ANA).search('line 4')).map((h) => h.message.id)[0], 'm-4', 'later lines keep their place');
    assert.equal(await again.chat(ANA).size(), 39);
    assert.deepEqual(seen.rebuilt, [], 'the snapshot written after the removal matches the rewritten file');
  });
});

describe('recall: removing many messages of a loaded chat', function () {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'recall-remove-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('more removals than one-by-one pays for rebuild the month index: the rest is still found, the removed never; a crashed write leaves no temp file', async () => {
    const start = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1, 1);
    const logs = new RecallStore(root, {}, { snapshotMinLines: 10 });
    const chat = logs.chat(ANA);
    await chat.addMany(Array.from({ length: 150 }, (_, i) => ({ id: `m-${i}`, role: 'user' as const, senderId: i < 80 ? BUDI : ANA, text: `${i < 80 ? 'budi' : 'ana'} note ${i} about the ferry`, at: start + i })));
    await writeFile(path.join(root, ANA, `${month(start)}.index.tmp-999999-1`), 'half a snapshot');
    assert.equal((await chat.search('ferry', { limit: 20 })).length, 20);
    assert.ok(!(await readdir(path.join(root, ANA))).some((n) => n.includes('.tmp-')), 'the leftover temporary file is removed at load');

    assert.equal(await chat.removeWhere((e) => e.senderId === BUDI), 80);
    assert.deepEqual(await chat.search('budi'), []);
    assert.deepEqual((await chat.search('note 81')).map((h) => h.message.id)[0], 'm-81');
    assert.deepEqual((await chat.search('ferry', { limit: 20 })).map((h) => h.message.id), Array.from({ length: 20 }, (_, i) => `m-${149 - i}`));
    assert.equal(await chat.size(), 70);
    await logs.flush();
    assert.doesNotMatch(await readFile(path.join(root, ANA, `${month(start)}.index`), 'utf8'), /budi/);
  });
});

describe('recall plugin: index snapshot across restarts', function () {
  this.timeout(30_000);
  let dir: string;
  let bot: TestBot | undefined;
  const start = () => startTestBot(recall, { dir, options: {} });

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'recall-plugin-snapshot-'));
  });
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('a large chat is indexed from its log once, saved at stop, loaded from the snapshot after a restart; a corrupt one is rebuilt and said in the log', async () => {
    const now = Date.now();
    const seed = new RecallStore(path.join(dir, 'data', 'recall'));
    await seed.chat(ANA).addMany(messages(1200, now - 2 * HOUR, { at: 7, text: 'the locker code is zanzibar77' }));
    await seed.flush();
    const rebuiltLines = () => bot!.logs().filter((l) => /^recall index of .* rebuilt from the log/.test(String(l.msg)));

    bot = await start();
    assert.match((await bot.send({ text: '.recall zanzibar77', senderId: ANA }))[0], /the locker code is zanzibar77/);
    assert.match(String(rebuiltLines()[0]?.msg), /rebuilt from the log \(1200 messages\): no snapshot/);
    await bot.stop();
    const folder = path.join(dir, 'data', 'recall', ANA);
    const snapshot = (await readdir(folder)).find((n) => n.endsWith('.index'));
    assert.ok(snapshot, 'the snapshot was written');

    bot = await start();
    assert.match((await bot.send({ text: '.recall zanzibar77', senderId: ANA }))[0], /the locker code is zanzibar77/);
    assert.deepEqual(rebuiltLines(), [], 'loaded from the snapshot');
    await bot.stop();

    await writeFile(path.join(folder, snapshot), '{"recallIndex":1,"parts":["1.reg"]}\n[1,2');
    bot = await start();
    assert.match((await bot.send({ text: '.recall zanzibar77', senderId: ANA }))[0], /^🔎 1 message[\s\S]*the locker code is zanzibar77/);
    assert.match(String(rebuiltLines()[0]?.msg), /rebuilt from the log \(1200 messages\): its snapshot is corrupt/);
  });
});
