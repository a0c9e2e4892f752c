import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { releaseAppendHandle } from '../../../core/builtin.js';
import { RecallStore, type RecallStoreEvents } from '../../../plugins/recall/log-store.js';

const ANA = '10000000001@s.whatsapp.net';
const month = (at: number) => new Date(at).toISOString().slice(0, 7);

/** Every file of the chat's folder, as text (what is on disk about the chat). */
async function folderText(folder: string): Promise<string> {
  const names = await readdir(folder);
  return (await Promise.all(names.map((n) => readFile(path.join(folder, n), 'utf8').catch(() => '')))).join('\n');
}

describe('recall log: a failing disk and a crash lose nothing and leak nothing', function () {
  this.timeout(20_000);
  let root: string;
  const now = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1, 12);
  const folder = () => path.join(root, ANA);
  const file = () => path.join(folder(), `${month(now)}.jsonl`);

  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'recall-disk-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('appends that failed are written once the disk is back; a message deleted meanwhile never reaches the disk', async () => {
    const failed: string[] = [];
    const logs = new RecallStore(root, { writeFailed: (f) => failed.push(f) });
    const chat = logs.chat(ANA);
    await chat.add({ id: 'm1', role: 'user', senderId: ANA, text: 'first line about kiwis', at: now });
    const before = await readFile(file());

    // The month's file cannot take appends (a directory stands where it was): the next two appends fail. (The kept-open
    // append handle is closed first, as whatever replaces a log file must do.)
    releaseAppendHandle(file());
    await rm(file());
    await mkdir(file());
    await chat.add({ id: 'secret', role: 'user', senderId: ANA, text: 'my bank pin is 4471 walrus', at: now + 1 });
    await chat.add({ id: 'm3', role: 'user', senderId: ANA, text: 'the plums arrive on friday', at: now + 2 });
    assert.deepEqual([...new Set(failed)], [file()], 'the failed writes are reported');
    assert.equal(await logs.flush(), 2, 'two messages are still not on disk');

    // The disk is back; the person deletes the message before the retry (deleted for everyone, .mydata delete).
    await rmdir(file());
    await writeFile(file(), before);
    assert.equal(await chat.removeWhere((e) => e.id === 'secret'), 1);
    assert.equal(await logs.flush(), 0, 'every kept message is on disk now');

    assert.doesNotMatch(await folderText(folder()), /walrus|4471/);
    const restarted = new RecallStore(root).chat(ANA);
    assert.deepEqual((await restarted.search('plums')).map((h) => h.message.id), ['m3']);
    assert.deepEqual((await restarted.search('kiwis')).map((h) => h.message.id), ['m1']);
    assert.deepEqual(await restarted.search('walrus'), []);
  });

  it('after a crash cut the last line, the next message starts on a line of its own and is found after a restart', async () => {
    await mkdir(folder(), { recursive: true });
    const header = JSON.stringify({ recall: 1, chat: ANA });
    const kept = JSON.stringify({ role: 'user', senderId: ANA, text: 'the harbour gate is blue', at: now });
    await writeFile(file(), `${header}\n${kept}\n{"role":"user","text":"half of a li`);

    await new RecallStore(root).chat(ANA).add({ role: 'user', senderId: ANA, text: 'after the crash the boat leaves at nine', at: now + 1 });

    const bad: number[] = [];
    const events: RecallStoreEvents = { badLines: (_f, count) => bad.push(count) };
    const restarted = new RecallStore(root, events).chat(ANA);
    assert.deepEqual((await restarted.search('boat')).map((h) => h.message.text), ['after the crash the boat leaves at nine']);
    assert.deepEqual((await restarted.search('harbour')).map((h) => h.message.text), ['the harbour gate is blue']);
    assert.equal(await restarted.size(), 2);
    assert.deepEqual(bad, [1], 'the cut line is skipped and counted');
  });

  it("a month file of another chat (or with a damaged first line) is set aside before a new message is added, so the message stays in this chat's log", async () => {
    await mkdir(folder(), { recursive: true });
    const foreign = `${JSON.stringify({ recall: 1, chat: '10000000002@s.whatsapp.net' })}\n${JSON.stringify({ role: 'user', text: 'budi secret walrus', at: now })}\n`;
    await writeFile(file(), foreign);
    const aside: string[] = [];
    // The message arrives before anybody searched the chat (the usual order after a start).
    const logs = new RecallStore(root, { setAside: (_f, movedTo) => aside.push(movedTo) });
    await logs.chat(ANA).add({ role: 'user', senderId: ANA, text: 'the harbour gate is blue', at: now + 1 });
    assert.deepEqual((await logs.chat(ANA).search('harbour')).map((h) => h.message.text), ['the harbour gate is blue']);
    assert.deepEqual(await logs.chat(ANA).search('walrus'), []);
    assert.equal(aside.length, 1);
    assert.equal(await readFile(aside[0], 'utf8'), foreign, 'the foreign file is kept as it was');
    const restarted = new RecallStore(root).chat(ANA);
    assert.deepEqual((await restarted.search('harbour')).map((h) => h.message.text), ['the harbour gate is blue']);
  });
});
