import { expect } from 'chai';
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Store, Type } from '../../../core/index.js';
import { safeFileName } from '../../../core/api/file-name.js';
import { DataHealth } from '../../../core/services/store/data-health.js';
import { registerDataHealth } from '../../../core/services/store/data-domain.js';
import { closeDatabase, databaseFor } from '../../../core/services/store/database.js';
import { PluginStores } from '../../../core/services/store/plugin-store.js';
import { everyFileText, storedDocuments } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

const ALICE = '6281100000001@s.whatsapp.net';
const BOB = '6281100000002@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';
const ODD = 'chat/with:odd?chars';

const Note = Type.Object({ text: Type.String(), by: Type.String() });
// Version 2 keeps `items`; version 1 files kept the same list under `notes`.
const NOTES = Store.chatDoc('notes', Type.Object({ items: Type.Array(Note) }), () => ({ items: [] }), {
  version: 2,
  migrate: (doc, from) => (from < 2 ? { items: doc.notes } : doc),
  people: { items: (d) => d.items, author: (n) => n.by },
});
// A plugin-wide document kept in the same folder as the per-chat ones: never taken for a chat.
const ZONES = Store.doc('zones', Type.Object({ byUser: Type.Record(Type.String(), Type.String()) }), () => ({ byUser: {} }), { path: 'notes/notes/zones.json', people: { byId: (d) => d.byUser } });

/** A document as the JSON-file store of earlier versions left it, at `notes/notes/<chat>.json`. */
async function writeEarlier(dataDir: string, rel: string, value: unknown): Promise<string> {
  const file = path.join(dataDir, rel);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
  return file;
}

