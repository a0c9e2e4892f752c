import { expect } from 'chai';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { IdentityLinks } from '../../../core/adapters/whatsapp/identity-links.js';
import { SeenMessages } from '../../../core/adapters/whatsapp/seen-messages.js';
import { DataHealth } from '../../../core/services/store/data-health.js';
import { registerDataHealth } from '../../../core/services/store/data-domain.js';
import { archiveAt } from '../../helpers/voice-archive.js';
import { AUDIO_BUDGET, AudioBudget } from '../../../plugins/voice/audio-budget.js';
import { PluginStores } from '../../../core/services/store/plugin-store.js';
import { WorkspaceStore } from '../../../plugins/workspace/store.js';
import { WORKSPACE_STORES } from '../../../plugins/workspace/schemas.js';
import { FakeGateway } from '../../fakes/openai-gateway.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { runConsoleChat } from '../../helpers/console-chat.js';
import { startTestBot } from '../../../app/testing/index.js';
import { MemoryStore } from '../../../core/services/store/memory.js';
import { closeDatabase } from '../../../core/services/store/database.js';
import { storedDocuments, storedHistory } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

/** The wrong shapes every data file is tried with: each must be set aside, never crash or wedge the bot. */
const WRONG_SHAPES: Record<string, string> = {
  'null': 'null',
  'a string': '"hello"',
  'a list': '[null, 7]',
  'an unexpected object': '{"unexpected": {"nested": true}}',
  'no JSON at all': '{"messages": [',
};

const USER = '10000000001@s.whatsapp.net';

async function asideFiles(folder: string, name: string): Promise<string[]> {
  return (await readdir(folder)).filter((f) => f.startsWith(`${name}.corrupt-`));
}

