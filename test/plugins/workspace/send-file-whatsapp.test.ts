import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type { AnyMessageContent } from '@whiskeysockets/baileys';
import type { App } from '../../../app/app.js';
import type { WhatsAppTransport } from '../../../core/adapters/whatsapp/whatsapp-transport.js';
import { createLogger } from '../../../core/services/log/logger.js';
import workspacePlugin from '../../../plugins/workspace/index.js';
import { BOT_PHONE, FakeSocketFactory, waText } from '../../fakes/baileys-socket.js';
import { FakeGateway } from '../../fakes/openai-gateway.js';
import { UNPACED_ANSWERS } from '../../helpers/chat.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { startLinkedBot } from '../../helpers/linked-bot.js';
import { putFile, sendFileModel, USER } from './helpers.js';
import { storedDocuments } from '../../helpers/disk-text.js';

const GROUP = '120363000000000057@g.us';
const MEMBER = '62855500013@s.whatsapp.net';
const BOT_JID = `${BOT_PHONE}@s.whatsapp.net`;

/**
 * workspace_send_file over WhatsApp: the real transport on the fake Baileys socket, real `proto` messages in. What
 * reaches the socket is a WhatsApp document message to the chat that asked, with the file's name and bytes — and, as
 * the phone receives it (built by Baileys' own generateWAMessageContent, the file read and encrypted), a
 * documentMessage with its file name, mimetype, length and SHA-256; nothing at all above maxSendMb.
 */
