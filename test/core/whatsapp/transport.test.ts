import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BufferJSON, generateWAMessageContent, type WAMessage } from '@whiskeysockets/baileys';
import { BOT_LID, BOT_ME, BOT_PHONE, DisconnectReason, GROUP, waMessage, waText } from '../../fakes/baileys-socket.js';
import { tempDir } from '../../helpers/checkout.js';
import { storedDocuments } from '../../helpers/disk-text.js';
import { cleanup, fakeClockPerTest, link, setup, type Harness } from './harness.js';

const ALICE = '6281211110000@s.whatsapp.net';
const ALICE_LID = '98765432100001@lid';

describe('WhatsApp transport: linking and connection handling (fake socket)', () => {
  const clock = fakeClockPerTest();

  it('shows the QR (terminal and session()), then after the scan restarts at once, logs the own LID and stores the session', async () => {
    const h = await setup();
    expect(h.transport.session().status).to.equal('connecting');
    const qr = h.sockets.last.qr('2@first-qr');
    expect(h.transport.session()).to.include({ status: 'qr', qr });
    expect(h.printed).to.deep.equal([qr]);
    expect(h.messages().some((m) => m.includes('scan the QR') && m.includes('http://127.0.0.1:3000/'))).to.equal(true);
    const rotated = h.sockets.last.qr('2@second-qr');
    expect(h.transport.session().qr).to.equal(rotated);

    h.sockets.last.paired({ id: BOT_ME.id, name: BOT_ME.name });
    expect(h.transport.session()).to.include({ status: 'connecting' });
    expect(h.transport.session().qr).to.equal(undefined);
    h.sockets.last.close(DisconnectReason.restartRequired, 'Stream Errored (restart required)');
    await h.sockets.waitForSockets(2);
    h.sockets.last.open(BOT_ME);
    expect(h.sockets.sockets).to.have.length(2);
    expect(h.sockets.alive()).to.deep.equal([h.sockets.last]);
    const session = h.transport.session();
    expect(session.status).to.equal('linked');
    expect(session.qr).to.equal(undefined);
    expect(h.transport.ownIds()).to.deep.equal([`${BOT_PHONE}@s.whatsapp.net`, `${BOT_LID}@lid`]);
    const logs = h.logs();
    const created = logs.find((l) => l.msg === 'Own LID session created successfully');
    expect(created).to.include({ myLID: BOT_LID, myPN: BOT_PHONE });
    expect(logs.find((l) => String(l.msg).startsWith('myLID:'))).to.include({ myLID: BOT_LID, myPN: BOT_PHONE });
    expect(logs.some((l) => String(l.msg).includes('restart of the connection'))).to.equal(true);

    await h.transport.stop();
    const creds = JSON.parse(await readFile(path.join(h.dir, 'data', 'session_auth', 'creds.json'), 'utf8'), BufferJSON.reviver);
    expect(creds.me.lid).to.equal(BOT_ME.lid);
  });

  it('a restart with a stored session needs no scan: own ids are known at once and the myLID line is logged again', async () => {
    const first = await setup();
    await link(first);
    await first.transport.stop();

    const second = await setup({ dir: first.dir });
    expect(second.transport.ownIds()).to.deep.equal([`${BOT_PHONE}@s.whatsapp.net`, `${BOT_LID}@lid`]);
    expect(second.sockets.last.options.auth.creds.registered).to.equal(true);
    second.sockets.last.open();
    expect(second.printed).to.deep.equal([]);
    expect(second.messages().filter((m) => m.startsWith('myLID:'))).to.have.length(1);
    expect(second.messages()).to.not.include('Own LID session created successfully');
  });

  it('logged out (401) clears the stored session and shows a new QR', async () => {
    const h = await setup();
    await link(h);
    await h.transport.stop().then(() => h.transport.start(async (m) => void h.received.push(m)));
    h.sockets.last.open();
    expect(existsSync(path.join(h.dir, 'data', 'session_auth', 'creds.json'))).to.equal(true);

    const count = h.sockets.sockets.length;
    h.sockets.last.close(DisconnectReason.loggedOut);
    await h.sockets.waitForSockets(count + 1);
    const fresh = h.sockets.last;
    expect(fresh.options.auth.creds.me).to.equal(undefined);
    expect(fresh.options.auth.creds.registered).to.equal(false);
    expect(await readdir(path.join(h.dir, 'data', 'session_auth'))).to.deep.equal([]);
    expect(h.transport.ownIds()).to.deep.equal([]);
    expect(h.messages().some((m) => m.includes('logged this device out') && m.includes('scan the new QR'))).to.equal(true);
    const qr = fresh.qr();
    expect(h.transport.session()).to.include({ status: 'qr', qr });
    expect(h.sockets.alive()).to.deep.equal([fresh]);
  });

  it('logged out on the phone: one owner notice naming the QR page, and one when the new link opens', async () => {
    const h = await setup();
    await link(h);
    const count = h.sockets.sockets.length;
    h.sockets.last.close(DisconnectReason.loggedOut);
    await h.sockets.waitForSockets(count + 1);
    expect(h.notices.filter((n) => n.key === 'logged-out')).to.have.length(1);
    expect(h.notices[0]).to.include({ kind: 'raise', key: 'logged-out', linkDown: true });
    expect(h.notices[0].text).to.include('http://127.0.0.1:3000/');
    await link(h);
    expect(h.notices.filter((n) => n.key === 'logged-out').map((n) => n.kind)).to.deep.equal(['raise', 'recover']);
    // A later reconnect of a working link is no recovery to tell.
    const again = h.sockets.sockets.length;
    h.sockets.last.close(DisconnectReason.restartRequired);
    await h.sockets.waitForSockets(again + 1);
    h.sockets.last.open(BOT_ME);
    expect(h.notices.filter((n) => n.key === 'logged-out')).to.have.length(2);
  });

  it('relink (dashboard) logs the device out through WhatsApp, clears the session and shows a new QR, without an incident notice', async () => {
    const h = await setup();
    await link(h);
    const linked = h.sockets.last;
    const count = h.sockets.sockets.length;
    await h.transport.relink();
    await h.sockets.waitForSockets(count + 1);
    expect(linked.logouts).to.have.length(1);
    expect(await readdir(path.join(h.dir, 'data', 'session_auth'))).to.deep.equal([]);
    expect(h.transport.ownIds()).to.deep.equal([]);
    const qr = h.sockets.last.qr();
    expect(h.transport.session()).to.include({ status: 'qr', qr });
    expect(h.sockets.alive()).to.deep.equal([h.sockets.last]);
    expect(h.notices.filter((n) => n.key === 'logged-out')).to.deep.equal([]);
  });

  it('relink while WhatsApp is unreachable clears the session here and starts a fresh link', async () => {
    const h = await setup();
    await link(h);
    h.sockets.last.close(undefined);
    expect(h.transport.session().status).to.equal('offline');
    const count = h.sockets.sockets.length;
    await h.transport.relink();
    await h.sockets.waitForSockets(count + 1);
    expect(h.sockets.last.options.auth.creds.registered).to.equal(false);
    expect(await readdir(path.join(h.dir, 'data', 'session_auth'))).to.deep.equal([]);
    expect(h.sockets.alive()).to.deep.equal([h.sockets.last]);
  });

  it('connection replaced (440) backs off for long and says another instance uses the session', async () => {
    const h = await setup();
    await link(h);
    const count = h.sockets.sockets.length;
    h.sockets.last.close(DisconnectReason.connectionReplaced);
    const session = h.transport.session();
    expect(session.status).to.equal('offline');
    expect(session.lastError).to.match(/connection replaced \(440\)/);
    // replacedBaseMs 60 s, first attempt, jitter 0.5 → 30 s + 15 s.
    expect(session.retryAt! - Date.now()).to.equal(45_000);
    expect(h.logs().find((l) => String(l.msg).includes('another instance is using this WhatsApp session'))?.level).to.equal(40);
    await clock.tickAsync(44_999);
    expect(h.sockets.sockets).to.have.length(count);
    await clock.tickAsync(1);
    expect(h.sockets.sockets).to.have.length(count + 1);
    expect(h.sockets.alive()).to.deep.equal([h.sockets.last]);
  });

  it('network errors back off exponentially with jitter, keep retrying, and start over once WhatsApp answers again', async () => {
    const h = await setup();
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      const count = h.sockets.sockets.length;
      h.sockets.last.close(undefined);
      const session = h.transport.session();
      expect(session.status).to.equal('offline');
      expect(session.lastError).to.match(/network error: getaddrinfo ENOTFOUND/);
      delays.push(session.retryAt! - Date.now());
      await clock.tickAsync(session.retryAt! - Date.now());
      expect(h.sockets.sockets).to.have.length(count + 1);
      expect(h.sockets.alive()).to.have.length(1);
    }
    // base 2 s doubling, with jitter 0.5: 1.5 s, 3 s, 6 s, 12 s.
    expect(delays).to.deep.equal([1500, 3000, 6000, 12000]);
    expect(h.messages().filter((m) => m.startsWith('cannot reach WhatsApp'))).to.have.length(4);
    h.sockets.last.qr();
    h.sockets.last.close(DisconnectReason.timedOut);
    expect(h.transport.session().retryAt! - Date.now()).to.equal(1500);
  });

  it('pairing-code login: with PAIRING_PHONE the code is requested, logged and exposed instead of printing the QR', async () => {
    const h = await setup({ env: { PAIRING_PHONE: '+62 812-0000-0001' } });
    h.sockets.last.qr();
    // WhatsApp answers the request a moment later.
    while (!h.transport.session().pairingCode) await new Promise((resolve) => setImmediate(resolve));
    expect(h.sockets.last.pairingRequests).to.deep.equal(['6281200000001']);
    expect(h.transport.session().pairingCode).to.equal('ABCD1234');
    expect(h.messages().some((m) => m.includes('pairing code ABCD1234'))).to.equal(true);
    expect(h.printed).to.deep.equal([]);
    h.sockets.last.qr();
    expect(h.sockets.last.pairingRequests).to.have.length(1);
  });
});

