import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { RecallStore, type LoggedMessage, type RecallStoreEvents } from '../../../plugins/recall/log-store.js';

const ANA = '10000000001@s.whatsapp.net';
const BUDI = '10000000002@s.whatsapp.net';
const CITRA = '10000000003@s.whatsapp.net';

/** `count` messages of one chat, early in this month, the one at `plant` carrying `word`. */
function chatter(chat: string, count: number, word: string, plant: number): LoggedMessage[] {
  const start = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1, 1);
  return Array.from({ length: count }, (_, i) => ({
    id: `${chat}-${i}`,
    role: 'user' as const,
    senderId: chat,
    text: i === plant ? `the ${word} is behind the station` : `chatter line ${i} about the weather`,
    at: start + i,
  }));
}

describe('recall: memory stays bounded however many chats are searched', function () {
  this.timeout(20_000);
  let root: string;
  let rebuilt: string[];
  const events = (): RecallStoreEvents => ({ indexRebuilt: (file) => rebuilt.push(file) });

  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'recall-bound-'));
    rebuilt = [];
  });
  afterEach(async () => rm(root, { recursive: true, force: true }));

  it('unloads the least recently searched chats beyond maxLoadedMessages, and finds everything again after', async () => {
    let max = 250;
    const store = new RecallStore(root, events(), { snapshotMinLines: 50, maxLoadedMessages: () => max });
    await store.chat(ANA).addMany(chatter(ANA, 120, 'bakery', 7));
    await store.chat(BUDI).addMany(chatter(BUDI, 120, 'pharmacy', 9));
    await store.chat(CITRA).addMany(chatter(CITRA, 120, 'library', 11));

    assert.equal((await store.chat(ANA).search('bakery'))[0]?.message.id, `${ANA}-7`);
    assert.equal((await store.chat(BUDI).search('pharmacy'))[0]?.message.id, `${BUDI}-9`);
    assert.equal(store.loadedMessages(), 240);
    // A third chat would make 360 loaded: the least recently searched (Ana's) goes.
    assert.equal((await store.chat(CITRA).search('library'))[0]?.message.id, `${CITRA}-11`);
    await store.flush();
    assert.equal(store.chat(ANA).loadedMessages, 0);
    assert.equal(store.loadedMessages(), 240);

    // A message to an unloaded chat goes to its file; its next search loads it (from the snapshot) and finds both.
    rebuilt.length = 0;
    await store.chat(ANA).add({ id: 'late', role: 'user', senderId: ANA, text: 'the bakery moved to the corner', at: Date.now() });
    const again = await store.chat(ANA).search('bakery');
    assert.deepEqual(again.map((h) => h.message.id).sort(), [`${ANA}-7`, 'late'].sort());
    assert.deepEqual(rebuilt, [], 'the reload came from the index snapshot, not a rebuild from the log');
    await store.flush();
    // Budi's chat was now the least recently searched.
    assert.equal(store.chat(BUDI).loadedMessages, 0);
    assert.ok(store.loadedMessages() <= max);

    // A bound raised (a dashboard edit) keeps everything loaded.
    max = 10_000;
    await store.chat(BUDI).search('pharmacy');
    await store.flush();
    assert.equal(store.loadedMessages(), 121 + 120 + 120);
  });

  it('two chats searched at once both get their answers, and the bound holds after', async () => {
    const store = new RecallStore(root, events(), { snapshotMinLines: 50, maxLoadedMessages: () => 100 });
    await store.chat(ANA).addMany(chatter(ANA, 90, 'bakery', 3));
    await store.chat(BUDI).addMany(chatter(BUDI, 90, 'pharmacy', 4));
    // Both searches start at once: each chat's load pushes the other over the bound.
    const [ana, budi] = await Promise.all([store.chat(ANA).search('bakery'), store.chat(BUDI).search('pharmacy')]);
    assert.equal(ana[0]?.message.id, `${ANA}-3`);
    assert.equal(budi[0]?.message.id, `${BUDI}-4`);
    await store.flush();
    assert.ok(store.loadedMessages() <= 100, `${store.loadedMessages()} messages loaded`);
  });
});

describe('recall plugin: the maxLoadedMessages option', function () {
  this.timeout(30_000);

  it('keeps the loaded chats within the option, says so in the log, and .recall still finds the unloaded chat', async () => {
    const { startTestBot } = await import('../../../app/testing/index.js');
    const recall = (await import('../../../plugins/recall/index.js')).default;
    const { writeFile, mkdir } = await import('node:fs/promises');
    const { safeFileName } = await import('../../../core/api/file-name.js');
    const t = await startTestBot(recall, { options: { maxLoadedMessages: 1000 } });
    try {
      // Two chats of 700 past messages each, written as the plugin writes them.
      for (const [chat, word] of [[ANA, 'bakery'], [BUDI, 'pharmacy']] as const) {
        const lines = chatter(chat, 700, word, 42);
        const dir = path.join(t.dir, 'data', 'recall', safeFileName(chat));
        await mkdir(dir, { recursive: true });
        const month = new Date(lines[0].at).toISOString().slice(0, 7);
        await writeFile(path.join(dir, `${month}.jsonl`), [JSON.stringify({ recall: 1, chat }), ...lines.map((l) => JSON.stringify(l))].join('\n') + '\n');
      }
      const recallIn = async (chat: string, word: string) => {
        const actions = await t.transport.push({ chatId: chat, senderId: chat, text: `.recall ${word}` });
        return actions.map((a) => (a.type === 'text' ? a.text : '')).join('\n');
      };
      assert.match(await recallIn(ANA, 'bakery'), /the bakery is behind the station/);
      assert.match(await recallIn(BUDI, 'pharmacy'), /the pharmacy is behind the station/);
      await t.app.bot.idle();
      const unloaded = () => t.logs().filter((l) => /left memory \(over maxLoadedMessages\)/.test(String(l.msg)));
      // 1,400 loaded > 1,000: the chat searched first (Ana's) left memory, and the log says so.
      await t.until(() => unloaded().length);
      assert.deepEqual(unloaded().map((l) => [l.chat, l.messages]), [[ANA, 700]]);
      assert.match(await recallIn(ANA, 'bakery'), /the bakery is behind the station/);
    } finally {
      await t.stop();
    }
  });
});
