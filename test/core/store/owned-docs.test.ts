import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { definePlugin, Store, Type } from '../../../core/index.js';
import { safeFileName } from '../../../core/index.js';
import { listFolder, MORE_FILES } from '../../../core/services/store/owned-folder.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { tempDir } from '../../helpers/checkout.js';
import { everyFileText, storedDocuments } from '../../helpers/disk-text.js';

/*
 * Documents that belong to a person as a whole (Store.chatDoc owner), a map keyed by chat id that follows a chat move
 * (byChat), and entries elsewhere that go with the document they name (Store.doc refersTo), through a small plugin as
 * a third party would write it: it declares, and wires no privacy of its own.
 */

const ALICE = '6281100000001@s.whatsapp.net';
const ALICE_LID = '99000000000001@lid';
const BOB = '6281100000002@s.whatsapp.net';
const CAROL = '6281100000003@s.whatsapp.net';
const CAROL_LID = '99000000000003@lid';
const DAVE = '6281100000004@s.whatsapp.net';

const Project = Type.Object({ id: Type.String(), ids: Type.Array(Type.String()), open: Type.Record(Type.String(), Type.Number()) });
// The folder is built from the key as it comes, without a shape check: the core's own guard is what is tested.
const PROJECTS = Store.chatDoc('by-id', Project, (id) => ({ id, ids: [], open: {} }), {
  path: 'projects/by-id',
  owner: { ids: (p) => p.ids, folder: (id) => `projects/files/${id}` },
  byChat: (p) => p.open,
});
const HANDLES = Store.doc('handles', Type.Record(Type.String(), Type.String()), () => ({}), {
  versionKey: '$version',
  refersTo: { decl: PROJECTS, map: (handles) => handles },
});
// A plain chat document, to see what its listener is told when a move takes it away.
const THEMES = Store.chatDoc('themes', Type.Object({ theme: Type.String() }), () => ({ theme: '' }));
const LINKS = Store.doc('links', Type.Object({ byId: Type.Record(Type.String(), Type.String()) }), () => ({ byId: {} }), { people: { byId: (d) => d.byId } });

/** A project's id: from its person's first id, so tests know it. */
const projectIdOf = (person: string) => createHash('sha256').update(person).digest('hex').slice(0, 16);

/** What the plugin's change listeners saw: [key, removed], and for the themes. */
const seen: Array<[string | undefined, boolean | undefined]> = [];
const themesSeen: Array<[string | undefined, boolean | undefined]> = [];

const projects = definePlugin({
  name: 'projects',
  description: 'One project per person: a handle, files, and the chats it is open in',
  stores: [PROJECTS, HANDLES, LINKS, THEMES],
  setup(host) {
    host.store.onChange(PROJECTS, (key, removed) => void seen.push([key, removed]));
    host.store.onChange(THEMES, (key, removed) => void themesSeen.push([key, removed]));
    const mine = async (ids: string[]) => {
      const links = await host.store.doc(LINKS).get();
      return ids.map((id) => links.byId[id]).find(Boolean);
    };
    const idsOf = (ctx: { senderId: string; message: { senderAltId?: string } }) => [ctx.senderId, ...(ctx.message.senderAltId ? [ctx.message.senderAltId] : [])];
    return {
      commands: [
        {
          // `.project <handle> <secret>`: makes the sender's project, opens it here, keeps the secret in its folder.
          command: 'project',
          run: async (ctx) => {
            const [handle, secret] = ctx.args.split(' ');
            const ids = idsOf(ctx);
            const id = projectIdOf(ids[0]);
            await host.store.chat(id).doc(PROJECTS).save((p) => {
              p.ids = [...new Set([...p.ids, ...ids])];
              p.open[ctx.chatId] = Date.now();
            });
            await host.store.doc(HANDLES).save((h) => void (h[handle] = id));
            await host.store.doc(LINKS).save((l) => void ids.forEach((i) => (l.byId[i] = id)));
            const folder = path.join(host.files.folder('projects'), 'files', id, 'src');
            await mkdir(folder, { recursive: true });
            await writeFile(path.join(folder, 'secret.txt'), secret);
            await ctx.reply(`project ${id}`);
          },
        },
        {
          command: 'theme',
          run: async (ctx) => {
            await host.store.chat(ctx.chatId).doc(THEMES).save((t) => void (t.theme = ctx.args));
            await ctx.reply('ok');
          },
        },
        {
          command: 'here',
          run: async (ctx) => {
            const id = await mine(idsOf(ctx));
            const open = id ? (await host.store.chat(id).doc(PROJECTS).get()).open : {};
            await ctx.reply(Object.hasOwn(open, ctx.chatId) ? 'open here' : 'not open here');
          },
        },
        {
          command: 'drop',
          run: async (ctx) => {
            const id = await mine(idsOf(ctx));
            if (id) await host.store.chat(id).doc(PROJECTS).remove();
            await ctx.reply('dropped');
          },
        },
      ],
    };
  },
});

