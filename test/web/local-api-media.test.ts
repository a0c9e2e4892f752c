import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { startTestBot, type TestBot } from '../../app/testing/index.js';
import { MemoryTransport } from '../../core/adapters/memory/memory-transport.js';
import type { OutgoingMedia, OutgoingPoll, SentMessage } from '../../core/kernel/port/message.js';
import { parseScopes } from '../../core/services/automation/scopes.js';
import pingPlugin from '../../plugins/ping/index.js';
import { startWebServer, type WebServer } from '../../web/server.js';
import { ALICE, BOB, CAROL, FAST_SENDING, UNPACED_SENDS } from '../helpers/chat.js';

const OWNER_DIGITS = ALICE.split('@')[0]!;
/** Someone who never wrote to the bot. */
const DAVE = '6281100000004@s.whatsapp.net';
const digits = (id: string) => id.split('@')[0]!;

/** A real 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');

/** The memory transport, also keeping the bytes of each media file as the bot handed it over (the file is gone after). */
class BytesKeepingTransport extends MemoryTransport {
  readonly files: Array<{ media: OutgoingMedia; bytes: Buffer }> = [];
  override async sendMedia(chatId: string, media: OutgoingMedia): Promise<SentMessage> {
    this.files.push({ media, bytes: await readFile(media.path) });
    return super.sendMedia(chatId, media);
  }
}

