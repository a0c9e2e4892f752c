import { expect } from 'chai';
import { copyFile, mkdir, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Store, Type } from '../../../core/index.js';
import { safeFileName } from '../../../core/index.js';
import { DataHealth } from '../../../core/services/store/data-health.js';
import { registerDataHealth } from '../../../core/services/store/data-domain.js';
import { PluginStores } from '../../../core/services/store/plugin-store.js';
import { everyFileText } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

const ALICE = '6281100000001@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';
const ODD = 'chat/with:odd?chars';
const DAY_MS = 24 * 60 * 60 * 1000;

const Said = Type.Object({ text: Type.String(), by: Type.String(), at: Type.Number() });
const SAID = Store.chatLog('said', Said, { people: { author: (s) => s.by }, keepDays: 30, at: (s) => s.at });

/** A log file as the JSON-lines writer of earlier versions left it: one item per line at `<plugin>/<name>/<chat>.jsonl`. */
async function writeEarlierLog(dataDir: string, chatId: string, lines: string[]): Promise<string> {
  const file = path.join(dataDir, 'notes', 'said', `${safeFileName(chatId)}.jsonl`);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, lines.map((l) => `${l}\n`).join(''));
  return file;
}

describe('Store.chatLog in the store database', () => {
  let health: DataHealth;
  let unregister: () => void;
  let stores: PluginStores[];
  const folder = storeFolderPerTest({
    inside: 'data',
    closing: async () => {
      for (const s of stores) await s.close();
      unregister();
    },
  });
  const open = () => {
    const s = new PluginStores('notes', folder.dir, [SAID]);
    stores.push(s);
    return s;
  };
  const texts = async (s: PluginStores, chatId: string) => (await s.chat(chatId).log(SAID).read()).map((i) => i.text);
  beforeEach(() => {
    health = new DataHealth(folder.dir);
    unregister = registerDataHealth(health);
    stores = [];
  });

  it('keeps items in order per chat across a reopen, in one database file', async () => {
    const s = open();
    await s.chat(ALICE).log(SAID).append({ text: 'one', by: ALICE, at: 1 });
    await s.chat(GROUP).log(SAID).append({ text: 'group', by: ALICE, at: 2 });
    await s.chat(ALICE).log(SAID).append({ text: 'two', by: ALICE, at: 3 });
    await s.close();
    const again = open();
    expect(await texts(again, ALICE)).to.deep.equal(['one', 'two']);
    expect(await texts(again, GROUP)).to.deep.equal(['group']);
    expect((await again.chats(SAID)).sort()).to.deep.equal([ALICE, GROUP].sort());
    expect(await readdir(folder.dir)).to.include('store.db').and.not.to.include('notes');
  });

  it('a data folder written by the earlier version is taken in once at start, nothing lost, its files kept aside', async () => {
    const line = (text: string, at = Date.now()) => JSON.stringify({ text, by: ALICE, at });
    const file = await writeEarlierLog(folder.dir, ALICE, [line('first'), line('second')]);
    await writeEarlierLog(folder.dir, ODD, [line('odd chat')]);
    const s = open();
    expect(await texts(s, ALICE)).to.deep.equal(['first', 'second']);
    expect(await texts(s, ODD)).to.deep.equal(['odd chat']);
    expect(await readdir(path.dirname(file))).to.deep.equal([]);
    const kept = path.join(folder.dir, 'migrated', 'notes', 'said');
    expect((await readdir(kept)).sort()).to.deep.equal([`${safeFileName(ALICE)}.jsonl`, `${safeFileName(ODD)}.jsonl`].sort());
    expect(await readFile(path.join(kept, `${safeFileName(ALICE)}.jsonl`), 'utf8')).to.include('first').and.include('second');
    await s.close();
    expect(await texts(open(), ALICE), 'taken in once, not again at the next start').to.deep.equal(['first', 'second']);
  });

  it('a crash after the import and before the files were moved aside imports nothing twice', async () => {
    const file = await writeEarlierLog(folder.dir, ALICE, [JSON.stringify({ text: 'only once', by: ALICE, at: Date.now() })]);
    const before = await stat(file);
    const s = open();
    expect(await texts(s, ALICE)).to.deep.equal(['only once']);
    await s.close();
    // The state a kill -9 between the commit and the rename leaves: the same file, unchanged, still in its place.
    await copyFile(path.join(folder.dir, 'migrated', 'notes', 'said', `${safeFileName(ALICE)}.jsonl`), file);
    await utimes(file, before.atime, before.mtime);
    expect(await texts(open(), ALICE)).to.deep.equal(['only once']);
    expect(await readdir(path.dirname(file))).to.deep.equal([]);
  });

  it('a torn last line (a crash mid-append) is skipped and reported; every whole line is taken in', async () => {
    await writeEarlierLog(folder.dir, ALICE, [JSON.stringify({ text: 'whole', by: ALICE, at: Date.now() }), '{"text":"torn","by']);
    expect(await texts(open(), ALICE)).to.deep.equal(['whole']);
    expect(health.skipped).to.equal(1);
  });

  it('removed items are in no file of data/: the database, its WAL and the copy kept aside of the earlier files', async () => {
    await writeEarlierLog(folder.dir, GROUP, [JSON.stringify({ text: 'bob-keeps-this', by: 'bob', at: Date.now() }), JSON.stringify({ text: 'alice-secret-words', by: ALICE, at: Date.now() })]);
    const s = open();
    await s.chat(GROUP).log(SAID).append({ text: 'alice-newer-words', by: ALICE, at: Date.now() });
    expect(await s.chat(GROUP).log(SAID).removeWhere((i) => i.by === ALICE)).to.equal(2);
    const onDisk = await everyFileText(folder.dir, 'latin1');
    expect(onDisk).not.to.include('alice-secret-words').and.not.to.include('alice-newer-words');
    expect(onDisk).to.include('bob-keeps-this');
    expect(await texts(s, GROUP)).to.deep.equal(['bob-keeps-this']);
  });

  it('retention drops the items past keepDays in every chat and keeps the rest in order', async () => {
    const s = open();
    await s.chat(ALICE).log(SAID).append({ text: 'old-alice', by: ALICE, at: Date.now() - 31 * DAY_MS });
    await s.chat(ALICE).log(SAID).append({ text: 'fresh-alice', by: ALICE, at: Date.now() - DAY_MS });
    await s.chat(GROUP).log(SAID).append({ text: 'old-group', by: ALICE, at: Date.now() - 40 * DAY_MS });
    await s.sweep();
    expect(await texts(s, ALICE)).to.deep.equal(['fresh-alice']);
    expect(await texts(s, GROUP)).to.deep.equal([]);
    expect(await s.chats(SAID)).to.deep.equal([ALICE]);
    expect(await everyFileText(folder.dir, 'latin1')).not.to.include('old-alice').and.not.to.include('old-group');
  });
});
