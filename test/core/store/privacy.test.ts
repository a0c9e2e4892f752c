import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { OutgoingMedia, SentMessage } from '../../../core/kernel/port/message.js';
import { MemoryTransport } from '../../../core/adapters/memory/memory-transport.js';
import { archiveAt } from '../../helpers/voice-archive.js';
import { PluginStores } from '../../../core/services/store/plugin-store.js';
import { WorkspaceStore } from '../../../plugins/workspace/store.js';
import { WORKSPACE_STORES } from '../../../plugins/workspace/schemas.js';
import { FakeGateway } from '../../fakes/openai-gateway.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { tempDir } from '../../helpers/checkout.js';
import { everyFileText, storedDocuments } from '../../helpers/disk-text.js';

const ANA = '10000000001@s.whatsapp.net';
const BUDI = '10000000002@s.whatsapp.net';
const GROUP = '120363000000000009@g.us';
const ADMIN = '10000000003@s.whatsapp.net';

/** A memory transport that keeps the content of documents the bot sends (the bot removes the file after sending). */
class KeepingTransport extends MemoryTransport {
  documents: string[] = [];
  override async sendMedia(chatId: string, media: OutgoingMedia): Promise<SentMessage> {
    this.documents.push(await readFile(media.path, 'utf8'));
    return super.sendMedia(chatId, media);
  }
}

