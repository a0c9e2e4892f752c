import { expect } from 'chai';
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { proto, type WAMessage } from '@whiskeysockets/baileys';
import type { App } from '../../../app/app.js';
import documentsPlugin from '../../../plugins/documents/index.js';
import visionPlugin from '../../../plugins/vision/index.js';
import { FakeAnthropicGateway } from '../../fakes/anthropic-messages.js';
import { BOT_PHONE, FakeSocketFactory, sentText, waMessage, waText } from '../../fakes/baileys-socket.js';
import { startLinkedBot } from '../../helpers/linked-bot.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { makeImage } from '../vision/images.js';
import { docx } from './samples.js';

const ALICE = '6281200000001@s.whatsapp.net';
const DOCX_MIME = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/**
 * Quoted media comes back, over the real WhatsApp transport on a fake socket with real Baileys `proto` messages: a
 * reply quoting an earlier document (its `contextInfo.quotedMessage`) is answered from the document again — from the
 * copy the bot kept (found by the quoted id), even when WhatsApp no longer serves the file — and a reply quoting a
 * photo sends that photo to the vision path again.
 */
describe('quoted documents and photos over WhatsApp (fake Baileys socket, real app, real jail)', function () {
  this.timeout(90_000);
  let dir: string;
  let app: App | undefined;
  let sockets: FakeSocketFactory;
  let gateway: FakeAnthropicGateway;
  /** What the fake WhatsApp media server hands out, by file name; a name missing here fails to download. */
  let served: Map<string, Buffer>;
  let downloads: string[];

  beforeEach(async () => {
    dir = await tempDir('wabot-documents-wa-');
    gateway = await FakeAnthropicGateway.start('gw');
    served = new Map();
    downloads = [];
    await writeConfig(dir, { targetUserIds: [BOT_PHONE], access: { mode: 'everyone', allow: [], block: [] }, conversation: { debounceMs: 0, progressAfterSeconds: 0 }, sending: { perChatPerMinute: 60, globalPerMinute: 600, jitterMs: 0 } });
    ({ app, sockets } = await startLinkedBot({
      dir,
      env: { API_KEY: 'test-key-123456', BASE_URL: `${gateway.url}/v1`, MODEL: 'test-model' },
      plugins: [documentsPlugin, visionPlugin],
      transport: {
        download: async (message: WAMessage) => {
          const m = message.message;
          const name = m?.documentMessage?.fileName ?? m?.imageMessage?.caption ?? (m?.imageMessage ? 'photo' : '');
          downloads.push(name);
          const bytes = served.get(name);
          if (!bytes) throw new Error('media no longer on WhatsApp (410)');
          return bytes;
        },
      },
    }));
  });

  afterEach(async () => {
    await app?.stop();
    app = undefined;
    await gateway.close();
    await rm(dir, { recursive: true, force: true });
  });

  const nextText = () => sockets.last.nextSent().then(sentText);

  const documentMessage = (fileName: string, caption?: string): proto.IMessage => ({
    documentMessage: { fileName, mimetype: DOCX_MIME, fileLength: 1000, ...(caption ? { caption } : {}), mediaKey: Buffer.alloc(32, 1), directPath: '/v/t62/doc' },
  });

  it('a reply quoting an earlier document asks about it again, answered from the kept copy even when WhatsApp no longer has the file', async () => {
    served.set('minutes.docx', docx(['Minutes of the board', 'The budget for 2027 is 48,500 EUR.']));
    const sent = waMessage(documentMessage('minutes.docx'), { from: ALICE, id: '3EB0DOC000000001' });
    let answered = nextText();
    sockets.last.deliver([sent]);
    expect(await answered).to.match(/^gw: \[sent a document\]\n\[Content: the start of the document “minutes\.docx” \(Word document\) they sent, [^\n]*\]\n<<<CONTENT\nMinutes of the board/).and.to.match(/Summarise this document briefly/);
    expect(await readdir(path.join(dir, 'data', 'media', 'documents', 'files'))).to.have.length(1);

    // WhatsApp's copy is gone now; the quote carries only the document's description.
    served.clear();
    answered = nextText();
    sockets.last.deliver([waText("what's the budget?", { from: ALICE, quote: { id: '3EB0DOC000000001', participant: ALICE, message: documentMessage('minutes.docx') } })]);
    expect(await answered).to.equal("gw: [about the document they replied to] what's the budget?");
    const last = gateway.chats().at(-1)!;
    const messages = last.json.messages as Array<{ role: string; content: string }>;
    const content = messages.filter((m) => m.role === 'user').map((m) => m.content).join('\n');
    expect(content).to.contain('The budget for 2027 is 48,500 EUR.').and.to.contain('minutes.docx');
    expect(messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n')).to.not.contain('48,500');
    // The document's text is in this turn: the model is not told its content is missing.
    expect(JSON.stringify(last.json.messages)).not.to.contain('not available to you');
    expect(downloads).to.deep.equal(['minutes.docx']);
  });

  it('a reply quoting a document the bot never kept downloads it through the quoted message and reads it', async () => {
    served.set('old.docx', docx(['Packing: tent and rope']));
    const answered = nextText();
    sockets.last.deliver([waText('what do I pack?', { from: ALICE, quote: { id: '3EB0DOC0000000FF', participant: ALICE, message: documentMessage('old.docx') } })]);
    expect(await answered).to.equal('gw: [about the document they replied to] what do I pack?');
    expect(JSON.stringify(gateway.chats().at(-1)!.json.messages)).to.contain('Packing: tent and rope');
    expect(downloads).to.deep.equal(['old.docx']);
  });

  it('a reply quoting an earlier photo sends that photo to the vision path again, from the kept copy when WhatsApp no longer has it', async () => {
    const photo = await (await import('node:fs/promises')).readFile(await makeImage(dir, 'cat.jpg', 'color=c=orange:s=120x90'));
    served.set('photo', photo);
    const image: proto.IMessage = { imageMessage: { mimetype: 'image/jpeg', fileLength: photo.length, mediaKey: Buffer.alloc(32, 2), directPath: '/v/t62/img' } };
    let answered = nextText();
    sockets.last.deliver([waMessage(image, { from: ALICE, id: '3EB0IMG000000001' })]);
    await answered;
    expect(await readdir(path.join(dir, 'data', 'media', 'vision', 'files'))).to.have.length(1);
    served.clear();
    answered = nextText();
    sockets.last.deliver([waText('what colour is it?', { from: ALICE, quote: { id: '3EB0IMG000000001', participant: ALICE, message: image } })]);
    expect(await answered).to.equal('gw sees: what colour is it?');
    const requests = gateway.messages();
    expect(requests).to.have.length(2);
    const block = (requests[1]!.json.messages[0].content as Array<{ type: string; source?: { data: string } }>).find((b) => b.type === 'image');
    expect(Buffer.from(block!.source!.data, 'base64').equals(photo)).to.equal(true);
    expect(downloads).to.deep.equal(['photo']);
  });
});