describe('WhatsApp transport: a pairing code not typed in time (fake socket)', () => {
  const clock = fakeClockPerTest();
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  async function untilCode(h: Harness): Promise<void> {
    while (!h.transport.session().pairingCode) await turn();
  }

  it('its socket ends: the code disappears, the phone it wrote into the session is dropped, a fresh QR follows, and nothing counts as a logout', async () => {
    const h = await setup({ env: { PAIRING_PHONE: '+62 812-0000-0001' } });
    const first = h.sockets.last;
    first.qr('2@first');
    await untilCode(h);
    // Like Baileys: the request wrote the phone into the unlinked session at once.
    expect(first.options.auth.creds.me?.id).to.equal('6281200000001@s.whatsapp.net');
    // The code lives as long as its linking socket: six QR references, 60 s + 5 × 20 s from the first.
    expect(h.transport.session()).to.include({ status: 'qr', pairingCode: 'ABCD1234', pairingCodeExpiresAt: Date.now() + 160_000 });
    await clock.tickAsync(100_000);
    expect(h.transport.session().pairingCodeExpiresAt! - Date.now()).to.equal(60_000);

    first.close(DisconnectReason.timedOut, 'QR refs attempts ended');
    expect(h.transport.session().pairingCode).to.equal(undefined);
    expect(h.transport.session().me).to.equal(undefined);
    expect(h.messages().some((m) => m.includes('pairing code ABCD1234 was not typed in time'))).to.equal(true);
    await clock.tickAsync(h.transport.session().retryAt! - Date.now());
    const second = h.sockets.last;
    expect(second).to.not.equal(first);
    // No phone in the session: Baileys registers afresh (a QR) instead of logging in as a phone never linked (401).
    expect(second.options.auth.creds.me).to.equal(undefined);
    second.qr('2@second');
    expect(h.transport.session()).to.include({ status: 'qr', qr: '2@second' });
    expect(h.printed).to.deep.equal(['2@second']);
    // PAIRING_PHONE's code is not asked for again by itself (each request pushes a notification to the phone)…
    await turn();
    expect(second.pairingRequests).to.deep.equal([]);
    // … but on request (the dashboard), and WhatsApp refusing that half-made login (401) is no logout either.
    second.nextPairingCode = 'WXYZ9876';
    expect(await h.transport.requestPairingCode('6281200000001')).to.equal('WXYZ9876');
    expect(h.transport.session().pairingCode).to.equal('WXYZ9876');
    second.close(DisconnectReason.loggedOut);
    expect(h.transport.session().pairingCode).to.equal(undefined);
    await clock.tickAsync(h.transport.session().retryAt! - Date.now());
    const third = h.sockets.last;
    expect(third).to.not.equal(second);
    expect(third.options.auth.creds.me).to.equal(undefined);
    third.qr('2@third');
    expect(h.transport.session()).to.include({ status: 'qr', qr: '2@third' });
    expect(h.notices.filter((n) => n.key === 'logged-out')).to.deep.equal([]);
    expect(h.messages().some((m) => m.includes('logged this device out'))).to.equal(false);
    expect(h.sockets.alive()).to.deep.equal([third]);
    await h.transport.stop();
    const creds = JSON.parse(await readFile(path.join(h.dir, 'data', 'session_auth', 'creds.json'), 'utf8'), BufferJSON.reviver);
    expect(creds.me).to.equal(undefined);
  });

  it('a session stored with a pairing code never typed (the bot stopped meanwhile) starts over with a QR, not a login as that phone', async () => {
    const first = await setup();
    first.sockets.last.qr();
    await first.transport.requestPairingCode('6281200000001');
    await first.transport.stop();
    const stored = JSON.parse(await readFile(path.join(first.dir, 'data', 'session_auth', 'creds.json'), 'utf8'), BufferJSON.reviver);
    expect(stored.me.id).to.equal('6281200000001@s.whatsapp.net');

    const second = await setup({ dir: first.dir });
    expect(second.sockets.last.options.auth.creds.me).to.equal(undefined);
    expect(second.transport.ownIds()).to.deep.equal([]);
    expect(second.transport.session().me).to.equal(undefined);
    second.sockets.last.qr('2@again');
    expect(second.transport.session()).to.include({ status: 'qr', qr: '2@again' });
  });

  it('a linked device that WhatsApp logs out (401) still counts as logged out: the code-reset is only for sessions never linked', async () => {
    const h = await setup();
    await link(h);
    const count = h.sockets.sockets.length;
    h.sockets.last.close(DisconnectReason.loggedOut);
    await h.sockets.waitForSockets(count + 1);
    expect(h.notices.filter((n) => n.key === 'logged-out')).to.have.length(1);
  });
});

