import { expect } from 'chai';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { definePlugin, Store, Type, type PluginStore } from '../../../core/index.js';
import { safeFileName } from '../../../core/index.js';
import { MemoryTransport } from '../../../core/adapters/memory/memory-transport.js';
import type { OutgoingMedia, SentMessage } from '../../../core/kernel/port/message.js';
import { domainFor } from '../../../core/services/store/data-domain.js';
import { PluginStores } from '../../../core/services/store/plugin-store.js';
import mydata from '../../../plugins/mydata/index.js';
import remind from '../../../plugins/remind/index.js';
import { checkDataFiles } from '../../../cli/doctor/data-files.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { tempDir } from '../../helpers/checkout.js';
import { everyFileText, storeDatabaseText, storedDocuments } from '../../helpers/disk-text.js';

const ALICE = '6281100000001@s.whatsapp.net';
const ALICE_LID = '99000000000001@lid';
const BOB = '6281100000002@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';
const DAY_MS = 24 * 60 * 60 * 1000;
const BOT = '10000000000@s.whatsapp.net';

/*
 * A plugin as a third party would write it: it declares what it keeps and never wires privacy, backups or moves.
 * Its schema requires a key named `version` (the key the store used to strip before checking).
 */
const Note = Type.Object({ text: Type.String(), by: Type.String(), messageId: Type.Optional(Type.String()) });
const NOTES = Store.chatDoc('notes', Type.Object({ version: Type.Integer(), items: Type.Array(Note) }), () => ({ version: 3, items: [] }), {
  people: { items: (d) => d.items, author: (n) => n.by, messageId: (n) => n.messageId, edited: (n, text) => ({ ...n, text: text.replace(/^\.note /, '') }) },
});
const MOODS = Store.doc('moods', Type.Object({ byUser: Type.Record(Type.String(), Type.String()) }), () => ({ byUser: {} }), { people: { byId: (d) => d.byUser } });
const Said = Type.Object({ text: Type.String(), by: Type.String(), at: Type.Number() });
const SAID = Store.chatLog('said', Said, { people: { author: (s) => s.by }, keepDays: 30, at: (s) => s.at });
const UNDECLARED = Store.doc('undeclared', Type.Object({}), () => ({}));

let opened: PluginStore | undefined;
const notesPlugin = definePlugin({
  name: 'notes',
  description: 'Keeps notes, moods and what was said per chat',
  stores: [NOTES, MOODS, SAID],
  setup(host) {
    opened = host.store;
    return {
      commands: [
        {
          command: 'note',
          run: async (ctx) => {
            try {
              await host.store.chat(ctx.chatId).doc(NOTES).save((d) => void d.items.push({ text: ctx.args, by: ctx.senderId, messageId: ctx.message.id }));
              await host.store.doc(MOODS).save((d) => void (d.byUser[ctx.senderId] = 'noting'));
              await host.store.chat(ctx.chatId).log(SAID).append({ text: ctx.args, by: ctx.senderId, at: Date.now() });
              await ctx.reply('Noted.');
            } catch (err) {
              await ctx.reply(`Not saved: ${(err as Error).message}`);
            }
          },
        },
        { command: 'notes', run: async (ctx) => ctx.reply((await host.store.chat(ctx.chatId).doc(NOTES).get()).items.map((n) => n.text).join(', ') || 'none') },
      ],
    };
  },
});

/** Keeps the content of the documents the bot sends (`.mydata` removes its file after sending). */
class KeepingTransport extends MemoryTransport {
  documents: string[] = [];
  override async sendMedia(chatId: string, media: OutgoingMedia): Promise<SentMessage> {
    this.documents.push(await readFile(media.path, 'utf8'));
    return super.sendMedia(chatId, media);
  }
}

