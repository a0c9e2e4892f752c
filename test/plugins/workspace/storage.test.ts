import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import mydata from '../../../plugins/mydata/index.js';
import workspacePlugin from '../../../plugins/workspace/index.js';
import { tempDir } from '../../helpers/checkout.js';
import { everyFileText, storedDocuments } from '../../helpers/disk-text.js';

/*
 * The workspace keeps its documents through host.store (plugins/workspace/schemas.ts), in the layout earlier versions
 * wrote: these tests start the bot over files written by hand in that layout.
 */

const ANA = '6281100000001@s.whatsapp.net';
const ANA_LID = '99887766554433@lid';
const BUDI = '6281100000002@s.whatsapp.net';
const ANA_WS = '0123456789abcdef';
const BUDI_WS = 'fedcba9876543210';

/** A data folder as the workspace plugin wrote it before host.store: Ana (phone + LID, site "ana") and Budi. */
async function todaysLayout(dir: string): Promise<string> {
  const ws = path.join(dir, 'data', 'workspaces');
  await mkdir(path.join(ws, 'index'), { recursive: true });
  await mkdir(path.join(ws, 'files', ANA_WS), { recursive: true });
  await mkdir(path.join(ws, 'files', BUDI_WS), { recursive: true });
  const json = (value: unknown) => JSON.stringify(value, null, 2) + '\n';
  await writeFile(path.join(ws, 'users.json'), json({ version: 1, owners: { [ANA]: ANA, [ANA_LID]: ANA, [BUDI]: BUDI } }));
  await writeFile(path.join(ws, 'usernames.json'), json({ $version: 1, ana: ANA_WS, budi: BUDI_WS }));
  await writeFile(path.join(ws, 'index', `${ANA_WS}.json`), json({ version: 1, id: ANA_WS, owner: ANA, ids: [ANA, ANA_LID], createdAt: 1_700_000_000_000, username: 'ana', open: {} }));
  await writeFile(path.join(ws, 'index', `${BUDI_WS}.json`), json({ version: 1, id: BUDI_WS, owner: BUDI, ids: [BUDI], createdAt: 1_700_000_000_000, username: 'budi', open: {} }));
  await writeFile(path.join(ws, 'files', ANA_WS, 'ana-notes.py'), 'print("ana")');
  await writeFile(path.join(ws, 'files', BUDI_WS, 'budi-notes.py'), 'print("budi")');
  return ws;
}

const readJson = async (file: string) => JSON.parse(await readFile(file, 'utf8'));
/** A workspace document as the store database keeps it on disk (`users`, `usernames`, `index` by workspace id). */
const stored = (dir: string, name: string, key = '') => storedDocuments(path.join(dir, 'data'), 'workspace', name)[key];