describe('WhatsApp transport: messages in and out (fake socket)', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await setup();
    await link(h);
  });
  afterEach(cleanup);

  it('delivers a message once: a duplicate id and the append copy after a reconnect are ignored', async () => {
    const msg = waText('hello', { from: ALICE });
    h.sockets.last.deliver([msg]);
    h.sockets.last.deliver([msg]);
    await h.transport.idle();
    const count = h.sockets.sockets.length;
    h.sockets.last.close(DisconnectReason.restartRequired);
    await h.sockets.waitForSockets(count + 1);
    h.sockets.last.open();
    h.sockets.last.deliver([msg], 'append');
    await h.transport.idle();
    expect(h.received.map((m) => m.text)).to.deep.equal(['hello']);
    expect(h.messages()).to.include('ignored a duplicate delivery of a message already handled');
  });

  it('remembers handled messages across a restart', async () => {
    const msg = waText('once only', { from: ALICE });
    h.sockets.last.deliver([msg]);
    await h.transport.idle();
    await h.transport.stop();
    const again = await setup({ dir: h.dir });
    again.sockets.last.open();
    again.sockets.last.deliver([msg], 'append');
    await again.transport.idle();
    expect(again.received).to.deep.equal([]);
  });

  it('hands on what the owner typed on the phone (fromMe), ignores status broadcasts and protocol messages', async () => {
    h.sockets.last.deliver([
      waText('from my phone', { from: ALICE, fromMe: true }),
      waText('status', { chat: 'status@broadcast', from: ALICE }),
      waMessage({ protocolMessage: { type: 0 } }, { from: ALICE }),
      waText('real one', { from: ALICE }),
    ]);
    await h.transport.idle();
    // A fromMe message the bot did not send is the owner typing on the phone: the core pauses that chat for it.
    expect(h.received.map((m) => [m.text, Boolean(m.fromMe)])).to.deep.equal([
      ['from my phone', true],
      ['real one', false],
    ]);
  });

  it('does not answer messages that arrived while offline and are older than an hour', async () => {
    h.sockets.last.deliver([waText('old', { from: ALICE, timestamp: Math.floor(Date.now() / 1000) - 2 * 3600 }), waText('recent', { from: ALICE, timestamp: Math.floor(Date.now() / 1000) - 60 })], 'append');
    await h.transport.idle();
    expect(h.received.map((m) => m.text)).to.deep.equal(['recent']);
  });

  it('records phone ↔ LID pairs in the store database (whatsapp identity-links) and uses them as senderAltId', async () => {
    h.sockets.last.deliver([waText('first', { chat: GROUP, from: ALICE_LID, fromAlt: ALICE })]);
    await h.transport.idle();
    h.sockets.last.deliver([waText('second, without alt', { chat: GROUP, from: ALICE_LID })]);
    await h.transport.idle();
    // One sender id per person: the phone jid once it is known, the LID as the alternative id.
    expect(h.received.map((m) => [m.senderId, m.senderAltId])).to.deep.equal([
      [ALICE, ALICE_LID],
      [ALICE, ALICE_LID],
    ]);
    await h.transport.stop();
    const users = (storedDocuments(path.join(h.dir, 'data'), 'whatsapp', 'identity-links')[''] ?? {}) as { lidToPhone?: Record<string, string> };
    expect(users.lidToPhone).to.include({ '98765432100001': '6281211110000', [BOT_LID]: BOT_PHONE });
  });

  it('keeps the pairs it knew across a restart and adds new ones', async () => {
    const dir = await tempDir('wabot-wa-');
    await mkdir(path.join(dir, 'data', 'whatsapp'), { recursive: true });
    await writeFile(path.join(dir, 'data', 'whatsapp', 'identity-links.json'), JSON.stringify({ lidToPhone: { '1234567': '62811' } }));
    const other = await setup({ dir });
    other.sockets.last.open(BOT_ME);
    other.sockets.last.deliver([waText('hi', { from: '6281299990000@s.whatsapp.net', fromAlt: '11122233344455@lid' })]);
    await other.transport.idle();
    await other.transport.stop();
    // The file of an earlier version was taken in at start.
    const users = (storedDocuments(path.join(dir, 'data'), 'whatsapp', 'identity-links')[''] ?? {}) as { lidToPhone?: Record<string, string> };
    expect(existsSync(path.join(dir, 'data', 'workspaces', 'users.json'))).to.equal(false);
    expect(users.lidToPhone).to.deep.equal({ '1234567': '62811', '11122233344455': '6281299990000', [BOT_LID]: BOT_PHONE });
  });

  it('sends text with a quote and mentions, edits by key, reacts to the sender’s message, types', async () => {
    const incoming = waText('question', { chat: GROUP, from: ALICE_LID });
    h.sockets.last.deliver([incoming]);
    await h.transport.idle();
    const socket = h.sockets.last;

    const sent = await h.transport.sendText(GROUP, `answer for @98765432100001 and @${BOT_LID}`, { quotedId: incoming.key.id! });
    expect(socket.sent[0].jid).to.equal(GROUP);
    expect(socket.sent[0].content).to.deep.include({ text: `answer for @98765432100001 and @${BOT_LID}` });
    expect((socket.sent[0].options?.quoted as WAMessage).key).to.deep.include({ id: incoming.key.id, participant: ALICE_LID });
    // The bot's own LID and a LID-only sender are mentioned as LIDs (a phone jid would be a broken mention) …
    expect((socket.sent[0].content as { mentions: string[] }).mentions).to.deep.equal(['98765432100001@lid', `${BOT_LID}@lid`]);
    // … a number the bot never met as a LID stays a phone jid.
    await h.transport.sendText(GROUP, 'ask @6281299990000');
    expect((socket.sent.at(-1)!.content as { mentions: string[] }).mentions).to.deep.equal(['6281299990000@s.whatsapp.net']);
    socket.sent.pop();

    expect(await h.transport.editText(GROUP, sent.id, 'better answer')).to.equal(true);
    expect(socket.sent[1].content).to.deep.include({ text: 'better answer' });
    expect((socket.sent[1].content as { edit: { id: string; fromMe: boolean } }).edit).to.include({ id: sent.id, fromMe: true });

    await h.transport.react(GROUP, incoming.key.id!, '👍');
    const react = (socket.sent[2].content as { react: { text: string; key: { id: string; participant: string } } }).react;
    expect(react.text).to.equal('👍');
    expect(react.key).to.include({ id: incoming.key.id, participant: ALICE_LID });

    await h.transport.setTyping(GROUP, true);
    await h.transport.setTyping(GROUP, false);
    // Chat presences only (the account-wide online/offline around them is read-receipts.test's).
    expect(socket.presences.filter((p) => p.jid)).to.deep.equal([{ type: 'composing', jid: GROUP }, { type: 'paused', jid: GROUP }]);

    // Baileys' message retries can find what the bot sent.
    // (A quoted reply is an extendedTextMessage carrying the quote, as Baileys builds it.)
    expect(await socket.options.getMessage!({ remoteJid: GROUP, id: sent.id, fromMe: true })).to.have.nested.property('extendedTextMessage.text', `answer for @98765432100001 and @${BOT_LID}`);
    expect(socket.options.msgRetryCounterCache).to.not.equal(undefined);
  });

  it('sends voice notes (ptt, ogg/opus), audio files, images, videos, documents and stickers (Baileys `{ sticker }`) from a file path', async () => {
    const file = path.join(h.dir, 'clip.ogg');
    await writeFile(file, 'OggS');
    const socket = h.sockets.last;
    await h.transport.sendMedia(ALICE, { kind: 'voice', path: file });
    await h.transport.sendMedia(ALICE, { kind: 'audio', path: file });
    await h.transport.sendMedia(ALICE, { kind: 'image', path: file, caption: 'look' });
    await h.transport.sendMedia(ALICE, { kind: 'video', path: file, mimetype: 'video/mp4' });
    await h.transport.sendMedia(ALICE, { kind: 'document', path: file, fileName: 'notes.ogg' });
    await h.transport.sendMedia(ALICE, { kind: 'sticker', path: file });
    expect(socket.sent.map((s) => s.content)).to.deep.equal([
      { audio: { url: file }, ptt: true, mimetype: 'audio/ogg; codecs=opus' },
      { audio: { url: file }, ptt: false, mimetype: 'audio/ogg; codecs=opus' },
      { image: { url: file }, caption: 'look' },
      // No jail here, so no preview: an empty one, else Baileys would run the ffmpeg on PATH itself (video-preview.test.ts).
      { video: { url: file }, mimetype: 'video/mp4', jpegThumbnail: '' },
      { document: { url: file }, mimetype: 'audio/ogg; codecs=opus', fileName: 'notes.ogg' },
      { sticker: { url: file }, mimetype: 'image/webp' },
    ]);
    let error: Error | undefined;
    await h.transport.sendMedia(ALICE, { kind: 'image', path: path.join(h.dir, 'missing.jpg') }).catch((err) => (error = err));
    expect(error?.message).to.include('file not found').and.to.include('missing.jpg');
  });

  it('a text with a link gets no preview fetched by Baileys (no request outside the egress guard, no stack trace in the log), also when edited', async () => {
    const socket = h.sockets.last;
    const sent = await h.transport.sendText(ALICE, 'see https://example.com/page');
    await h.transport.editText(ALICE, sent.id, 'see https://example.com/other');
    const fetched: string[] = [];
    for (const record of socket.sent) {
      // What Baileys' sendMessage makes of the content: its preview step asks getUrlInfo for the link unless told not to.
      await generateWAMessageContent(record.content, { getUrlInfo: async (url: string) => void fetched.push(url), logger: undefined } as never);
    }
    expect(socket.sent).to.have.length(2);
    expect(fetched).to.deep.equal([]);
  });

  it("refuses, in words and before any upload, a file larger than WhatsApp takes for its kind; the same bytes go as a document", async () => {
    const big = path.join(h.dir, 'big.bin');
    await writeFile(big, '');
    await truncate(big, 17 * 1024 * 1024);
    const socket = h.sockets.last;
    const refusal = async (media: Parameters<typeof h.transport.sendMedia>[1]) => (await h.transport.sendMedia(ALICE, media).then(() => undefined, (err: Error) => err))?.message;
    expect(await refusal({ kind: 'image', path: big })).to.equal('cannot send the image: it is 17 MB, more than the 16 MB WhatsApp accepts for an image; sent as a document it could go');
    expect(await refusal({ kind: 'voice', path: big })).to.include('more than the 16 MB WhatsApp accepts for a voice');
    expect(await refusal({ kind: 'sticker', path: big })).to.include('more than the 1 MB WhatsApp accepts for a sticker');
    expect(socket.sent).to.deep.equal([]);
    expect(socket.uploads).to.deep.equal([]);
    await h.transport.sendMedia(ALICE, { kind: 'video', path: big, mimetype: 'video/mp4' });
    await h.transport.sendMedia(ALICE, { kind: 'document', path: big, fileName: 'big.bin' });
    expect(socket.sent.map((s) => Object.keys(s.content)[0])).to.deep.equal(['video', 'document']);
  });

  it('videos and audio files go up to 64 MB and documents up to 2 GB; one byte more is refused in words, before any upload', async () => {
    const MB = 1024 * 1024;
    const sized = async (name: string, bytes: number) => {
      const file = path.join(h.dir, name);
      await writeFile(file, '');
      await truncate(file, bytes); // sparse: no disk written
      return file;
    };
    const socket = h.sockets.last;
    const refusal = async (media: Parameters<typeof h.transport.sendMedia>[1]) => (await h.transport.sendMedia(ALICE, media).then(() => undefined, (err: Error) => err))?.message;
    const over64 = await sized('over64.bin', 64 * MB + 1);
    expect(await refusal({ kind: 'video', path: over64, mimetype: 'video/mp4' })).to.equal('cannot send the video: it is 64.1 MB, more than the 64 MB WhatsApp accepts for a video; sent as a document it could go');
    expect(await refusal({ kind: 'audio', path: over64, mimetype: 'audio/mpeg' })).to.include('more than the 64 MB WhatsApp accepts for an audio');
    expect(await refusal({ kind: 'document', path: await sized('over2g.bin', 2048 * MB + 1), fileName: 'huge.bin' })).to.equal('cannot send the document: it is 2.1 GB, more than the 2 GB WhatsApp accepts for a document');
    expect(socket.sent).to.deep.equal([]);
    expect(socket.uploads).to.deep.equal([]);
    // An audio file above the 16 MB of a voice note still goes.
    await h.transport.sendMedia(ALICE, { kind: 'audio', path: await sized('audio17.bin', 17 * MB), mimetype: 'audio/mpeg' });
    expect(socket.sent.map((s) => Object.keys(s.content)[0])).to.deep.equal(['audio']);
  });
});
