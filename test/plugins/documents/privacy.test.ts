import { expect } from 'chai';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import documentsPlugin from '../../../plugins/documents/index.js';
import mydataPlugin from '../../../plugins/mydata/index.js';
import { FakeAnthropicGateway } from '../../fakes/anthropic-messages.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { docx } from './samples.js';
import { storeDatabaseText } from '../../helpers/disk-text.js';

const ANN = '6281200000011@s.whatsapp.net';
const BEN = '6281200000012@s.whatsapp.net';
const GROUP = '120363000000000077@g.us';
const DOCX_MIME = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/**
 * What the bot keeps of a document follows its person: `.mydata` exports its text, `.mydata delete` and a delete
 * for everyone remove the text and the kept file (only the writer's own), and a chat moving to its phone id takes
 * its documents along.
 */
describe('documents: .mydata, delete for everyone and chat moves', function () {
  this.timeout(90_000);
  let t: TestBot | undefined;
  let gateway: FakeAnthropicGateway;

  beforeEach(async () => {
    gateway = await FakeAnthropicGateway.start('gw');
    t = await startTestBot([documentsPlugin, mydataPlugin], { env: { API_KEY: 'test-key-123456', BASE_URL: `${gateway.url}/v1`, MODEL: 'm' }, config: { plugins: { documents: { enabled: true }, mydata: { enabled: true } } } });
  });
  afterEach(async () => {
    await t?.stop();
    t = undefined;
    await gateway.close();
  });

  const files = () => readdir(path.join(t!.dir, 'data', 'media', 'documents', 'files')).catch(() => [] as string[]);
  const send = (senderId: string, id: string, fileName: string, text: string, chatId = GROUP) => {
    const bytes = docx([text]);
    return t!.transport.push({ id, chatId, isGroup: chatId.endsWith('@g.us'), senderId, mentions: [], text: '@bot what is it?', quoted: { id: 'bot-1', senderId: 'bot', text: 'hi', fromBot: true }, media: { kind: 'document', mimetype: DOCX_MIME, fileName, size: bytes.length, download: async () => bytes } });
  };
  /** The background work behind the replies is done (the archive written), and `check` then holds. */
  const waitFor = async (check: () => Promise<boolean>) => {
    await t!.app.bot.whenStoresIdle();
    expect(await check()).to.equal(true);
  };

  it('.mydata exports a person’s documents (name and text); .mydata delete removes their text and files, not another member’s', async () => {
    await send(ANN, 'DOC-ANN', 'ann-plan.docx', 'Ann secret plan: sail at dawn');
    await send(BEN, 'DOC-BEN', 'ben-list.docx', 'Ben list: apples');
    expect(await files()).to.have.length(2);

    // What `.mydata` sends is the privacy registry's export (the file itself is removed once sent).
    const exported = await t!.transport.push({ chatId: ANN, senderId: ANN, text: '.mydata' });
    expect(exported.map((a) => a.type)).to.deep.equal(['media']);
    const json = JSON.stringify(await t!.app.bot.privacy.exportFor([ANN]));
    expect(json).to.contain('Ann secret plan: sail at dawn').and.to.contain('ann-plan.docx');
    expect(json).to.not.contain('Ben list: apples');

    await t!.transport.push({ chatId: ANN, senderId: ANN, text: '.mydata delete' });
    await t!.transport.push({ chatId: ANN, senderId: ANN, text: '.mydata delete confirm' });
    await waitFor(async () => (await files()).length === 1);
    // What the chat keeps of documents lives in the store database (its file and WAL).
    const kept = await storeDatabaseText(path.join(t!.dir, 'data'));
    expect(kept).to.contain('Ben list: apples').and.not.to.contain('Ann secret plan');
  });

  it('a document deleted for everyone goes with its text and its file; another member cannot delete it', async () => {
    await send(ANN, 'DOC-ANN-2', 'ann.docx', 'Ann: the code is 4711');
    expect(await files()).to.have.length(1);
    await t!.transport.revoke(GROUP, 'DOC-ANN-2', { ids: [BEN] });
    expect(await files()).to.have.length(1);
    await t!.transport.revoke(GROUP, 'DOC-ANN-2', { ids: [ANN] });
    await waitFor(async () => (await files()).length === 0);
    const kept = await storeDatabaseText(path.join(t!.dir, 'data'));
    expect(kept).to.not.contain('4711');
  });

  it('a reply quoting a document deleted for everyone is told so, though the quote still carries it and WhatsApp would serve it', async () => {
    await send(ANN, 'DOC-ANN-3', 'ann.docx', 'Ann: the code is 4711', ANN);
    await t!.transport.revoke(ANN, 'DOC-ANN-3', { ids: [ANN] });
    const asks = gateway.chats().length;
    const bytes = docx(['Ann: the code is 4711']);
    const quoted = { id: 'DOC-ANN-3', senderId: ANN, text: '', fromBot: false, media: { kind: 'document' as const, mimetype: DOCX_MIME, fileName: 'ann.docx', download: async () => bytes } };
    const asked = await t!.transport.push({ chatId: ANN, senderId: ANN, text: 'what is the code?', quoted });
    expect(asked.map((a) => (a as { text?: string }).text)).to.deep.equal(['That document was deleted for everyone, so I no longer have it.']);
    expect(gateway.chats()).to.have.length(asks);
  });

  it('a reply quoting a document that is neither kept nor served by WhatsApp any more is told so plainly', async () => {
    const quoted = { id: 'DOC-OLD', senderId: ANN, text: '', fromBot: false, media: { kind: 'document' as const, mimetype: DOCX_MIME, fileName: 'old.docx', download: () => Promise.reject(new Error('410 Gone')) } };
    const asked = await t!.transport.push({ chatId: ANN, senderId: ANN, text: 'what was in it?', quoted });
    expect(asked.map((a) => (a as { text?: string }).text)).to.deep.equal(['I no longer have that document (I keep documents for 30 days), and WhatsApp no longer serves it. Please send it again.']);
  });

  it('a private chat moving from its LID to its phone id takes its documents along: a quote afterwards still finds the text', async () => {
    const LID = '99887766554433@lid';
    await send(LID, 'DOC-LID', 'notes.docx', 'Moved note: meet at the pier', LID);
    await t!.app.bot.moveChat(LID, ANN);
    const answer = await t!.transport.push({ chatId: ANN, senderId: ANN, text: 'where do we meet?', quoted: { id: 'DOC-LID', senderId: ANN, text: '', fromBot: false, media: { kind: 'document', mimetype: DOCX_MIME, fileName: 'notes.docx', download: async () => Promise.reject(new Error('gone')) } } });
    expect(answer.map((a) => (a as { text?: string }).text)).to.deep.equal(['gw: [about the document they replied to] where do we meet?']);
    expect(JSON.stringify(gateway.chats().at(-1)!.json.messages)).to.contain('Moved note: meet at the pier');
    expect(await files()).to.have.length(1);
  });
});