describe('workspace_send_file over WhatsApp (fake Baileys socket, real proto messages)', function () {
  this.timeout(30_000);
  let dir: string;
  let app: App;
  let transport: WhatsAppTransport;
  let sockets: FakeSocketFactory;
  let gw: FakeGateway;
  /** Documents the socket was given, with the bytes of the file at the moment it was sent. */
  let documents: Array<{ jid: string; fileName?: string; mimetype?: string; bytes: string }>;

  beforeEach(async () => {
    gw = await FakeGateway.start('gw', sendFileModel);
    dir = await tempDir('wabot-sendfile-');
    await writeConfig(dir, {
      targetUserIds: [BOT_PHONE],
      access: { mode: 'everyone', allow: [], block: [] },
      groups: { policy: 'open' },
      conversation: { debounceMs: 0 },
      plugins: { workspace: { enabled: true, maxSendMb: 1, timeLimitSeconds: 30, cpuSeconds: 4, maxOutputBytes: 4096, quotaMb: 2 } },
    });
    const logger = createLogger({ level: 'warn', pretty: false, destination: new PassThrough() });
    // Answers unpaced: how a turn's messages are spaced is the outbox's test, not this one's (a group's are 4 s apart).
    ({ app, transport, sockets } = await startLinkedBot({ dir, env: { API_KEY: 'test-key-123456', BASE_URL: gw.url, MODEL: 'test-model' }, plugins: [workspacePlugin], logger, answerPacing: UNPACED_ANSWERS }));
    documents = [];
    const socket = sockets.last;
    const send = socket.sendMessage.bind(socket);
    socket.sendMessage = async (jid: string, content: AnyMessageContent, options?: never) => {
      if ('document' in content) {
        const doc = content as { document: { url: string }; fileName?: string; mimetype?: string };
        documents.push({ jid, fileName: doc.fileName, mimetype: doc.mimetype, bytes: await readFile(doc.document.url, 'utf8') });
      }
      return send(jid, content, options);
    };
  });

  afterEach(async () => {
    await app.stop();
    await gw.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A message in, handled to the end; the texts the bot sent for it. */
  async function say(text: string, o: { chat?: string; from?: string } = {}): Promise<string[]> {
    const before = sockets.last.sent.length;
    const inGroup = o.chat?.endsWith('@g.us');
    sockets.last.deliver([waText(inGroup ? `@${BOT_PHONE} ${text}` : text, { from: o.from ?? USER, ...(o.chat ? { chat: o.chat } : {}), ...(inGroup ? { mentions: [BOT_JID] } : {}) })]);
    await transport.idle();
    await app.bot.idle();
    return sockets.last.sent.slice(before).map((s) => (s.content as { text?: string }).text).filter((t): t is string => typeof t === 'string');
  }

  /** The owner's workspace files folder (made by /ws). */
  async function workspaceFiles(): Promise<string> {
    // The workspaces' index lives in the store database.
    for (const meta of Object.values(storedDocuments(path.join(dir, 'data'), 'workspace', 'index')) as Array<{ id: string; owner: string; ids: string[] }>) {
      if (meta.owner === USER || meta.ids.includes(USER)) return path.join(dir, 'data', 'workspaces', 'files', meta.id);
    }
    throw new Error('no workspace');
  }

  it('sends the file asked for as a document to the private chat, with its name and bytes', async () => {
    await say('/ws');
    await putFile(await workspaceFiles(), 'out/report.csv', 'a,b\n1,2\n');
    const reply = await say('send out/report.csv');
    expect(documents.map((d) => [d.jid, d.fileName, d.bytes]), reply.join('\n')).to.deep.equal([[USER, 'report.csv', 'a,b\n1,2\n']]);
    expect(reply.join('\n')).to.match(/tool: Sent out\/report.csv/);
  });

  it('refuses a symlink planted to /etc/passwd: no document reaches WhatsApp, nothing of the file in the reply', async () => {
    await say('/ws');
    await symlink('/etc/passwd', path.join(await workspaceFiles(), 'passwd.txt'));
    const reply = await say('send passwd.txt');
    expect(documents).to.deep.equal([]);
    expect(reply.join('\n')).to.match(/tool: Refused: passwd.txt is a link/).and.not.include('root:');
  });

  it("in a group, another member's ask sends nothing; the owner's sends the document to the group", async () => {
    await say('/ws', { chat: GROUP });
    await putFile(await workspaceFiles(), 'secret.txt', 'SECRET-77');
    const member = await say('send secret.txt', { chat: GROUP, from: MEMBER });
    expect(documents).to.deep.equal([]);
    expect(member.join('\n')).to.not.include('SECRET-77');
    await say('send secret.txt', { chat: GROUP });
    expect(documents.map((d) => [d.jid, d.fileName, d.bytes])).to.deep.equal([[GROUP, 'secret.txt', 'SECRET-77']]);
  });
  /** The documentMessages that reached the socket (as Baileys built them) since `before`. */
  const documentMessages = (before = 0) => sockets.last.sent.slice(before).flatMap((s) => (s.message?.documentMessage ? [{ jid: s.jid, doc: s.message.documentMessage }] : []));
  const sha256 = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('base64');

  it('the phone receives a documentMessage named report.csv, typed text/csv, with exactly the file\'s length and SHA-256', async () => {
    await say('/ws');
    const content = 'a,b\n1,2\n';
    await putFile(await workspaceFiles(), 'out/report.csv', content);
    const before = sockets.last.sent.length;
    const reply = await say('send out/report.csv');
    const docs = documentMessages(before);
    expect(docs, reply.join('\n')).to.have.length(1);
    expect(docs[0]!.jid).to.equal(USER);
    expect(docs[0]!.doc.fileName).to.equal('report.csv');
    expect(docs[0]!.doc.mimetype).to.equal('text/csv');
    expect(Number(docs[0]!.doc.fileLength)).to.equal(content.length);
    expect(Buffer.from(docs[0]!.doc.fileSha256!).toString('base64'), "the bytes Baileys read are the file's").to.equal(sha256(content));
    expect(sockets.last.uploads.map((u) => u.mediaType)).to.deep.equal(['document']);
  });

  it('a PNG the code made goes as a document too (the file itself, not a recompressed photo), typed image/png', async () => {
    await say('/ws');
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
    await putFile(await workspaceFiles(), 'out/chart.png', '');
    await writeFile(path.join(await workspaceFiles(), 'out', 'chart.png'), png);
    const before = sockets.last.sent.length;
    await say('send out/chart.png');
    expect(sockets.last.sent.slice(before).some((s) => s.message?.imageMessage), 'not an imageMessage').to.equal(false);
    const [sent] = documentMessages(before);
    expect(sent?.doc.fileName).to.equal('chart.png');
    expect(sent?.doc.mimetype).to.equal('image/png');
    expect(Buffer.from(sent!.doc.fileSha256!).toString('base64')).to.equal(sha256(png));
  });

  it('a file above maxSendMb (1 MB) is refused in words: no document and no upload reach WhatsApp', async () => {
    await say('/ws');
    await putFile(await workspaceFiles(), 'big.bin', 'x'.repeat(1024 * 1024 + 1));
    const reply = await say('send big.bin');
    expect(documents).to.deep.equal([]);
    expect(sockets.last.uploads).to.deep.equal([]);
    expect(reply.join('\n')).to.match(/tool: Refused: big\.bin is .* more than the 1\.0 MB/);
  });
});