describe('workspace storage (host.store over the existing files)', function () {
  this.timeout(60_000);
  let bot: TestBot | undefined;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });

  it('loads workspaces written in the earlier layout, and keeps them in it (in the store database)', async () => {
    const dir = await tempDir();
    const ws = await todaysLayout(dir);
    bot = await startTestBot(workspacePlugin, { dir });
    // The LID alone finds Ana's workspace through users.json; her site name is still hers.
    expect((await bot.send({ text: '/ws files', senderId: ANA_LID }))[0]).to.include('ana-notes.py');
    expect((await bot.send({ text: '/ws name ana', senderId: BUDI }))[0]).to.include('taken');
    expect((await bot.send({ text: '/ws', senderId: ANA }))[0]).to.include('ana-notes.py');
    await bot.stop();
    bot = undefined;
    const index = stored(dir, 'index', ANA_WS) as { open: object };
    expect(Object.keys(index)[0]).to.equal('version');
    expect(index).to.include({ version: 1, id: ANA_WS, owner: ANA, username: 'ana' });
    expect(Object.keys(index.open)).to.deep.equal([ANA]);
    // A plain map of usernames keeps its version under $version (a user may take "version" as a name).
    expect(stored(dir, 'usernames')).to.deep.equal({ $version: 1, ana: ANA_WS, budi: BUDI_WS });
    expect(existsSync(path.join(ws, 'usernames.json')), 'the earlier file, kept aside').to.equal(false);
  });

  it('.mydata lists the workspace and its ids; .mydata delete removes the workspace, its files, site name and ids, and nobody else\'s', async () => {
    const dir = await tempDir();
    const ws = await todaysLayout(dir);
    bot = await startTestBot([workspacePlugin, mydata], { dir });
    const exported = await bot.app.bot.privacy.exportFor([ANA, ANA_LID]);
    const section = exported.workspace as { workspaces: Record<string, unknown>; 'site usernames': Record<string, string> };
    expect(Object.keys(section.workspaces)).to.deep.equal([ANA_WS]);
    expect(section.workspaces[ANA_WS]).to.deep.include({ id: ANA_WS, owner: ANA, ids: [ANA, ANA_LID], createdAt: 1_700_000_000_000, username: 'ana' });
    expect(section.workspaces[ANA_WS]).to.have.deep.property('files', [{ name: 'ana-notes.py', size: 12 }]);
    expect(section['site usernames']).to.deep.equal({ ana: ANA_WS });
    expect(JSON.stringify(exported)).to.not.include('budi').and.not.include(BUDI_WS);
    expect(exported['workspace ids']).to.deep.equal({ [ANA]: ANA, [ANA_LID]: ANA });
    // Asked under the phone id alone, the export still names the LID the workspace recorded as hers.
    expect((await bot.app.bot.privacy.exportFor([ANA]))['workspace ids']).to.deep.equal({ [ANA]: ANA, [ANA_LID]: ANA });

    expect((await bot.send({ text: '.mydata delete', senderId: ANA }))[0]).to.match(/confirm/);
    expect((await bot.send({ text: '.mydata delete confirm', senderId: ANA }))[0]).to.match(/^Done/);
    expect(stored(dir, 'index', ANA_WS), 'index document').to.equal(undefined);
    expect(existsSync(path.join(ws, 'files', ANA_WS)), 'files').to.equal(false);
    expect(stored(dir, 'usernames')).to.deep.equal({ $version: 1, budi: BUDI_WS });
    expect(stored(dir, 'users')).to.deep.equal({ version: 1, owners: { [BUDI]: BUDI } });

    // At once, without a restart: her next /ws starts a new workspace (no files, no site), the old one not written back.
    const fresh = (await bot.send({ text: '/ws', senderId: ANA_LID }))[0];
    expect(fresh).to.include('new workspace').and.include('No files yet').and.include('No site yet');
    // After a restart: Ana's old workspace is gone (her LID finds only the new, empty one), Budi's is whole, "ana" is free.
    bot = await bot.restart();
    expect(stored(dir, 'index', ANA_WS), 'index document written back').to.equal(undefined);
    expect((await bot.send({ text: '/ws', senderId: ANA_LID }))[0]).to.include('No files yet').and.include('No site yet');
    expect((await bot.send({ text: '/ws files', senderId: BUDI }))[0]).to.include('budi-notes.py');
    expect((await bot.send({ text: '/ws name ana', senderId: BUDI }))[0]).to.not.include('taken');
  });

  it('a delete asked under the phone id alone leaves no byte of her workspace, site name or ids in the data folder; Budi\'s stays whole', async () => {
    const dir = await tempDir();
    const ws = await todaysLayout(dir);
    // Her workspace is open in her LID chat, has a page in a subfolder, and an earlier copy of its index set aside.
    await writeFile(path.join(ws, 'index', `${ANA_WS}.json`), JSON.stringify({ version: 1, id: ANA_WS, owner: ANA, ids: [ANA, ANA_LID], createdAt: 1_700_000_000_000, username: 'ana', open: { [ANA_LID]: 1_700_000_000_000 } }));
    await mkdir(path.join(ws, 'files', ANA_WS, 'site'));
    await writeFile(path.join(ws, 'files', ANA_WS, 'site', 'index.html'), '<h1>ana-secret-page</h1>');
    await writeFile(path.join(ws, 'index', `${ANA_WS}.json.corrupt-1700000000000`), `{"version": 1, "id": "${ANA_WS}", "owner": "${ANA}"`);
    const budiBefore = await readJson(path.join(ws, 'index', `${BUDI_WS}.json`));
    bot = await startTestBot([workspacePlugin, mydata], { dir });
    const counts = await bot.app.bot.privacy.deleteFor([ANA]);
    expect(counts).to.include({ workspace: 1, 'workspace ids': 2 });
    await bot.stop();
    bot = undefined;

    const hers = [ANA_WS, ANA.split('@')[0], ANA_LID.split('@')[0], 'ana-notes', 'ana-secret-page', '"ana"'];
    const onDisk = await everyFileText(path.join(dir, 'data'), 'latin1');
    expect(onDisk).to.include('budi-notes');
    for (const trace of hers) expect(onDisk, trace).to.not.include(trace);
    expect(existsSync(path.join(ws, 'files', ANA_WS)), 'her files folder').to.equal(false);
    expect(await readFile(path.join(ws, 'files', BUDI_WS, 'budi-notes.py'), 'utf8')).to.equal('print("budi")');
    expect(stored(dir, 'index', BUDI_WS)).to.deep.equal(budiBefore);
    expect(stored(dir, 'usernames')).to.deep.equal({ $version: 1, budi: BUDI_WS });
    expect(stored(dir, 'users')).to.deep.equal({ version: 1, owners: { [BUDI]: BUDI } });
  });

  it('after a private chat moves from the LID to the phone id, the LID alone still finds the workspace', async () => {
    const dir = await tempDir();
    const ws = await todaysLayout(dir);
    bot = await startTestBot(workspacePlugin, { dir });
    await bot.app.bot.privacy.moveChat(ANA_LID, ANA);
    // users.json follows the move by declaration: the LID's link goes to the phone id (which has its own already).
    expect(stored(dir, 'users').owners).to.deep.equal({ [ANA]: ANA, [BUDI]: BUDI });
    expect((await bot.send({ text: '/ws files', senderId: ANA_LID }))[0]).to.include('ana-notes.py');
    bot = await bot.restart();
    expect((await bot.send({ text: '/ws files', senderId: ANA_LID }))[0]).to.include('ana-notes.py');
  });
  it('a corrupt file is set aside with its bytes kept and said in the log; the other workspaces and links still work', async () => {
    const dir = await tempDir();
    const ws = await todaysLayout(dir);
    const brokenIndex = '{"version": 1, "id": "fedcba98';
    const brokenUsers = '{"version": 1, "owners": ["not a map"]}';
    await writeFile(path.join(ws, 'index', `${BUDI_WS}.json`), brokenIndex);
    await writeFile(path.join(ws, 'users.json'), brokenUsers);
    bot = await startTestBot(workspacePlugin, { dir });
    const aside = async (folder: string, name: string) => (await readdir(folder)).filter((f) => f.startsWith(`${name}.corrupt-`));
    const [indexAside] = await aside(path.join(ws, 'index'), `${BUDI_WS}.json`);
    const [usersAside] = await aside(ws, 'users.json');
    expect(await readFile(path.join(ws, 'index', indexAside), 'utf8')).to.equal(brokenIndex);
    expect(await readFile(path.join(ws, usersAside), 'utf8')).to.equal(brokenUsers);
    const said = bot.logs().map((l) => String(l.msg));
    expect(said.some((m) => m.includes(`workspaces/index/${BUDI_WS}.json was set aside`))).to.equal(true);
    expect(said.some((m) => m.includes('workspaces/users.json was set aside'))).to.equal(true);
    // Without users.json, Ana's LID still finds her workspace through the ids it recorded; Budi's starts anew.
    expect((await bot.send({ text: '/ws files', senderId: ANA_LID }))[0]).to.include('ana-notes.py');
    expect((await bot.send({ text: '/ws', senderId: BUDI }))[0]).to.include('new workspace');
  });
});