const A = projectIdOf(ALICE_LID);
const B = projectIdOf(BOB);

describe('host.store: documents that are a person\'s as a whole (owner), maps that follow a chat (byChat), entries that go with them (refersTo)', function () {
  this.timeout(60_000);
  let bot: TestBot | undefined;
  let data: string;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });

  /** Alice (first seen under her LID, with her phone id) and Bob each make a project; Alice's has a set-aside copy. */
  async function twoProjects(): Promise<TestBot> {
    // A folder of the test's own: the files are looked at after the bot stopped.
    const t = await startTestBot(projects, { dir: await tempDir() });
    data = path.join(t.dir, 'data');
    expect(await t.send({ text: '.project alicehandle alice-secret-words', senderId: ALICE_LID, senderAltId: ALICE, chatId: ALICE_LID })).to.deep.equal([`project ${A}`]);
    expect(await t.send({ text: '.project bobhandle bob-secret-words', senderId: BOB })).to.deep.equal([`project ${B}`]);
    await mkdir(path.join(data, 'projects', 'by-id'), { recursive: true });
    await writeFile(path.join(data, 'projects', 'by-id', `${A}.json.corrupt-1700000000000`), `{"id": "${A}", "ids": ["${ALICE_LID}"`);
    return t;
  }

  it('.mydata lists the person\'s project whole with its files, its handle and the ids it names, even asked under one id; nothing of Bob', async () => {
    bot = await twoProjects();
    for (const asked of [[ALICE, ALICE_LID], [ALICE]]) {
      const section = (await bot.app.bot.privacy.exportFor(asked)).projects as { 'by-id': Record<string, { open: object }>; handles: unknown; links: unknown };
      const open = section['by-id'][A].open;
      expect(section['by-id']).to.deep.equal({ [A]: { id: A, ids: [ALICE_LID, ALICE], open, files: [{ name: 'src/secret.txt', size: 'alice-secret-words'.length }] } });
      expect(Object.keys(open)).to.deep.equal([ALICE_LID]);
      expect(section.handles).to.deep.equal({ alicehandle: A });
      expect(section.links).to.deep.equal({ [ALICE_LID]: A, [ALICE]: A });
      expect(JSON.stringify(section)).to.not.include(B).and.not.include('bob');
    }
    expect(((await bot.app.bot.privacy.exportFor([BOB])).projects as Record<string, unknown>).handles).to.deep.equal({ bobhandle: B });
  });

  it('a delete asked under the phone id alone leaves no byte of the project, its handle, its files or either id in the plugin\'s folder; Bob\'s stays as it was', async () => {
    bot = await twoProjects();
    // The documents live in the store database: the plugin's tables as stored there, and its folder.
    const stored = (name: string) => storedDocuments(data, 'projects', name);
    const bobsFiles = async () => [stored('by-id')[B], await readFile(path.join(data, 'projects', 'files', B, 'src', 'secret.txt'), 'latin1')];
    const bobBefore = await bobsFiles();
    const counts = await bot.app.bot.privacy.deleteFor([ALICE]);
    expect(counts.projects).to.equal(3); // her project, and her two links (the handle goes with the project)
    expect(await bot.send({ text: '.here', senderId: BOB })).to.deep.equal(['open here']);
    await bot.stop();
    // The plugin's folder (the core's own history of her LID chat is not asked for here: only her phone id is given).
    const onDisk = (await everyFileText(path.join(data, 'projects'), 'latin1')) + JSON.stringify(['by-id', 'handles', 'links', 'themes'].map(stored));
    expect(onDisk).to.include('bob-secret-words');
    for (const trace of [A, 'alicehandle', 'alice-secret-words', ALICE_LID.split('@')[0], ALICE.split('@')[0]]) expect(onDisk, trace).to.not.include(trace);
    expect(existsSync(path.join(data, 'projects', 'files', A)), 'her folder').to.equal(false);
    // Bob's project and files byte for byte; the maps now hold only his.
    expect(await bobsFiles()).to.deep.equal(bobBefore);
    expect(stored('handles')['']).to.deep.equal({ $version: 1, bobhandle: B });
    expect(stored('links')['']).to.deep.equal({ version: 1, byId: { [BOB]: B } });
    bot = await startTestBot(projects, { dir: bot.dir });
    expect(await bot.send({ text: '.here', senderId: BOB })).to.deep.equal(['open here']);
    expect(await bot.send({ text: '.here', senderId: ALICE })).to.deep.equal(['not open here']);
  });

  it('a chat moving from its LID to its phone id takes the project\'s open entry along; a project open under both keeps the new id\'s; another\'s is untouched', async () => {
    bot = await twoProjects();
    const C = projectIdOf(CAROL_LID);
    // Carol's project is open in her LID chat and, a moment later, in her phone chat.
    const clock = bot.useClock(['Date']);
    await bot.send({ text: '.project carolhandle carol-words', senderId: CAROL_LID, senderAltId: CAROL, chatId: CAROL_LID });
    await clock.tick(1000);
    await bot.send({ text: '.project carolhandle carol-words', senderId: CAROL_LID, senderAltId: CAROL, chatId: CAROL });
    const doc = async (id: string) => storedDocuments(data, 'projects', 'by-id')[id] as { open: Record<string, number>; ids: string[] };
    const carolPhoneAt = (await doc(C)).open[CAROL];
    const bobBefore = await doc(B);
    // A document whose key happens to be a chat id is still no chat's: it stays under its key (a file of the earlier
    // layout, taken in at the next start).
    const keyedLikeAChat = path.join(data, 'projects', 'by-id', `${ALICE_LID}.json`);
    bot = await bot.restart({}, () => writeFile(keyedLikeAChat, JSON.stringify({ version: 1, id: ALICE_LID, ids: [DAVE], open: {} })));
    expect(await bot.send({ text: '.here', senderId: ALICE, senderAltId: ALICE_LID, chatId: ALICE })).to.deep.equal(['not open here']);

    await bot.send({ text: '.theme dark', senderId: ALICE_LID, chatId: ALICE_LID });
    seen.length = 0;
    themesSeen.length = 0;
    await bot.app.bot.privacy.moveChat(ALICE_LID, ALICE);
    // A chat document moved away is gone under its old id; the one under the new id changed.
    expect(themesSeen).to.deep.equal([[ALICE_LID, true], [ALICE, undefined]]);
    await bot.app.bot.privacy.moveChat(CAROL_LID, CAROL);
    expect(Object.keys((await doc(A)).open)).to.deep.equal([ALICE]);
    expect((await doc(C)).open).to.deep.equal({ [CAROL]: carolPhoneAt });
    expect(await doc(B)).to.deep.equal(bobBefore);
    // The document stays under its key, is not taken for a chat, and keeps the ids it names (both are hers).
    expect((await doc(A)).ids).to.deep.equal([ALICE_LID, ALICE]);
    expect(Object.keys(storedDocuments(data, 'projects', 'by-id'))).to.not.include(ALICE);
    expect((await doc(ALICE_LID)).ids).to.deep.equal([DAVE]);
    expect(seen).to.deep.include([A, undefined]);
    expect(await bot.send({ text: '.here', senderId: ALICE, senderAltId: ALICE_LID, chatId: ALICE })).to.deep.equal(['open here']);
    expect(await bot.send({ text: '.here', senderId: ALICE_LID, chatId: ALICE_LID })).to.deep.equal(['not open here']);
    bot = await bot.restart();
    expect(await bot.send({ text: '.here', senderId: ALICE, chatId: ALICE })).to.deep.equal(['open here']);
  });

  it("the plugin's own remove() takes the folder, the set-aside copies and the handle along, and tells the listener it is gone", async () => {
    bot = await twoProjects();
    seen.length = 0;
    expect(await bot.send({ text: '.drop', senderId: ALICE_LID })).to.deep.equal(['dropped']);
    expect(seen).to.deep.equal([[A, true]]);
    expect(existsSync(path.join(data, 'projects', 'files', A))).to.equal(false);
    expect((await readdir(path.join(data, 'projects', 'by-id'))).filter((n) => n.startsWith(A))).to.deep.equal([]);
    expect(storedDocuments(data, 'projects', 'handles')['']).to.deep.equal({ $version: 1, bobhandle: B });
    expect(Object.keys(storedDocuments(data, 'projects', 'by-id'))).to.deep.equal([B]);
    expect(existsSync(path.join(data, 'projects', 'files', B, 'src', 'secret.txt'))).to.equal(true);
  });

  it('a key leading out of its folder is refused (nothing else removed, the delete says so); a folder that is a link is listed empty and only the link goes', async () => {
    bot = await twoProjects();
    // A document whose key (from its file name, taken in at the next start) would make the folder data/history: it
    // must never be removed.
    bot = await bot.restart({}, () => writeFile(path.join(data, 'projects', 'by-id', `${safeFileName('../../history')}.json`), JSON.stringify({ version: 1, id: 'x', ids: [CAROL], open: {} })));
    await mkdir(path.join(data, 'history'), { recursive: true });
    await writeFile(path.join(data, 'history', 'keep.txt'), 'precious');
    let failure: Error | undefined;
    await bot.app.bot.privacy.deleteFor([CAROL]).catch((err: Error) => (failure = err));
    expect(failure?.message).to.include('not a plain path under DATA_DIR');
    expect(await readFile(path.join(data, 'history', 'keep.txt'), 'utf8')).to.equal('precious');

    // Bob's folder replaced by a link to a folder outside: listed as nothing, and the target survives his delete.
    const outside = path.join(bot.dir, 'outside');
    await mkdir(outside);
    await writeFile(path.join(outside, 'other.txt'), 'not his');
    await rm(path.join(data, 'projects', 'files', B), { recursive: true });
    await symlink(outside, path.join(data, 'projects', 'files', B));
    const section = (await bot.app.bot.privacy.exportFor([BOB])).projects as Record<string, Record<string, { files: unknown }>>;
    expect(section['by-id'][B].files).to.deep.equal([]);
    await bot.app.bot.privacy.deleteFor([BOB]);
    expect(existsSync(path.join(data, 'projects', 'files', B))).to.equal(false);
    expect(await readFile(path.join(outside, 'other.txt'), 'utf8')).to.equal('not his');
  });

  it('lists at most the cap of files, saying more were left out', async () => {
    const dir = await tempDir();
    for (const name of ['a', 'b', 'c', 'd', 'e']) await writeFile(path.join(dir, `${name}.txt`), name);
    expect(await listFolder(dir, 3)).to.have.length(4).and.deep.include({ name: MORE_FILES, size: 0 });
    expect((await listFolder(dir, 5)).map((f) => f.name)).to.deep.equal(['a.txt', 'b.txt', 'c.txt', 'd.txt', 'e.txt']);
  });

  it('refuses declarations that cannot work, naming the fix', () => {
    const schema = Type.Object({ ids: Type.Array(Type.String()), items: Type.Array(Type.String()) });
    expect(() => Store.chatDoc('x', schema, () => ({ ids: [], items: [] }), { owner: { ids: (d) => d.ids }, people: { items: (d) => d.items, author: () => undefined } })).to.throw(TypeError, /people .* or owner/);
    const withFiles = Type.Object({ ids: Type.Array(Type.String()), files: Type.Array(Type.String()) });
    expect(() => Store.chatDoc('x', withFiles, () => ({ ids: [], files: [] }), { owner: { ids: (d) => d.ids, folder: (k) => `x/${k}` } })).to.throw(TypeError, /without a files key/);
    const plain = Store.chatDoc('plain', schema, () => ({ ids: [], items: [] }));
    expect(() => Store.doc('refs', Type.Record(Type.String(), Type.String()), () => ({}), { refersTo: { decl: plain, map: (d) => d } })).to.throw(TypeError, /chatDoc with owner/);
    expect(() => definePlugin({ name: 'half', description: 'refers to what it does not list', stores: [HANDLES], setup: () => ({}) })).to.throw(/refers to "by-id", which is not in stores/);
  });
});