describe('host.store: what a plugin declares is kept, checked, exported, deleted and moved by the core', function () {
  this.timeout(30000);
  let dir: string;
  let t: TestBot | undefined;
  let transport: KeepingTransport;
  const notesFile = (chatId: string) => path.join(dir, 'data', 'notes', 'notes', `${safeFileName(chatId)}.json`);
  // The documents live in the store database: what its file holds of a chat's notes, and of the moods.
  const notesOnDisk = (chatId: string) => JSON.stringify(storedDocuments(path.join(dir, 'data'), 'notes', 'notes')[chatId] ?? 'absent');
  const moodsOnDisk = () => storedDocuments(path.join(dir, 'data'), 'notes', 'moods')[''];

  async function start(): Promise<void> {
    t = await startTestBot([mydata, notesPlugin], { dir, ownIds: [BOT], config: { plugins: {} } });
    transport = new KeepingTransport([BOT]);
    await t.app.connect(transport);
  }
  const say = async (text: string, senderId: string, chatId = senderId, id?: string) =>
    (await transport.push({ text, senderId, chatId, isGroup: chatId.endsWith('@g.us'), mentions: chatId.endsWith('@g.us') ? [BOT] : undefined, ...(id ? { id } : {}) })).filter((a) => a.type === 'text').map((a) => (a as { text: string }).text).join('\n');

  beforeEach(async () => {
    dir = await tempDir();
    await start();
  });
  afterEach(async () => {
    await t?.stop();
    t = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('comes back exactly as stored after a restart over the same folder (a schema requiring "version" included)', async () => {
    expect(await say('.note buy milk', ALICE)).to.equal('Noted.');
    expect(await say('.note group plan', BOB, GROUP)).to.equal('Noted.');
    await t!.stop();
    await start();
    expect(await say('.notes', ALICE)).to.equal('buy milk');
    expect(await say('.notes', BOB, GROUP)).to.equal('group plan');
    expect(await opened!.chat(ALICE).doc(NOTES).get()).to.include({ version: 3 });
    expect((await readdir(path.dirname(notesFile(ALICE))).catch(() => [])).filter((n) => n.includes('.corrupt-')), 'nothing set aside').to.deep.equal([]);
    expect(t!.app.dataProblems().setAside).to.deep.equal([]);
  });

  it(".mydata exports the person's part of every declaration; .mydata delete removes it and leaves the others'", async () => {
    await say('.note private tea', ALICE);
    await say('.note alice in the group', ALICE, GROUP);
    await say('.note bob in the group', BOB, GROUP);
    await say('.mydata', ALICE);
    const section = JSON.parse(transport.documents[0]).notes;
    expect(Object.keys(section.notes).sort()).to.deep.equal([ALICE, GROUP].sort());
    expect(section.notes[ALICE].map((n: { text: string }) => n.text)).to.deep.equal(['private tea']);
    expect(section.notes[GROUP].map((n: { text: string }) => n.text)).to.deep.equal(['alice in the group']);
    expect(section.moods).to.deep.equal({ [ALICE]: 'noting' });
    expect(section.said[GROUP].map((s: { text: string }) => s.text)).to.deep.equal(['alice in the group']);

    await say('.mydata delete', ALICE);
    expect(await say('.mydata delete confirm', ALICE)).to.match(/notes: 5\b/);
    expect(await say('.notes', BOB, GROUP)).to.equal('bob in the group');
    expect(await say('.notes', ALICE)).to.equal('none');
    // The documents and logs live in the store database (its file and WAL).
    const onDisk = await storeDatabaseText(path.join(dir, 'data'));
    expect(onDisk).not.to.include('alice').and.not.to.include('private tea').and.not.to.include(ALICE);
    expect(onDisk).to.include('bob in the group');
  });

  it('a message deleted for everyone takes its note with it, only by its writer (or an admin, or the account)', async () => {
    await say('.note secret', ALICE, GROUP, 'm-secret');
    await say('.note kept', ALICE, GROUP, 'm-kept');
    await transport.revoke(GROUP, 'm-secret', { ids: [BOB] });
    expect(await say('.notes', ALICE, GROUP), "another member's forged delete does nothing").to.equal('secret, kept');
    await transport.revoke(GROUP, 'm-secret', { ids: [ALICE] });
    expect(await say('.notes', ALICE, GROUP)).to.equal('kept');
    expect(notesOnDisk(GROUP)).not.to.include('secret');
  });

  it("an edit by the message's writer replaces the note's words on disk; another member's forged edit does nothing", async () => {
    await say('.note meet at 5', ALICE, GROUP, 'm-time');
    await transport.edit(GROUP, 'm-time', '.note meet at 9', { ids: [BOB] });
    expect(await say('.notes', ALICE, GROUP)).to.equal('meet at 5');
    await transport.edit(GROUP, 'm-time', '.note meet at 6', { ids: [ALICE] });
    expect(await say('.notes', ALICE, GROUP)).to.equal('meet at 6');
    expect(notesOnDisk(GROUP)).not.to.include('meet at 5');
  });

  it('a private chat moving from its LID to its phone id takes its notes, log and entries along; nothing stays under the LID', async () => {
    await say('.note before the move', ALICE_LID);
    await t!.app.bot.privacy.moveChat(ALICE_LID, ALICE);
    expect(await say('.notes', ALICE)).to.equal('before the move');
    expect(Object.keys(storedDocuments(path.join(dir, 'data'), 'notes', 'notes'))).to.deep.equal([ALICE]);
    expect(await opened!.chats(SAID)).to.deep.equal([ALICE]);
    expect(moodsOnDisk().byUser).to.deep.equal({ [ALICE]: 'noting' });
  });

  it('a file that does not match its schema is set aside with its bytes, named in the log, and only that chat starts empty', async () => {
    await say('.note in the group', BOB, GROUP);
    await t!.stop();
    const bad = JSON.stringify({ version: 1, items: [{ text: 7 }] });
    await mkdir(path.dirname(notesFile(ALICE)), { recursive: true });
    await writeFile(notesFile(ALICE), bad);
    await start();
    expect(await say('.notes', ALICE)).to.equal('none');
    expect(await say('.notes', BOB, GROUP)).to.equal('in the group');
    const aside = (await readdir(path.dirname(notesFile(ALICE)))).filter((n) => n.includes('.corrupt-'));
    expect(aside).to.have.length(1);
    expect(await readFile(path.join(path.dirname(notesFile(ALICE)), aside[0]), 'utf8')).to.equal(bad);
    expect(t!.app.dataProblems().setAside.map((s) => s.file)).to.deep.equal([notesFile(ALICE)]);
    expect(t!.logs().some((l) => l.level === 40 && l.file === notesFile(ALICE))).to.equal(true);
  });

  it('while a backup holds the writes, a save waits (nothing half-copied) and lands once released', async () => {
    const release = await domainFor(path.join(dir, 'data')).holdWrites();
    let answered: Promise<string>;
    try {
      answered = say('.note during the backup', ALICE);
      // The save reached the closed gate and waits there.
      await domainFor(path.join(dir, 'data')).gate.whenWaiting(1);
      expect(notesOnDisk(ALICE)).to.equal('"absent"');
    } finally {
      release();
    }
    expect(await answered!).to.equal('Noted.');
    expect(notesOnDisk(ALICE)).to.include('during the backup');
  });

  it('a change still pending is on disk after the stop', async () => {
    await opened!.chat(ALICE).doc(NOTES).update((d) => void d.items.push({ text: 'unsaved yet', by: ALICE }));
    await t!.stop();
    t = undefined;
    expect(notesOnDisk(ALICE)).to.include('unsaved yet');
  });

  it('log items past keepDays are dropped at start', async () => {
    await t!.stop();
    const said = path.join(dir, 'data', 'notes', 'said');
    await mkdir(said, { recursive: true });
    const old = { text: 'old-words-past-retention', by: ALICE, at: Date.now() - 31 * DAY_MS };
    const fresh = { text: 'fresh', by: ALICE, at: Date.now() - DAY_MS };
    await writeFile(path.join(said, `${ALICE}.jsonl`), `${JSON.stringify(old)}\n${JSON.stringify(fresh)}\n`);
    await start();
    // The sweep at start runs behind it.
    await t!.app.bot.whenStoresIdle();
    // A log of the earlier layout (one JSON line per item) is taken into the store database; what retention drops is
    // in no file of data/ (neither the database, its WAL, nor the copy of the earlier file kept aside).
    expect(await everyFileText(path.join(dir, 'data'), 'latin1')).not.to.include('old-words-past-retention');
    expect((await opened!.chat(ALICE).log(SAID).read()).map((s) => s.text)).to.deep.equal(['fresh']);
  });

  it('a store the plugin did not declare is refused, naming the fix', () => {
    expect(() => opened!.doc(UNDECLARED)).to.throw(/does not declare: list it in definePlugin\(\{ stores/);
  });

  it('a log item that does not match its schema is refused', async () => {
    let error: unknown;
    await opened!.chat(ALICE).log(SAID).append({ text: 1 } as never).catch((err: unknown) => (error = err));
    expect(String(error)).to.match(/does not match its schema/);
  });
});

describe('npm run doctor checks what a plugin declares in stores', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('a log line that does not match its item schema is named; good documents and logs are not', async () => {
    await mkdir(path.join(dir, 'notes', 'said'), { recursive: true });
    await mkdir(path.join(dir, 'notes', 'notes'), { recursive: true });
    await writeFile(path.join(dir, 'notes', 'notes', `${ALICE}.json`), JSON.stringify({ version: 1, items: [{ text: 'a', by: ALICE }] }));
    await writeFile(path.join(dir, 'notes', 'said', `${ALICE}.jsonl`), `${JSON.stringify({ text: 'ok', by: ALICE, at: 1 })}\n`);
    await writeFile(path.join(dir, 'notes', 'said', `${BOB}.jsonl`), `${JSON.stringify({ text: 'ok', by: BOB, at: 1 })}\n{"text":5}\n`);
    const report = await checkDataFiles(dir, [...(notesPlugin.dataFiles ?? [])]);
    expect(report.checked).to.equal(3);
    expect(report.bad.map((b) => b.file)).to.deep.equal([path.join('notes', 'said', `${BOB}.jsonl`)]);
    expect(report.bad[0].reason).to.match(/^line 2 does not match the notes said schema/);
  });
});

describe('npm run doctor and a plugin keeping a document beside its per-chat ones', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('checks reminders/timezones.json as the time zones, not as a chat of reminders/<chat>.json', async () => {
    await mkdir(path.join(dir, 'reminders'), { recursive: true });
    await writeFile(path.join(dir, 'reminders', 'timezones.json'), JSON.stringify({ version: 1, zones: { [ALICE]: 'Europe/Berlin' } }));
    await writeFile(path.join(dir, 'reminders', `${ALICE}.json`), JSON.stringify({ version: 1, chatId: ALICE, reminders: [] }));
    const report = await checkDataFiles(dir, [...(remind.dataFiles ?? [])]);
    expect(report.bad).to.deep.equal([]);
    expect(report.checked).to.equal(2);
  });
});

describe('a plugin whose .mydata section is named like the core\'s', () => {
  it('keeps both in the export: the core\'s history is never replaced', async () => {
    const NOTED = Store.chatDoc('noted', Type.Object({ items: Type.Array(Type.String()) }), () => ({ items: [] }));
    const history = definePlugin({
      name: 'history',
      description: 'A plugin named like the core store',
      stores: [NOTED],
      setup: (host) => ({ commands: [{ command: 'h', run: async (ctx) => void (await host.store.chat(ctx.chatId).doc(NOTED).save((d) => void d.items.push(ctx.args))) }] }),
    });
    const t = await startTestBot([history]);
    try {
      await t.transport.push({ text: '.h mine', senderId: ALICE, chatId: ALICE });
      const exported = await t.app.bot.privacy.exportFor([ALICE]);
      expect(exported['history (history)']).to.deep.equal({ noted: { [ALICE]: { items: ['mine'] } } });
      expect(exported.history, "the core's history section").to.be.an('object').and.not.have.property('noted');
    } finally {
      await t.stop();
    }
  });
});

describe('declaring stores', () => {
  const plugin = (stores: unknown[]) => () => definePlugin({ name: 'bad', description: 'x', stores: stores as never, setup: () => ({}) });

  it('refuses what Store did not make and two stores of one name, naming the fix', () => {
    expect(plugin([{ name: 'x' }])).to.throw(/made with Store\.chatDoc, Store\.doc or Store\.chatLog/);
    expect(plugin([NOTES, Store.doc('notes', Type.Object({}), () => ({}))])).to.throw(/two stores are named "notes"/);
  });

  it('refuses a name, path or retention that cannot work', () => {
    expect(() => Store.doc('Bad Name', Type.Object({}), () => ({}))).to.throw(/lowercase letters/);
    expect(() => Store.doc('x', Type.Object({}), () => ({}), { path: '../outside.json' })).to.throw(/relative to DATA_DIR/);
    expect(() => Store.chatLog('x', Type.Object({}), { keepDays: 7 })).to.throw(/needs a positive number of days and at\(item\)/);
  });

  it('names each store in the backup manifest with its version, and where it lives', () => {
    const files = definePlugin({ name: 'notes', description: 'x', stores: [NOTES, MOODS, SAID], setup: () => ({}) }).dataFiles;
    expect(files?.map((f) => [f.path, f.schema.name, f.schema.version])).to.deep.equal([
      ['notes/notes/<chat>.json', 'notes notes', 1],
      ['notes/moods.json', 'notes moods', 1],
      ['notes/said/<chat>.jsonl', 'notes said', 1],
    ]);
  });
});

describe('host.store: removing a document, and a version kept under another key', () => {
  const NAMES = Store.doc('names', Type.Record(Type.String(), Type.String()), () => ({}), { path: 'names.json', versionKey: '$version' });
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('remove() deletes the document once pending writes are done; it starts new, also after a restart', async () => {
    const stores = new PluginStores('notes', dir, [NOTES]);
    const doc = stores.chat(GROUP).doc(NOTES);
    await doc.update((d) => void d.items.push({ text: 'pending', by: ALICE }));
    await doc.remove();
    const stored = () => (storedDocuments(dir, 'notes', 'notes')[GROUP] ? 'there' : 'gone');
    expect(stored()).to.equal('gone');
    expect(await storeDatabaseText(dir)).not.to.include('pending');
    expect((await doc.get()).items).to.deep.equal([]);
    await stores.close();
    expect(stored(), 'nothing written back at the stop').to.equal('gone');
    expect((await new PluginStores('notes', dir, [NOTES]).chat(GROUP).doc(NOTES).get()).items).to.deep.equal([]);
  });

  it('versionKey: a plain map keeps its version under $version, and an entry named "version" comes back as stored', async () => {
    const stores = new PluginStores('names', dir, [NAMES]);
    await stores.doc(NAMES).save((d) => void Object.assign(d, { ana: 'a1', version: 'v1' }));
    expect(storedDocuments(dir, 'names', 'names')['']).to.deep.equal({ $version: 1, ana: 'a1', version: 'v1' });
    await stores.doc(NAMES).save((d) => void delete d.version);
    expect(storedDocuments(dir, 'names', 'names')['']).to.deep.equal({ $version: 1, ana: 'a1' });
    expect(await new PluginStores('names', dir, [NAMES]).doc(NAMES).get()).to.deep.equal({ ana: 'a1' });
  });
});
