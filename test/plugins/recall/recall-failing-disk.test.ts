import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { closeDatabase, databaseFor } from '../../../core/services/store/database.js';
import { RecallStore } from '../../../plugins/recall/log-store.js';
import { storeDatabaseText } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

const ANA = '10000000001@s.whatsapp.net';
const month = (at: number) => new Date(at).toISOString().slice(0, 7);

describe('recall log: a failing disk and a crash lose nothing and leak nothing', function () {
  this.timeout(20_000);
  const data = storeFolderPerTest({ prefix: 'recall-disk-', inside: 'data' });
  let root: string;
  const now = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1, 12);
  const folder = () => path.join(root, ANA);
  const file = () => path.join(folder(), `${month(now)}.jsonl`);

  beforeEach(() => {
    root = path.join(data.dir, 'recall');
  });

  it('items that could not be written are kept and written once the disk is back; a message deleted meanwhile never reaches the disk', async () => {
    const logs = new RecallStore(root);
    const chat = logs.chat(ANA);
    await chat.add({ id: 'm1', role: 'user', senderId: ANA, text: 'first line about kiwis', at: now });

    // The database cannot grow (a full disk): the next two items fail to be written and are kept.
    const db = databaseFor(data.dir);
    db.exec(`PRAGMA max_page_count = ${db.get<{ page_count: number }>('PRAGMA page_count')!.page_count}`);
    const long = (words: string) => `${words} ${Array.from({ length: 500 }, (_, i) => `filler${i}`).join(' ')}`;
    chat.addSoon({ id: 'secret', role: 'user', senderId: ANA, text: long('my bank pin is 4471 walrus'), at: now + 1 }, 60_000);
    chat.addSoon({ id: 'm3', role: 'user', senderId: ANA, text: long('the plums arrive on friday'), at: now + 2 }, 60_000);
    assert.equal(await logs.flush(), 2, 'two messages are still not on disk');

    // The disk is back; the person deletes the message before the retry (deleted for everyone, .mydata delete).
    db.exec('PRAGMA max_page_count = 1073741823');
    assert.equal(await chat.removeWhere((e) => e.id === 'secret'), 1);
    assert.equal(await logs.flush(), 0, 'every kept message is on disk now');

    assert.doesNotMatch(await storeDatabaseText(data.dir), /walrus|4471/);
    closeDatabase(data.dir);
    const restarted = new RecallStore(root).chat(ANA);
    assert.deepEqual((await restarted.search('plums')).map((h) => h.message.id), ['m3']);
    assert.deepEqual((await restarted.search('kiwis')).map((h) => h.message.id), ['m1']);
    assert.deepEqual(await restarted.search('walrus'), []);
  });

  it('a month file of an earlier version cut by a crash is taken in: its whole lines found, the cut one skipped and counted', async () => {
    await mkdir(folder(), { recursive: true });
    const header = JSON.stringify({ recall: 1, chat: ANA });
    const kept = JSON.stringify({ role: 'user', senderId: ANA, text: 'the harbour gate is blue', at: now });
    await writeFile(file(), `${header}\n${kept}\n{"role":"user","text":"half of a li`);

    const bad: number[] = [];
    const logs = new RecallStore(root, { badLines: (_f, count) => bad.push(count) });
    await logs.chat(ANA).add({ role: 'user', senderId: ANA, text: 'after the crash the boat leaves at nine', at: now + 1 });
    closeDatabase(data.dir);

    const restarted = new RecallStore(root).chat(ANA);
    assert.deepEqual((await restarted.search('boat')).map((h) => h.message.text), ['after the crash the boat leaves at nine']);
    assert.deepEqual((await restarted.search('harbour')).map((h) => h.message.text), ['the harbour gate is blue']);
    assert.equal(await restarted.size(), 2);
    assert.deepEqual(bad, [1], 'the cut line is skipped and counted');
  });

  it("a month file of another chat (or with a damaged first line) is set aside with its bytes kept, never taken into this chat's log", async () => {
    await mkdir(folder(), { recursive: true });
    const foreign = `${JSON.stringify({ recall: 1, chat: '10000000002@s.whatsapp.net' })}\n${JSON.stringify({ role: 'user', text: 'budi secret walrus', at: now })}\n`;
    await writeFile(file(), foreign);
    const logs = new RecallStore(root);
    await logs.chat(ANA).add({ role: 'user', senderId: ANA, text: 'the harbour gate is blue', at: now + 1 });
    assert.deepEqual((await logs.chat(ANA).search('harbour')).map((h) => h.message.text), ['the harbour gate is blue']);
    assert.deepEqual(await logs.chat(ANA).search('walrus'), []);
    const aside = (await readdir(folder())).filter((n) => n.startsWith(`${month(now)}.jsonl.corrupt-`));
    assert.equal(aside.length, 1);
    assert.equal(await readFile(path.join(folder(), aside[0]), 'utf8'), foreign, 'the foreign file is kept as it was');
    closeDatabase(data.dir);
    const restarted = new RecallStore(root).chat(ANA);
    assert.deepEqual((await restarted.search('harbour')).map((h) => h.message.text), ['the harbour gate is blue']);
  });
});
