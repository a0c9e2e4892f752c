import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { proto } from '@whiskeysockets/baileys';
import type { InboundReaction } from '../../../../core/kernel/port/transport.js';
import type { PollVote } from '../../../../core/kernel/port/message.js';
import { waPollVote } from '../../../../app/testing/fake-baileys-socket.js';
import { linkOnWire, type WireLink } from '../../../helpers/wire-transport.js';

const textOf = (m: proto.IMessage) => m.conversation ?? m.extendedTextMessage?.text ?? undefined;

/**
 * Issue 50's wire suite on the project's own WhatsApp Web server (test/fakes/whatsapp-wire-server.ts): the real
 * transport and Baileys socket, linked by QR, and people whose phones are Baileys' own Signal code on the server — what
 * they send is encrypted as a phone encrypts it, and what the bot sends is decrypted back by them.
 */
describe('WhatsApp on the wire, round 4 (real socket, people with their own Signal sessions)', function () {
  this.timeout(60_000);
  /**
   * One linked transport for the tests that need a linked account, not a fresh link (linking is what costs: each test
   * has people of its own, and reads only what arrived and was logged since it began). The pairing-code tests link
   * one of their own.
   */
  let linked: WireLink;
  /** What the linked transport handed on as events other than messages, since the test began. */
  let events: { edits: unknown[]; revokes: unknown[]; reactions: InboundReaction[]; votes: PollVote[] };
  /** Where this test's messages and log lines begin in the linked transport's. */
  let firstReceived = 0;
  let firstLog = 0;
  /** Messages the linked transport handed on since the test began. */
  const received = () => linked.received.slice(firstReceived);
  /** Log messages of the linked transport since the test began. */
  const messages = () => linked.messages().slice(firstLog);
  let l: WireLink | undefined;

  before(async () => {
    linked = await linkOnWire({
      events: {
        onEdit: (chat, id, text) => void events.edits.push([chat, id, text]),
        onRevoke: (chat, id) => void events.revokes.push([chat, id]),
        onReaction: (r) => void events.reactions.push(r),
        onPollVote: (v) => void events.votes.push(v),
      },
    });
  });
  after(() => linked?.stop());
  beforeEach(() => {
    events = { edits: [], revokes: [], reactions: [], votes: [] };
    firstReceived = linked.received.length;
    firstLog = linked.logs().length;
  });
  afterEach(async () => {
    await l?.stop();
    l = undefined;
  });

  it("encrypted inbound from a contact's device is read, and the answer is encrypted so only their device reads it", async () => {
    const l = linked;
    const ann = l.server.person('15551230001', '155512300010001');
    const id = await l.server.deliver(ann, { conversation: 'hello, encrypted' }, { pushName: 'Ann' });
    await l.until(() => received().length === 1, 'the message');
    expect(received()[0]).to.include({ id, text: 'hello, encrypted', isGroup: false, senderName: 'Ann' });
    // A second line goes on the session the first one started (a plain Signal message, no pre-key).
    await l.server.deliver(ann, { conversation: 'and a second line' });
    await l.until(() => received().length === 2, 'the second message');
    expect(received()[1].text).to.equal('and a second line');
    expect(l.transport.decryptionFailures()).to.equal(0);
    await l.transport.sendText(received()[0].chatId, 'hello back, privately');
    const copy = await l.server.waitForSent((s) => textOf(s.message) === 'hello back, privately' && s.device.split('@')[0].split(':')[0] !== l!.server.user && s.device.split('@')[0].split(':')[0] !== l!.server.lidUser);
    expect([ann.phoneJid, ann.lidJid]).to.include(copy.device.replace(':0@', '@'));
  });

  it('an edit, a delete for everyone, a reaction and a poll vote arrive over the wire as what they are, not as messages', async () => {
    const l = linked;
    const { edits, revokes, reactions, votes } = events;
    const server = l.server;
    const ann = server.person('15551230002', '155512300020001');
    const first = await server.deliver(ann, { conversation: 'meet at 5' }, { pushName: 'Ann' });
    await l.until(() => received().length === 1, 'the first message');
    const chat = received()[0].chatId;
    const Type = proto.Message.ProtocolMessage.Type;
    await server.deliver(ann, { protocolMessage: { type: Type.MESSAGE_EDIT, key: { remoteJid: server.botJid, id: first, fromMe: false }, editedMessage: { conversation: 'meet at 6' } } });
    await l.until(() => edits.length === 1, 'the edit');
    expect(edits).to.deep.equal([[chat, first, 'meet at 6']]);
    await server.deliver(ann, { protocolMessage: { type: Type.REVOKE, key: { remoteJid: server.botJid, id: first, fromMe: false } } });
    await l.until(() => revokes.length === 1, 'the delete');
    expect(revokes).to.deep.equal([[chat, first]]);

    const sent = await l.transport.sendText(chat, 'noted');
    await server.deliver(ann, { reactionMessage: { key: { remoteJid: server.botJid, fromMe: true, id: sent.id }, text: '👍', senderTimestampMs: Date.now() } });
    await l.until(() => reactions.length === 1, 'the reaction');
    expect(reactions[0]).to.include({ chatId: chat, messageId: sent.id, emoji: '👍' });

    const poll = await l.transport.sendPoll(chat, { question: 'Which day?', options: ['Monday', 'Tuesday'], multiple: false });
    const created = await server.waitForSent((s) => s.id === poll.id && s.device.startsWith(ann.user) || (s.id === poll.id && !!ann.lid && s.device.startsWith(ann.lid)));
    const secret = created.message.messageContextInfo!.messageSecret!;
    // The phone derives the vote's key from the poll creator's LID and its own phone number (Baileys issue #2342).
    const vote = waPollVote({ id: poll.id, secret, chat: server.botJid }, ['Tuesday'], { creatorJid: `${server.lidUser}@lid`, voterJid: ann.phoneJid }).message!;
    await server.deliver(ann, vote);
    await l.until(() => votes.length === 1, 'the vote');
    expect(votes[0]).to.include({ pollId: poll.id, question: 'Which day?' });
    expect(votes[0].selected).to.deep.equal(['Tuesday']);
    // None of them was handed on as a message to answer.
    expect(received()).to.have.length(1);
  });

  it('a group with LID-addressed participants: a mention of the bot by its LID arrives as one, and the reply reaches every member by sender key', async () => {
    const l = linked;
    const server = l.server;
    const ann = server.person('15551230003', '155512300030001');
    const bob = server.person('15551230004', '155512300040001');
    const group = server.group('120363000000000077@g.us', 'Book club', [ann, bob]).id;
    const id = await server.deliver(ann, { extendedTextMessage: { text: `@${server.lidUser} which book next?`, contextInfo: { mentionedJid: [server.bot.lid] } } }, { group, pushName: 'Ann' });
    await l.until(() => received().length === 1, 'the group message');
    const m = received()[0];
    // The member is named by phone number where the group tells it (participant_pn), their LID beside it.
    expect(m).to.include({ id, chatId: group, isGroup: true, senderId: ann.phoneJid, senderAltId: ann.lidJid });
    expect(m.mentions).to.include(server.bot.lid);
    // Bob speaks too: the bot reads a second sender's key in the same group.
    await server.deliver(bob, { conversation: 'the whale one' }, { group });
    await l.until(() => received().length === 2, "Bob's message");
    expect(received()[1]).to.include({ chatId: group, senderId: bob.phoneJid, text: 'the whale one' });
    const sent = await l.transport.sendText(group, 'Moby-Dick it is');
    const copies = await server.waitFor(() => {
      // The account's own phone gets a copy too; the members' copies are what counts here.
      const got = server.sent.filter((s) => s.id === sent.id && textOf(s.message) === 'Moby-Dick it is' && s.device !== server.bot.lid);
      return got.length === 2 ? got : undefined;
    }, 'the reply at both members');
    expect(copies.map((c) => c.chat)).to.deep.equal([group, group]);
    expect(copies.map((c) => c.device).sort()).to.deep.equal([ann.lidJid, bob.lidJid].sort());
  });

  it('a 463 on one contact is a failure for that contact only: counted, no restriction, and the next contact still gets messages', async () => {
    // On a link already busy with other chats the 463 ack often arrives while Baileys' event buffer is on, and comes
    // folded into the upsert of the bot's own message rather than as an update (send-failure-folded.test.ts).
    const l = linked;
    const server = l.server;
    const ann = server.person('15551230005', '155512300050001');
    const bob = server.person('15551230006', '155512300060001');
    server.refuse463(bob);
    await l.transport.sendText(bob.phoneJid, 'hello Bob');
    await l.until(() => l!.transport.sendFailures()['463'] === 1, 'the 463');
    expect(linked.logs().slice(firstLog).find((x) => String(x.msg).startsWith('WhatsApp did not deliver a sent message'))).to.include({ code: '463' });
    const toAnn = await l.transport.sendText(ann.phoneJid, 'hello Ann');
    await server.waitForSent((s) => s.id === toAnn.id && textOf(s.message) === 'hello Ann' && [ann.user, ann.lid].includes(s.device.split('@')[0].split(':')[0]));
    expect(l.transport.isRestricted()).to.equal(false);
    expect(l.transport.sendFailures()).to.deep.equal({ '463': 1 });
  });

  it('a pairing code whose linking socket ends before it is typed: a fresh QR on a clean registration, no login as that phone, no logout', async () => {
    l = await linkOnWire({ unlinked: true });
    const server = l.server;
    const code = await l.transport.requestPairingCode(server.user);
    await server.waitFor(() => server.pairingRequests[0], 'the pairing request');
    expect(server.pairingRequests).to.deep.equal([server.botJid]);
    expect(l.transport.session()).to.include({ status: 'qr', pairingCode: code });
    // Baileys wrote the phone into the unlinked session with the request; the socket ends before the code is typed.
    server.drop();
    await l.until(() => l!.qrs.length === 2, 'a fresh QR');
    expect(server.connections.map((c) => c.kind)).to.deep.equal(['registration', 'registration']);
    expect(l.transport.session().pairingCode).to.equal(undefined);
    expect(l.transport.session().status).to.equal('qr');
    expect(l.messages().some((m) => m.includes(`pairing code ${code} was not typed in time`))).to.equal(true);
    expect(l.messages().some((m) => m.includes('logged this device out'))).to.equal(false);
    // The fresh QR links as ever.
    server.scan(l.qrs[1]);
    await server.waitForConnections(3);
    await l.until(() => l!.transport.session().status === 'linked', 'the link');
    expect(server.connections[2]).to.deep.include({ kind: 'login', user: server.user });
  });

  it('outbound image, voice note, document and sticker are uploaded encrypted to the media host and open on the phone as the bytes sent', async () => {
    const l = linked;
    const server = l.server;
    const ann = server.person('15551230007', '155512300070001');
    const uploadsBefore = server.mediaUploads.size;
    // A 1×1 PNG, an Ogg page header with bytes after it, a PDF, a RIFF/WEBP header: only their bytes matter here.
    const files = {
      image: Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64'),
      voice: Buffer.concat([Buffer.from('OggS'), randomBytes(3000)]),
      document: Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(5000)]),
      sticker: Buffer.concat([Buffer.from('RIFF'), Buffer.from([0, 0, 0, 0]), Buffer.from('WEBP'), randomBytes(2000)]),
    };
    const paths: Record<string, string> = {};
    for (const [kind, bytes] of Object.entries(files)) {
      paths[kind] = path.join(l.dir, `out-${kind}`);
      await writeFile(paths[kind], bytes);
    }
    const sent = {
      image: await l.transport.sendMedia(ann.phoneJid, { kind: 'image', path: paths.image, mimetype: 'image/png', caption: 'the map' }),
      voice: await l.transport.sendMedia(ann.phoneJid, { kind: 'voice', path: paths.voice, seconds: 2, waveform: new Uint8Array(64).fill(50) }),
      document: await l.transport.sendMedia(ann.phoneJid, { kind: 'document', path: paths.document, mimetype: 'application/pdf', fileName: 'plan.pdf' }),
      sticker: await l.transport.sendMedia(ann.phoneJid, { kind: 'sticker', path: paths.sticker }),
    };
    const annDevices = [ann.user, ann.lid];
    for (const [kind, bytes] of Object.entries(files) as Array<[keyof typeof files, Buffer]>) {
      const copy = await server.waitForSent((s) => s.id === sent[kind].id && annDevices.includes(s.device.split('@')[0].split(':')[0]));
      const opened = await server.openMedia(copy.message);
      expect(Buffer.compare(opened.bytes, bytes), kind).to.equal(0);
      expect(opened.kind).to.equal({ image: 'image', voice: 'audio', document: 'document', sticker: 'sticker' }[kind]);
    }
    const messages = await Promise.all(Object.values(sent).map((s) => server.waitForSent((c) => c.id === s.id)));
    expect(messages[0].message.imageMessage?.caption).to.equal('the map');
    expect(messages[1].message.audioMessage).to.deep.include({ ptt: true, seconds: 2 });
    expect(messages[2].message.documentMessage?.fileName).to.equal('plan.pdf');
    // Each went to the upload path of its kind, as WhatsApp's media hosts expect.
    expect([...server.mediaUploads.values()].slice(uploadsBefore).map((u) => u.path.split('/').slice(0, 3).join('/'))).to.deep.equal(['/mms/image', '/mms/audio', '/mms/document', '/mms/image']);
  });

  it('a text with a link goes without a preview card: Baileys is not asked to fetch the page, and logs no failed preview', async () => {
    const l = linked;
    const ann = l.server.person('15551230008', '155512300080001');
    // The kind of address Baileys makes previews for (https, a named host); .example never resolves.
    const text = 'the shop: https://kettle-shop.example/kettles';
    const sent = await l.transport.sendText(ann.phoneJid, text);
    const copy = await l.server.waitForSent((s) => s.id === sent.id && [ann.user, ann.lid].includes(s.device.split('@')[0].split(':')[0]));
    expect(textOf(copy.message)).to.equal(text);
    const ext = copy.message.extendedTextMessage;
    expect([ext?.matchedText, ext?.title, ext?.jpegThumbnail].map((v) => v ?? undefined)).to.deep.equal([undefined, undefined, undefined]);
    expect(messages().filter((m) => m.includes('url generation failed'))).to.deep.equal([]);
  });

  it('a pairing code typed on the phone links the device: the code-wrapped key exchange, pair-success, 515, login as that account', async () => {
    l = await linkOnWire({ unlinked: true });
    const server = l.server;
    const code = await l.transport.requestPairingCode(server.user);
    await server.waitFor(() => server.pairingRequests[0], 'the pairing request');
    await server.typeCode(code);
    await server.waitForConnections(2);
    expect(server.connections[1]).to.deep.include({ kind: 'login', user: server.user });
    await l.until(() => l!.transport.session().status === 'linked', 'the link');
    expect(l.transport.session().me).to.deep.include({ id: server.botJid, lid: server.bot.lid });
    expect(l.transport.session().pairingCode).to.equal(undefined);
    // Only one QR was ever shown: the code did the linking.
    expect(l.qrs).to.have.length(1);
  });
});