describe('Store.doc and Store.chatDoc in the store database', () => {
  const folder = storeFolderPerTest({ inside: 'data' });
  let health: DataHealth;
  let unregister: () => void;
  const open = () => new PluginStores('notes', folder.dir, [NOTES, ZONES]);
  const texts = async (s: PluginStores, chatId: string) => (await s.chat(chatId).doc(NOTES).get()).items.map((n) => n.text);
  const noteFile = (chatId: string) => path.join('notes', 'notes', `${safeFileName(chatId)}.json`);
  beforeEach(() => {
    health = new DataHealth(folder.dir);
    unregister = registerDataHealth(health);
  });
  afterEach(() => unregister());

  it('takes in the files of the earlier layout once (an older version migrated), keeps them aside, and names the chats they were', async () => {
    await writeEarlier(folder.dir, noteFile(ALICE), { version: 2, items: [{ text: 'alice note', by: ALICE }] });
    await writeEarlier(folder.dir, noteFile(ODD), { version: 1, notes: [{ text: 'odd note', by: BOB }] });
    await writeEarlier(folder.dir, 'notes/notes/zones.json', { version: 1, byUser: { [ALICE]: 'Europe/Berlin' } });
    const s = open();
    expect((await s.chats(NOTES)).sort()).to.deep.equal([ALICE, ODD].sort());
    expect(await texts(s, ALICE)).to.deep.equal(['alice note']);
    expect(await texts(s, ODD)).to.deep.equal(['odd note']);
    expect((await s.doc(ZONES).get()).byUser).to.deep.equal({ [ALICE]: 'Europe/Berlin' });
    expect(await readdir(path.join(folder.dir, 'notes', 'notes'))).to.deep.equal([]);
    expect((await readdir(path.join(folder.dir, 'migrated', 'notes', 'notes'))).sort()).to.deep.equal([`${safeFileName(ALICE)}.json`, `${safeFileName(ODD)}.json`, 'zones.json'].sort());
    // Stored in the current version: the earlier `notes` became `items`.
    expect(storedDocuments(folder.dir, 'notes', 'notes')[ODD]).to.deep.equal({ version: 2, items: [{ text: 'odd note', by: BOB }] });
    await s.close();
    expect(await texts(open(), ALICE), 'taken in once').to.deep.equal(['alice note']);
  });

  it('a file found again after a crash before it was moved aside is not taken in over later changes', async () => {
    const file = await writeEarlier(folder.dir, noteFile(ALICE), { version: 2, items: [{ text: 'first', by: ALICE }] });
    const copy = path.join(path.dirname(folder.dir), 'copy.json');
    await copyFile(file, copy);
    const s = open();
    await s.chat(ALICE).doc(NOTES).save((d) => void d.items.push({ text: 'later', by: ALICE }));
    await s.close();
    closeDatabase(folder.dir);
    // The crash: the row and its record were written, the file was not moved yet.
    await copyFile(copy, file);
    const again = open();
    expect(await texts(again, ALICE)).to.deep.equal(['first', 'later']);
    expect(await readdir(path.join(folder.dir, 'notes', 'notes'))).to.deep.equal([]);
  });

  it('a file of the earlier layout that does not match is set aside with its bytes, named, and only that chat starts empty', async () => {
    const bad = '{"version": 2, "items": [{"text": 7}]}';
    const file = await writeEarlier(folder.dir, noteFile(ALICE), bad);
    await writeEarlier(folder.dir, noteFile(GROUP), { version: 2, items: [{ text: 'group note', by: BOB }] });
    const s = open();
    expect(await texts(s, ALICE)).to.deep.equal([]);
    expect(await texts(s, GROUP)).to.deep.equal(['group note']);
    const aside = (await readdir(path.dirname(file))).filter((n) => n.includes('.corrupt-'));
    expect(aside).to.have.length(1);
    expect(await readFile(path.join(path.dirname(file), aside[0]), 'utf8')).to.equal(bad);
    expect(health.setAside.map((p) => p.file)).to.deep.equal([file]);
  });

  it('a stored document that no longer matches its schema is set aside with its bytes, and that chat starts anew', async () => {
    const s = open();
    await s.chat(ALICE).doc(NOTES).save((d) => void d.items.push({ text: 'fine', by: ALICE }));
    await s.chat(GROUP).doc(NOTES).save((d) => void d.items.push({ text: 'kept', by: BOB }));
    await s.close();
    const broken = JSON.stringify({ version: 2, items: [{ text: 7 }] });
    databaseFor(folder.dir).run('UPDATE "doc:notes:notes" SET value = ? WHERE key = ?', [broken, ALICE]);
    const again = open();
    expect(await texts(again, ALICE)).to.deep.equal([]);
    expect(await texts(again, GROUP)).to.deep.equal(['kept']);
    const file = path.join(folder.dir, noteFile(ALICE));
    expect(health.setAside.map((p) => p.file)).to.deep.equal([file]);
    expect(await readFile(health.setAside[0].movedTo, 'utf8')).to.equal(broken);
    expect(await again.chats(NOTES)).to.deep.equal([GROUP]);
  });

  it("a person's delete reaches what was taken in: their words are in no file of data/ (database, WAL, the copies kept aside)", async () => {
    await writeEarlier(folder.dir, noteFile(ALICE), { version: 2, items: [{ text: 'alice-private-words', by: ALICE }] });
    await writeEarlier(folder.dir, noteFile(GROUP), { version: 2, items: [{ text: 'alice-group-words', by: ALICE }, { text: 'bob-group-words', by: BOB }] });
    await writeEarlier(folder.dir, 'notes/notes/zones.json', { version: 1, byUser: { [ALICE]: 'Asia/Jakarta-alice', [BOB]: 'Europe/Paris' } });
    const s = open();
    const [participant] = s.participants();
    const exported = JSON.stringify(await participant.exportFor([ALICE]));
    expect(exported).to.include('alice-private-words').and.include('alice-group-words').and.include('Asia/Jakarta-alice').and.not.include('bob-group-words');
    expect(await participant.deleteFor([ALICE])).to.equal(3);
    expect(await texts(s, GROUP)).to.deep.equal(['bob-group-words']);
    expect(await s.chats(NOTES), 'her emptied private chat keeps no document').to.deep.equal([GROUP]);
    const onDisk = await everyFileText(folder.dir, 'latin1');
    for (const trace of ['alice-private-words', 'alice-group-words', 'Asia/Jakarta-alice', ALICE]) expect(onDisk, trace).not.to.include(trace);
    expect(onDisk).to.include('bob-group-words').and.include('Europe/Paris');
  });
});