describe('the local API sends media and polls (POST /api/v1/messages), on the same rules as a text', function () {
  this.timeout(60_000);
  let t: TestBot;
  let web: WebServer;
  let transport: BytesKeepingTransport;

  async function api(body: unknown, secret?: string): Promise<{ status: number; json: any }> {
    const response = await fetch(`http://127.0.0.1:${web.port}/api/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(secret ? { authorization: `Bearer ${secret}` } : {}) },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: response.status, json: await response.json() };
  }
  const token = (scopes: string) => t.app.automation.tokens.create(`t${Math.random().toString(36).slice(2, 8)}`, parseScopes(scopes)).token;
  const mediaTo = (chatId: string) => t.transport.actions.filter((a) => a.type === 'media' && a.chatId === chatId).map((a) => (a as { media: OutgoingMedia }).media);
  const pollsTo = (chatId: string) => t.transport.actions.filter((a) => a.type === 'poll' && a.chatId === chatId).map((a) => (a as { poll: OutgoingPoll }).poll);
  const textsTo = (chatId: string) => t.transport.actions.filter((a) => a.type === 'text' && a.chatId === chatId).map((a) => (a as { text: string }).text);

  beforeEach(async () => {
    transport = new BytesKeepingTransport();
    t = await startTestBot([pingPlugin], { transport, sendPacing: UNPACED_SENDS, config: { owners: [OWNER_DIGITS], access: { mode: 'everyone' }, sending: FAST_SENDING, port: 0 } });
    web = await startWebServer(t.app, () => t.transport);
    await t.send({ text: 'hello from Bob', chatId: BOB, senderId: BOB, senderName: 'Bob' });
    await t.send({ text: 'hello from Carol', chatId: CAROL, senderId: CAROL, senderName: 'Carol' });
  });
  afterEach(async () => {
    await web.close();
    await t.stop();
  });

  it('sends a picture with its caption, typed from its bytes, and keeps no copy of the file', async () => {
    const secret = token(`send:${digits(BOB)}`);
    const sent = await api({ to: BOB, media: { kind: 'image', data: PNG.toString('base64'), caption: 'The garden now' } }, secret);
    expect(sent.status, JSON.stringify(sent.json)).to.equal(200);
    expect(sent.json).to.deep.include({ status: 'sent', to: BOB });
    expect(sent.json.id).to.be.a('string').and.not.equal('');
    expect(mediaTo(BOB)).to.have.length(1);
    expect(mediaTo(BOB)[0]).to.include({ kind: 'image', mimetype: 'image/png', caption: 'The garden now' });
    expect(transport.files[0]!.bytes.equals(PNG)).to.equal(true);
    expect(existsSync(mediaTo(BOB)[0]!.path), 'the file written for the send is removed').to.equal(false);
  });

  it('sends a document under its name, typed as the caller says', async () => {
    const secret = token(`send:${digits(BOB)}`);
    const sent = await api({ to: digits(BOB), media: { kind: 'document', data: PDF.toString('base64'), fileName: 'invoice-42.pdf', mimetype: 'application/pdf' } }, secret);
    expect(sent.status, JSON.stringify(sent.json)).to.equal(200);
    expect(mediaTo(BOB)[0]).to.include({ kind: 'document', fileName: 'invoice-42.pdf', mimetype: 'application/pdf' });
    expect(transport.files[0]!.bytes.equals(PDF)).to.equal(true);
    // Without a name, one is made from its type.
    await api({ to: BOB, media: { kind: 'document', data: PDF.toString('base64'), mimetype: 'application/pdf' } }, secret);
    expect(mediaTo(BOB)[1]).to.include({ fileName: 'document.pdf' });
  });

  it('sends a poll with its question, options and whether several may be chosen', async () => {
    const secret = token(`send:${digits(BOB)}`);
    const sent = await api({ to: BOB, poll: { question: ' Dinner  tonight? ', options: ['Pizza', 'Curry', 'Salad'], multiple: true } }, secret);
    expect(sent.status, JSON.stringify(sent.json)).to.equal(200);
    expect(sent.json).to.deep.include({ status: 'sent', to: BOB });
    expect(pollsTo(BOB)).to.deep.equal([{ question: 'Dinner tonight?', options: ['Pizza', 'Curry', 'Salad'], multiple: true }]);
    await api({ to: BOB, poll: { question: 'One only?', options: ['yes', 'no'] } }, secret);
    expect(pollsTo(BOB)[1]).to.include({ multiple: false });
  });

  it('refuses media and polls outside the scopes (403), to a chat the bot may not write to first (403), and as the guard says', async () => {
    const secret = token(`send:${digits(BOB)},send:${digits(DAVE)}`);
    const elsewhere = await api({ to: CAROL, poll: { question: 'Q?', options: ['a', 'b'] } }, secret);
    expect([elsewhere.status, elsewhere.json.error.code]).to.deep.equal([403, 'API_SCOPE_REFUSED']);
    const stranger = await api({ to: DAVE, media: { kind: 'image', data: PNG.toString('base64') } }, secret);
    expect([stranger.status, stranger.json.error.code]).to.deep.equal([403, 'API_RECIPIENT_REFUSED']);
    expect(pollsTo(CAROL)).to.deep.equal([]);
    expect(mediaTo(DAVE)).to.deep.equal([]);

    t.app.bot.setConfig({ ...t.app.config, guard: { others: { here: 'deny', elsewhere: 'deny' } } });
    const denied = await api({ to: BOB, poll: { question: 'Q?', options: ['a', 'b'] } }, secret);
    expect([denied.status, denied.json.error.code]).to.deep.equal([403, 'API_GUARD_DENIED']);
    expect(pollsTo(BOB)).to.deep.equal([]);
  });

  it("holds a picture for the owner's 👍 (the question says what it is) and sends the same bytes once approved", async () => {
    const secret = token(`send:${digits(BOB)}`);
    t.app.bot.setConfig({ ...t.app.config, guard: { kinds: { message: 'hold' } } });
    const held = await api({ to: BOB, media: { kind: 'image', data: PNG.toString('base64'), caption: 'Look' } }, secret);
    expect(held.status, JSON.stringify(held.json)).to.equal(202);
    expect(textsTo(ALICE).at(-1)).to.include(`⏳ Waiting for your OK (${held.json.holdId})`).and.include('a picture (1 KB) captioned “Look”');
    expect(mediaTo(BOB)).to.deep.equal([]);
    await t.send({ text: `.yes ${held.json.holdId}`, chatId: ALICE, senderId: ALICE });
    expect(mediaTo(BOB)).to.have.length(1);
    expect(transport.files[0]!.bytes.equals(PNG)).to.equal(true);
  });

  it('answers bad media and polls with a 400 that names the problem, and sends nothing', async () => {
    const secret = token(`send:${digits(BOB)}`);
    const cases: Array<[unknown, number, string, RegExp]> = [
      [{ to: BOB }, 400, 'API_BAD_REQUEST', /"text", "media" or "poll"/],
      [{ to: BOB, text: 'hi', poll: { question: 'Q?', options: ['a', 'b'] } }, 400, 'API_BAD_REQUEST', /not "text" and "poll" together/],
      [{ to: BOB, media: { kind: 'sticker', data: PNG.toString('base64') } }, 400, 'API_BAD_MEDIA', /media.kind must be one of/],
      [{ to: BOB, media: { kind: 'image', data: 'not base64!' } }, 400, 'API_BAD_MEDIA', /not base64/],
      [{ to: BOB, media: { kind: 'image', data: `data:image/png;base64,${PNG.toString('base64')}` } }, 400, 'API_BAD_MEDIA', /not base64/],
      [{ to: BOB, media: { kind: 'image', data: PDF.toString('base64') } }, 400, 'API_BAD_MEDIA', /an image must be JPEG or PNG, and these bytes are PDF/],
      [{ to: BOB, media: { kind: 'video', data: PNG.toString('base64') } }, 400, 'API_BAD_MEDIA', /a video must be MP4/],
      [{ to: BOB, media: { kind: 'image', data: PNG.toString('base64'), mimetype: 'image/jpeg' } }, 400, 'API_BAD_MEDIA', /says image\/jpeg, but the bytes are image\/png/],
      [{ to: BOB, media: { kind: 'document', data: PDF.toString('base64'), fileName: '../../etc/passwd' } }, 400, 'API_BAD_MEDIA', /plain file name/],
      [{ to: BOB, media: { kind: 'image', data: PNG.toString('base64'), caption: 'x'.repeat(1025) } }, 400, 'API_BAD_MEDIA', /longer than 1024/],
      [{ to: BOB, poll: { question: 'Q?', options: ['only one'] } }, 400, 'API_BAD_POLL', /2 to 12 options/],
      [{ to: BOB, poll: { question: 'Q?', options: Array.from({ length: 13 }, (_, i) => `o${i}`) } }, 400, 'API_BAD_POLL', /2 to 12 options/],
      [{ to: BOB, poll: { question: 'Q?', options: ['Same', 'same'] } }, 400, 'API_BAD_POLL', /two options are the same/],
      [{ to: BOB, poll: { question: '', options: ['a', 'b'] } }, 400, 'API_BAD_POLL', /no question/],
      [{ to: BOB, poll: { question: 'Q?', options: ['a', 'b'], multiple: 'yes' } }, 400, 'API_BAD_POLL', /poll.multiple must be true/],
      [{ to: BOB, poll: { question: 'Q?', options: ['a', 'x'.repeat(101)] } }, 400, 'API_BAD_POLL', /longer than 100/],
    ];
    for (const [body, status, code, message] of cases) {
      const answer = await api(body, secret);
      expect([answer.status, answer.json.error?.code], JSON.stringify(body).slice(0, 120)).to.deep.equal([status, code]);
      expect(answer.json.error.message).to.match(message);
    }
    expect(mediaTo(BOB)).to.deep.equal([]);
    expect(pollsTo(BOB)).to.deep.equal([]);
  });

  it('takes a media body over the 64 KB a text body may have, and still refuses (413) a text body over 64 KB', async () => {
    const secret = token(`send:${digits(BOB)}`);
    const longText = await api({ to: BOB, text: 'x'.repeat(70 * 1024) }, secret);
    expect([longText.status, longText.json.error.code]).to.deep.equal([413, 'API_BODY_TOO_LARGE']);
    const longPoll = await api({ to: BOB, poll: { question: 'Q?', options: ['a', 'b'], padding: 'x'.repeat(70 * 1024) } }, secret);
    expect([longPoll.status, longPoll.json.error.code]).to.deep.equal([413, 'API_BODY_TOO_LARGE']);
    expect(textsTo(BOB).some((x) => x.startsWith('xxx'))).to.equal(false);
    const file = Buffer.alloc(200 * 1024, 7);
    const larger = await api({ to: BOB, media: { kind: 'document', fileName: 'big.bin', data: file.toString('base64') } }, secret);
    expect(larger.status, JSON.stringify(larger.json)).to.equal(200);
    expect(transport.files[0]!.bytes.equals(file)).to.equal(true);
  });
});