describe('data files: a schema and a version per file', function () {
  this.timeout(20000);
  let gw: FakeGateway;
  before(async () => {
    gw = await FakeGateway.start('primary');
  });
  after(() => gw.close());
  const env = () => ({ API_KEY: 'test-key-123456', BASE_URL: `${gw.url}/v1`, MODEL: 'm' });

  // The core stores: started under the real app, the chat answers and the bytes are kept aside.
  const coreFiles: Array<{ store: string; rel: string }> = [
    { store: 'history', rel: `history/${USER}.json` },
    { store: 'memory', rel: `memory/${USER}.json` },
    { store: 'usage', rel: 'usage.json' },
    { store: 'budgets', rel: 'budgets.json' },
  ];
  for (const { store, rel } of coreFiles) {
    for (const [shape, bytes] of Object.entries(WRONG_SHAPES)) {
      it(`${store}: ${shape} is set aside with its bytes, named in the log, and the chat still answers`, async () => {
        const dir = await tempDir();
        const file = path.join(dir, 'data', rel);
        await mkdir(path.dirname(file), { recursive: true });
        await writeFile(file, bytes);
        const t = await startTestBot('bundled', { dir, env: env() });
        try {
          const actions = await t.transport.push({ text: 'hi there', senderId: USER });
          expect(actions.filter((a) => a.type === 'text').map((a) => (a as { text: string }).text)).to.deep.equal(['primary: hi there']);
          const aside = await asideFiles(path.dirname(file), path.basename(file));
          expect(aside, 'moved aside').to.have.length(1);
          expect(await readFile(path.join(path.dirname(file), aside[0]), 'utf8')).to.equal(bytes);
          const warn = t.logs().find((l) => l.level === 40 && l.file === file);
          expect(warn, 'a warning naming the file').to.exist;
          expect(warn!.movedTo).to.equal(path.join(path.dirname(file), aside[0]));
          expect(t.app.dataProblems().setAside.map((p) => p.file)).to.deep.equal([file]);
          await t.stop();
          // The fresh document (memory is only written when a fact is stored) is of the current version; the counters
          // live in the store database now, and the history too, the chat's new turn with it.
          if (store === 'history') expect(storedHistory(path.join(dir, 'data'), USER).map((e) => e.text)).to.deep.equal(['hi there', 'primary: hi there']);
          if (store === 'usage' || store === 'budgets') expect(storedDocuments(path.join(dir, 'data'), 'core', store)['']?.version).to.equal(1);
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      });
    }
  }

  it('keeps the other chats: a bad history file empties only its own chat', async () => {
    const dir = await tempDir();
    const good = { version: 1, messages: [{ role: 'user', text: 'the password hint is blue', at: 1 }] };
    await mkdir(path.join(dir, 'data', 'history'), { recursive: true });
    await writeFile(path.join(dir, 'data', 'history', `${USER}.json`), 'null');
    await writeFile(path.join(dir, 'data', 'history', '10000000002@s.whatsapp.net.json'), JSON.stringify(good));
    const t = await startTestBot('bundled', { dir, env: env() });
    try {
      await t.transport.push({ text: 'hello', senderId: '10000000002@s.whatsapp.net' });
      const prompt = JSON.stringify(gw.chats().at(-1)!.json.messages);
      expect(prompt).to.include('the password hint is blue');
    } finally {
      await t.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('migrates an older memory file (facts as plain strings) instead of setting it aside', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'data', 'memory', `${USER}.json`);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify({ facts: ['Ana likes green tea', { text: 'Ana lives in Lisbon', at: 5 }] }));
    const t = await startTestBot('bundled', { dir, env: env() });
    try {
      await t.transport.push({ text: 'what do I like?', senderId: USER });
      const prompt = JSON.stringify(gw.chats().at(-1)!.json.messages);
      expect(prompt).to.include('Ana likes green tea').and.include('Ana lives in Lisbon');
      await t.stop();
      expect(await asideFiles(path.dirname(file), path.basename(file))).to.deep.equal([]);
      // Taken into the store database as the current version (the file kept aside under data/migrated/).
      expect(await new MemoryStore(path.join(dir, 'data')).facts(USER)).to.deep.equal(
        [
          { text: 'Ana likes green tea', at: 0 },
          { text: 'Ana lives in Lisbon', at: 5 },
        ],
      );
      closeDatabase(path.join(dir, 'data'));
      expect(t.logs().some((l) => l.file === file && /migrated from v0 to v1/.test(l.msg))).to.equal(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('sets aside a file written by a newer version instead of misreading it', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'data', 'history', `${USER}.json`);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify({ version: 9, messages: [] }));
    const t = await startTestBot('bundled', { dir, env: env() });
    try {
      await t.transport.push({ text: 'hi', senderId: USER });
      expect(await asideFiles(path.dirname(file), path.basename(file))).to.have.length(1);
      expect(t.logs().find((l) => l.file === file)!.reason).to.match(/newer version/);
    } finally {
      await t.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('npm run chat survives usage.json = null and budgets.json = null (and exits 0)', async function () {
    this.timeout(30000);
    const dir = await tempDir();
    try {
      await writeConfig(dir);
      await mkdir(path.join(dir, 'data'), { recursive: true });
      await writeFile(path.join(dir, 'data', 'usage.json'), 'null');
      await writeFile(path.join(dir, 'data', 'budgets.json'), 'null');
      const run = await runConsoleChat('hello\n', { cwd: dir, env: env() });
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.include('primary: hello');
      expect(run.stderr).to.include('usage.json').and.include('set aside');
      const usage = storedDocuments(path.join(dir, 'data'), 'core', 'usage')[''] as any;
      expect(usage.totals.main).to.be.greaterThan(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  describe('stores outside the core', () => {
    let health: DataHealth;
    let unregister: () => void;
    const folder = storeFolderPerTest({ closing: () => unregister() });
    beforeEach(() => {
      health = new DataHealth(folder.dir);
      unregister = registerDataHealth(health);
    });

    for (const [shape, bytes] of Object.entries(WRONG_SHAPES)) {
      it(`seen messages and identity links: ${shape} is set aside and they start empty`, async () => {
        const wa = path.join(folder.dir, 'whatsapp');
        await mkdir(wa, { recursive: true });
        await writeFile(path.join(wa, 'seen-messages.json'), bytes);
        await writeFile(path.join(wa, 'identity-links.json'), bytes === '{"unexpected": {"nested": true}}' ? '{"lidToPhone": [1]}' : bytes);
        const seen = new SeenMessages(folder.dir);
        expect(await seen.firstTime('c', 'm1')).to.equal(true);
        expect(await seen.firstTime('c', 'm1')).to.equal(false);
        await seen.flush();
        const links = await IdentityLinks.open(folder.dir);
        expect(links.add('628123@s.whatsapp.net', '98765@lid')).to.equal(true);
        await links.flush();
        expect(await asideFiles(wa, 'seen-messages.json')).to.have.length(1);
        expect(await asideFiles(wa, 'identity-links.json')).to.have.length(1);
        expect(health.setAside.map((p) => path.basename(p.file)).sort()).to.deep.equal(['identity-links.json', 'seen-messages.json']);
        expect(storedDocuments(folder.dir, 'whatsapp', 'identity-links')['']).to.deep.equal({ version: 1, lidToPhone: { '98765': '628123' } });
      });

      it(`workspace users, usernames and index: ${shape} is set aside and the plugin still loads`, async () => {
        const ws = path.join(folder.dir, 'workspaces');
        await mkdir(path.join(ws, 'index'), { recursive: true });
        await writeFile(path.join(ws, 'users.json'), bytes);
        await writeFile(path.join(ws, 'usernames.json'), bytes === '{"unexpected": {"nested": true}}' ? '{"ana": 7}' : bytes);
        await writeFile(path.join(ws, 'index', '0123456789abcdef.json'), bytes);
        const store = new WorkspaceStore(new PluginStores('workspace', folder.dir, WORKSPACE_STORES), path.join(folder.dir, 'workspaces'));
        await store.load();
        const owner = store.ownerOf('628123@s.whatsapp.net')!;
        const meta = await store.create(owner);
        expect(await store.claimUsername(meta, 'ana')).to.equal(true);
        await store.flush();
        expect(await asideFiles(ws, 'users.json')).to.have.length(1);
        expect(await asideFiles(ws, 'usernames.json')).to.have.length(1);
        expect(await asideFiles(path.join(ws, 'index'), '0123456789abcdef.json')).to.have.length(1);
        // Kept in the store database now (the files were the earlier layout).
        expect(storedDocuments(folder.dir, 'workspace', 'usernames')['']).to.deep.equal({ $version: 1, ana: meta.id });
      });

      it(`audio budget: ${shape} is set aside and the allowance starts fresh`, async () => {
        const file = path.join(folder.dir, 'audio_budget.json');
        await writeFile(file, bytes);
        const stores = new PluginStores('voice', folder.dir, [AUDIO_BUDGET]);
        const budget = new AudioBudget(stores.doc(AUDIO_BUDGET), Date.now);
        expect(await budget.used('u1')).to.equal(0);
        await budget.spend('u1', 30);
        await stores.flush();
        expect(await asideFiles(folder.dir, 'audio_budget.json')).to.have.length(1);
        expect(storedDocuments(folder.dir, 'voice', 'audio-budget')[''].used).to.deep.equal({ u1: 30 });
        expect(health.setAside.map((p) => p.file)).to.deep.equal([file]);
      });

      it(`voice archive segment: ${shape} is set aside and the chat's archive still works`, async () => {
        const chatDir = path.join(folder.dir, 'audio_archive', 'c1@g.us', 'notes');
        await mkdir(chatDir, { recursive: true });
        await writeFile(path.join(chatDir, '000000.json'), bytes);
        const archive = archiveAt(path.join(folder.dir, 'audio_archive'));
        await archive.add('c1@g.us', { messageId: 'v1', senderId: USER, at: 1, transcript: 'the meeting moved to friday' });
        const hits = await archive.search('c1@g.us', 'friday');
        expect(hits.map((h) => h.note.messageId)).to.deep.equal(['v1']);
        expect((await readdir(chatDir)).filter((f) => f.includes('.corrupt-'))).to.have.length(1);
        expect(health.setAside).to.have.length(1);
      });
    }
  });
});
