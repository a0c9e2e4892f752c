import { expect } from 'chai';
import { readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import sinon from 'sinon';
import { MemoryTransport } from '../../../core/adapters/memory/memory-transport.js';
import type { OutgoingMedia } from '../../../core/kernel/port/message.js';
import { FakeGateway } from '../../fakes/openai-gateway.js';
import type { TestBot } from '../../../app/testing/index.js';
import { putFile, sendFileModel, startWorkspaceApp, texts, USER, workspaceDir } from './helpers.js';

const BOT = '62899999999';
const GROUP = '120363000000000056@g.us';
const MEMBER = '62855500012@s.whatsapp.net';

describe('workspace_send_file: the model sends a workspace file as a document (fake gateway on 127.0.0.1, real files)', function () {
  this.timeout(30_000);
  let gw: FakeGateway;
  let t: TestBot;
  let sent: Array<{ chatId: string; media: OutgoingMedia; bytes: string }>;

  async function start(workspace: Record<string, unknown> = {}, chatId?: string): Promise<string> {
    gw = await FakeGateway.start('gw', sendFileModel);
    sent = [];
    // What reached the chat, read while it is sent (the copy is removed afterwards).
    const send = MemoryTransport.prototype.sendMedia;
    sinon.stub(MemoryTransport.prototype, 'sendMedia').callsFake(async function (this: MemoryTransport, chat: string, media: OutgoingMedia) {
      sent.push({ chatId: chat, media, bytes: await readFile(media.path, 'utf8') });
      return send.call(this, chat, media);
    });
    t = await startWorkspaceApp({ env: { BASE_URL: gw.url }, config: { targetUserIds: [BOT] }, workspace });
    await t.transport.push(chatId ? { chatId, senderId: USER, text: `@${BOT} /ws`, mentions: [`${BOT}@s.whatsapp.net`] } : { senderId: USER, text: '/ws' });
    return workspaceDir(t);
  }
  afterEach(async () => {
    sinon.restore();
    await t?.stop();
    await gw?.close();
  });

  it('sends the file the owner asks for, with its name and bytes, and leaves no copy behind', async () => {
    const dir = await start();
    await putFile(dir, 'out/report.csv', 'a,b\n1,2\n');
    const reply = texts(await t.transport.push({ senderId: USER, text: 'send out/report.csv' }));
    expect(sent, reply.join('\n')).to.have.length(1);
    expect(sent[0]).to.deep.include({ chatId: USER, bytes: 'a,b\n1,2\n' });
    expect(sent[0].media).to.deep.include({ kind: 'document', fileName: 'report.csv' });
    expect(reply.join('\n')).to.match(/tool: Sent out\/report.csv/);
    let gone = false;
    await readFile(sent[0].media.path).catch(() => (gone = true));
    expect(gone, 'the temporary copy is removed').to.equal(true);
  });

  it('refuses a path out of the workspace (..) and a symlink planted to /etc/passwd, sending nothing', async () => {
    const dir = await start();
    await symlink('/etc/passwd', path.join(dir, 'passwd.txt'));
    const traversal = texts(await t.transport.push({ senderId: USER, text: 'send ../../../../etc/passwd' }));
    const link = texts(await t.transport.push({ senderId: USER, text: 'send passwd.txt' }));
    expect(sent).to.deep.equal([]);
    expect(traversal.join('\n')).to.match(/tool: Refused/);
    expect(link.join('\n')).to.match(/tool: Refused: passwd.txt is a link/);
    expect([...traversal, ...link].join('\n')).to.not.include('root:');
  });

  it("refuses a file behind a linked folder out of the workspace, also into a sibling folder whose name starts with the workspace's", async () => {
    const dir = await start();
    // A sibling sharing the folder's name as a prefix (another workspace could be called so), and a folder elsewhere.
    const twin = `${dir}-twin`;
    await putFile(twin, 'secret.txt', 'TWIN-SECRET');
    await putFile(path.join(t.dir, 'elsewhere'), 'secret.txt', 'ELSEWHERE-SECRET');
    await symlink(twin, path.join(dir, 'twin'));
    await symlink(path.join(t.dir, 'elsewhere'), path.join(dir, 'out'));
    const twinReply = texts(await t.transport.push({ senderId: USER, text: 'send twin/secret.txt' }));
    const outReply = texts(await t.transport.push({ senderId: USER, text: 'send out/secret.txt' }));
    expect(sent).to.deep.equal([]);
    expect(twinReply.join('\n')).to.match(/tool: Refused: twin\/secret\.txt leads outside the workspace/);
    expect(outReply.join('\n')).to.match(/tool: Refused: out\/secret\.txt leads outside the workspace/);
    expect([...twinReply, ...outReply].join('\n')).to.not.include('SECRET');
  });

  it('refuses a file above the size cap (option maxSendMb)', async () => {
    const dir = await start({ maxSendMb: 1 });
    await putFile(dir, 'big.bin', 'x'.repeat(1024 * 1024 + 1));
    const reply = texts(await t.transport.push({ senderId: USER, text: 'send big.bin' }));
    expect(sent).to.deep.equal([]);
    expect(reply.join('\n')).to.match(/tool: Refused: big.bin is .* more than the 1.0 MB/);
  });

  it('in a group, another member asking gets no workspace tool and no file; the owner gets the file', async () => {
    const dir = await start({}, GROUP);
    await putFile(dir, 'secret.txt', 'SECRET-77');
    const toBot = (senderId: string, text: string) => ({ chatId: GROUP, senderId, text: `@${BOT} ${text}`, mentions: [`${BOT}@s.whatsapp.net`] });
    const member = texts(await t.transport.push(toBot(MEMBER, 'send secret.txt')));
    expect(sent).to.deep.equal([]);
    expect(member.join('\n')).to.not.include('SECRET-77');
    await t.transport.push(toBot(USER, 'send secret.txt'));
    expect(sent.map((s) => [s.chatId, s.bytes])).to.deep.equal([[GROUP, 'SECRET-77']]);
  });
});