describe('privacy: .mydata export and delete, messages deleted for everyone', function () {
  this.timeout(20000);
  let gw: FakeGateway;
  let t: TestBot;
  let dir: string;
  let transport: KeepingTransport;
  /** Ana's file in her workspace (its text is not distinctive: the delete is checked by the file itself). */
  let anaNotes: string;

  before(async () => {
    gw = await FakeGateway.start('primary');
  });
  after(() => gw.close());

  beforeEach(async () => {
    dir = await tempDir();
    const data = path.join(dir, 'data');
    // Stored before the bot starts, through the stores' own code: voice notes (with audio and context) and a workspace.
    const archive = archiveAt(path.join(data, 'audio_archive'));
    await archive.add(GROUP, { messageId: 'v-ana', senderId: ANA, at: 1, transcript: 'ana says the vault code is orange', audio: { bytes: Buffer.from('OGG-ANA'), ext: 'ogg' } });
    await archive.add(GROUP, {
      messageId: 'v-budi',
      senderId: BUDI,
      at: 2,
      transcript: 'budi talks about the harbour',
      before: [{ id: 'm-ana-ctx', senderId: ANA, at: 1, text: 'ana context line' }],
    });
    const workspaces = new WorkspaceStore(new PluginStores('workspace', data, WORKSPACE_STORES), path.join(data, 'workspaces'));
    await workspaces.load();
    const meta = await workspaces.create(workspaces.ownerOf(ANA)!);
    anaNotes = path.join(workspaces.dirOf(meta), 'ana-notes.txt');
    await writeFile(anaNotes, 'hello');
    await workspaces.flush();

    t = await startTestBot('bundled', { dir, env: { API_KEY: 'test-key-123456', BASE_URL: `${gw.url}/v1`, MODEL: 'm' }, config: {} });
    transport = new KeepingTransport(['10000000000@s.whatsapp.net']);
    await t.app.connect(transport);
    await transport.push({ senderId: ANA, text: 'ana private hello' });
    await transport.push({ senderId: BUDI, text: 'budi private hello' });
    await transport.push({ chatId: GROUP, senderId: ANA, text: 'ana in the group', id: 'm-ana-group' });
    await transport.push({ chatId: GROUP, senderId: BUDI, text: 'budi in the group' });
    await t.app.bot.memories.remember(ANA, 'ana likes jasmine tea', ANA);
    await t.app.bot.memories.remember(GROUP, 'ana leads the choir', ANA);
    await t.app.bot.memories.remember(GROUP, 'budi plays drums', BUDI);
  });
  afterEach(async () => {
    await t.app.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('.mydata sends one file with everything kept about the sender, and nothing about others', async () => {
    await transport.push({ senderId: ANA, text: '.mydata' });
    expect(transport.documents).to.have.length(1);
    const doc = transport.documents[0];
    for (const mine of ['ana private hello', 'primary: ana private hello', 'ana in the group', 'ana likes jasmine tea', 'ana leads the choir', 'ana says the vault code is orange', Buffer.from('OGG-ANA').toString('base64'), 'ana-notes.txt']) {
      expect(doc, mine).to.include(mine);
    }
    for (const theirs of ['budi private hello', 'budi in the group', 'budi plays drums', 'budi talks about the harbour']) expect(doc, theirs).to.not.include(theirs);
    // The export file does not stay on the server.
    expect((await readdir(path.join(dir, 'data', 'generated'))).filter((f) => f.startsWith('mydata-'))).to.deep.equal([]);
  });

  it('.mydata in a group sends nothing there', async () => {
    const replies = await transport.push({ chatId: GROUP, senderId: ANA, text: '@10000000000 .mydata', mentions: ['10000000000@s.whatsapp.net'] });
    expect(transport.documents).to.deep.equal([]);
    expect(replies.map((r) => (r as { text?: string }).text).join(' ')).to.match(/private chat/);
  });

  it('.mydata delete asks first, and deletes across every store only once confirmed', async () => {
    const early = await transport.push({ senderId: ANA, text: '.mydata delete confirm' });
    expect((early[0] as { text: string }).text).to.match(/no delete waiting/);
    expect(await everyFileText(path.join(dir, 'data'))).to.include('ana likes jasmine tea');
    expect(existsSync(anaNotes), 'her workspace file is there before the delete').to.equal(true);

    const ask = await transport.push({ senderId: ANA, text: '.mydata delete' });
    expect((ask[0] as { text: string }).text).to.match(/confirm within 5 minutes/);
    const done = await transport.push({ senderId: ANA, text: '.mydata delete confirm' });
    expect((done[0] as { text: string }).text).to.match(/^Done: I deleted everything/);

    await t.app.bot.histories.flush();
    const onDisk = await everyFileText(path.join(dir, 'data'));
    for (const gone of ['ana private hello', 'ana in the group', 'ana likes jasmine tea', 'ana leads the choir', 'ana says the vault code is orange', 'ana context line', 'ana-notes.txt']) {
      expect(onDisk, gone).to.not.include(gone);
    }
    for (const kept of ['budi private hello', 'budi in the group', 'budi plays drums', 'budi talks about the harbour']) expect(onDisk, kept).to.include(kept);
    expect(existsSync(anaNotes), 'the file in her workspace is gone').to.equal(false);
    const archiveFiles = await readdir(path.join(dir, 'data', 'audio_archive'), { recursive: true });
    expect(archiveFiles.filter((f) => String(f).endsWith('.ogg'))).to.deep.equal([]);
    const users = storedDocuments(path.join(dir, 'data'), 'workspace', 'users')[''];
    expect(JSON.stringify(users)).to.not.include('10000000001');

    // The search index forgot the note too (also after a restart), and the other person's note is still found.
    const archive = archiveAt(path.join(dir, 'data', 'audio_archive'));
    expect(await archive.search(GROUP, 'vault orange')).to.deep.equal([]);
    expect((await archive.search(GROUP, 'harbour')).map((h) => h.note.messageId)).to.deep.equal(['v-budi']);
  });

  it('a message deleted for everyone is removed from history, the archive, its context and the index', async () => {
    await transport.revoke(GROUP, 'm-ana-group');
    await transport.revoke(GROUP, 'v-ana');
    await transport.revoke(GROUP, 'm-ana-ctx');
    await t.app.bot.histories.flush();
    const onDisk = await everyFileText(path.join(dir, 'data'));
    expect(onDisk).to.not.include('ana in the group');
    expect(onDisk).to.not.include('ana says the vault code is orange');
    expect(onDisk).to.not.include('ana context line');
    expect(onDisk).to.include('budi in the group').and.include('budi talks about the harbour').and.include('ana private hello');
    // A fresh archive over the same folder (a restart) finds nothing of the revoked note.
    const archive = archiveAt(path.join(dir, 'data', 'audio_archive'));
    expect(await archive.search(GROUP, 'vault orange')).to.deep.equal([]);
    expect((await archive.search(GROUP, 'harbour')).map((h) => h.note.messageId)).to.deep.equal(['v-budi']);
    expect(t.logs().some((l) => l.messageId === 'v-ana' && /deleted for everyone was removed/.test(l.msg))).to.equal(true);
  });

  it("a message deleted for everyone takes the bot's answer to it along (it may repeat its words); another member's delete takes neither", async () => {
    const asked = await transport.push({ chatId: GROUP, senderId: ANA, text: '@10000000000 ana asks about the secret cove', mentions: ['10000000000@s.whatsapp.net'], id: 'm-ana-ask' });
    expect(asked.map((r) => (r as { text?: string }).text).join(' ')).to.include('primary:').and.include('secret cove');
    await transport.revoke(GROUP, 'm-ana-ask', { ids: [BUDI] });
    await t.app.bot.histories.flush();
    expect((await t.app.bot.histories.recent(GROUP)).filter((e) => e.text.includes('secret cove'))).to.have.length(2);

    await transport.revoke(GROUP, 'm-ana-ask', { ids: [ANA] });
    await t.app.bot.histories.flush();
    expect(await everyFileText(path.join(dir, 'data'), 'latin1')).to.not.include('secret cove');
    expect(await everyFileText(path.join(dir, 'data'))).to.include('budi in the group');
  });

  it("a delete for everyone from another member removes nothing of the voice archive; the sender's own and a group admin's do", async () => {
    for (const id of ['m-ana-group', 'v-ana', 'm-ana-ctx']) await transport.revoke(GROUP, id, { ids: [BUDI] });
    await t.app.bot.histories.flush();
    let onDisk = await everyFileText(path.join(dir, 'data'));
    for (const kept of ['ana in the group', 'ana says the vault code is orange', 'ana context line']) expect(onDisk, kept).to.include(kept);
    expect((await archiveAt(path.join(dir, 'data', 'audio_archive')).search(GROUP, 'vault orange')).map((h) => h.note.messageId)).to.deep.equal(['v-ana']);

    transport.groupAdmins.set(GROUP, [ADMIN]);
    await transport.revoke(GROUP, 'v-ana', { ids: [ADMIN] });
    await transport.revoke(GROUP, 'm-ana-ctx', { ids: [ANA] });
    await transport.revoke(GROUP, 'm-ana-group', { ids: ['10000000001@lid', ANA] });
    await t.app.bot.histories.flush();
    onDisk = await everyFileText(path.join(dir, 'data'));
    for (const gone of ['ana in the group', 'ana says the vault code is orange', 'ana context line']) expect(onDisk, gone).to.not.include(gone);
    expect(await archiveAt(path.join(dir, 'data', 'audio_archive')).search(GROUP, 'vault orange')).to.deep.equal([]);
  });

  it("an edit by the message's sender replaces its text in history and in a voice note's context; anyone else's changes nothing", async () => {
    await transport.edit(GROUP, 'm-ana-ctx', 'budi rewrote this line', { ids: [BUDI] });
    await transport.edit(GROUP, 'm-ana-group', 'budi rewrote this line', { ids: [BUDI] });
    await t.app.bot.histories.flush();
    let onDisk = await everyFileText(path.join(dir, 'data'));
    expect(onDisk).to.include('ana context line').and.include('ana in the group').and.not.include('budi rewrote');

    await transport.edit(GROUP, 'm-ana-ctx', 'ana fixed her context line', { ids: [ANA] });
    await transport.edit(GROUP, 'm-ana-group', 'ana fixed her group line', { ids: [ANA] });
    await t.app.bot.histories.flush();
    onDisk = await everyFileText(path.join(dir, 'data'));
    expect(onDisk).to.not.include('ana context line').and.not.include('ana in the group');
    const archive = archiveAt(path.join(dir, 'data', 'audio_archive'));
    const [budiNote] = await archive.search(GROUP, 'harbour');
    expect((await archive.context(GROUP, budiNote.note.seq)).before.map((m) => m.text)).to.deep.equal(['ana fixed her context line']);
    expect((await t.app.bot.histories.recent(GROUP)).map((e) => e.text)).to.include('ana fixed her group line');
  });
});
