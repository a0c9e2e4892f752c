import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, open, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sinon from 'sinon';
import { proto, type WAMessage } from '@whiskeysockets/baileys';
import { RESEND_STORE, ResendStore } from '../../../core/adapters/whatsapp/resend-store.js';
import { databaseFor } from '../../../core/services/store/database.js';
import { PluginStores } from '../../../core/services/store/plugin-store.js';
import { storeDatabaseText, storedChatLogText } from '../../helpers/disk-text.js';
import { useDurableAuthState } from '../../../core/adapters/whatsapp/auth-store.js';
import { StatusMessage } from '../../../plugins/mp3/progress.js';
import { GROUP, waMessage, waText } from '../../fakes/baileys-socket.js';
import { tempDir } from '../../helpers/checkout.js';
import { cleanup, link, setup } from './harness.js';

const ALICE = '6281211110000@s.whatsapp.net';
const ALICE_LID = '98765432100001@lid';

describe('WhatsApp transport: resend store for other devices’ retries (fake socket)', () => {
  afterEach(cleanup);

  it('after a restart, getMessage still serves sent texts, edits and reactions', async () => {
    const first = await setup();
    await link(first);
    const incoming = waText('hi', { from: ALICE });
    first.sockets.last.deliver([incoming]);
    await first.transport.idle();
    const sent = await first.transport.sendText(ALICE, 'the answer');
    await first.transport.editText(ALICE, sent.id, 'the better answer');
    await first.transport.react(ALICE, incoming.key.id!, '👍');
    const [, edit, reaction] = first.sockets.last.sent;
    await first.transport.stop();

    const second = await setup({ dir: first.dir });
    second.sockets.last.open();
    const getMessage = second.sockets.last.options.getMessage!;
    expect(await getMessage({ remoteJid: ALICE, id: sent.id, fromMe: true })).to.deep.include({ conversation: 'the answer' });
    expect((await getMessage({ remoteJid: ALICE, id: edit.id, fromMe: true }))?.protocolMessage?.editedMessage?.conversation).to.equal('the better answer');
    expect((await getMessage({ remoteJid: ALICE, id: reaction.id, fromMe: true }))?.reactionMessage).to.deep.include({ text: '👍' });
  });

  it('takes in sent-messages.jsonl of an earlier version once, skipping broken lines and messages past the 14-day window, and keeps it aside; past the window they go after a restart too', async () => {
    const dir = await tempDir('wabot-resend-');
    const day = 24 * 3600_000;
    let now = Date.now();
    const line = (id: string, at: number, text: string) => JSON.stringify({ id, chat: ALICE, at, message: { conversation: text } });
    await mkdir(path.join(dir, 'whatsapp'), { recursive: true });
    const earlier = path.join(dir, 'whatsapp', 'sent-messages.jsonl');
    await writeFile(earlier, [line('A1', now - 15 * day, 'old'), line('B2', now - 5 * day, 'newer')].join('\n') + '\n');
    await appendFile(earlier, '{"id":"C3","chat":"x","at":1,"message":{"conversation":\n'); // cut by a crash
    await appendFile(earlier, '{"id":"D4","chat":"x","at":"not a time","message":{}}\n');
    const store = await ResendStore.open(dir, { now: () => now });
    expect(store.get('A1')).to.equal(undefined);
    expect(store.get('B2')?.conversation).to.equal('newer');
    expect(store.size).to.equal(1);
    expect(existsSync(earlier)).to.equal(false);
    expect(await readFile(path.join(dir, 'migrated', 'whatsapp', 'sent-messages.jsonl'), 'utf8')).to.include('newer');
    await store.add('E5', ALICE, { conversation: 'today' });
    now += 10 * day;
    const reloaded = await ResendStore.open(dir, { now: () => now });
    expect(reloaded.get('B2')).to.equal(undefined);
    expect(reloaded.get('E5')?.conversation).to.equal('today');
    expect(reloaded.size).to.equal(1);
    await rm(dir, { recursive: true, force: true });
  });

  it('sent-messages.jsonl found again after it was taken in (a crash before it moved aside) is not taken in twice', async () => {
    const dir = await tempDir('wabot-resend-');
    await mkdir(path.join(dir, 'whatsapp'), { recursive: true });
    const earlier = path.join(dir, 'whatsapp', 'sent-messages.jsonl');
    const bytes = JSON.stringify({ id: 'B2', chat: ALICE, at: Date.now(), message: { conversation: 'only once' } }) + '\n';
    await writeFile(earlier, bytes);
    await ResendStore.open(dir);
    // The file is back where it was, as a crash between the transaction and the move would leave it.
    await writeFile(earlier, bytes);
    const again = await ResendStore.open(dir);
    expect(again.get('B2')?.conversation).to.equal('only once');
    expect(storedChatLogText(dir, 'whatsapp', 'sent-messages').split('only once')).to.have.length(2);
    expect(existsSync(earlier)).to.equal(false);
    await rm(dir, { recursive: true, force: true });
  });

  it('an edit or delete for everyone that matches nothing kept writes nothing; one that matches removes the reply quoting it, on disk and for resends', async () => {
    const dir = await tempDir('wabot-resend-');
    const stores = new PluginStores('whatsapp', dir, [RESEND_STORE]);
    const store = await ResendStore.open(stores);
    const quoting = (text: string, stanzaId: string) => ({ extendedTextMessage: { text, contextInfo: { stanzaId, participant: ALICE } } });
    await store.add('A1', GROUP, quoting('first', 'Q1'));
    await store.add('A1', GROUP, quoting('first, sent again', 'Q1'));
    await store.add('B2', GROUP, quoting('second', 'Q2'));
    const participant = stores.participants().find((p) => p.name === 'messages the bot sent (kept 14 days for resends)')!;
    const db = databaseFor(dir);
    const changes = () => db.get<{ n: number }>('SELECT total_changes() AS n')!.n;
    const before = changes();
    expect(await participant.edit!(GROUP, 'nothing-kept', 'new words', [ALICE])).to.equal(0);
    expect(await participant.revoke!(GROUP, 'nothing-kept', [ALICE])).to.equal(0);
    // Someone else deleting Alice's message changes nothing either.
    expect(await participant.revoke!(GROUP, 'Q2', ['6281299990000@s.whatsapp.net'])).to.equal(0);
    expect(changes()).to.equal(before);
    expect(await participant.revoke!(GROUP, 'Q2', [ALICE])).to.equal(1);
    expect(store.get('B2')).to.equal(undefined);
    expect(await participant.edit!(GROUP, 'Q1', 'new words', [ALICE, ALICE_LID])).to.equal(2);
    expect(store.get('A1')).to.equal(undefined);
    await stores.whenSwept();
    expect(await storeDatabaseText(dir)).to.not.include('second').and.not.include('first');
    await rm(dir, { recursive: true, force: true });
  });
});

describe('WhatsApp transport: key store cost and growth, status updates (fake socket)', () => {
  afterEach(async () => {
    sinon.restore();
    await cleanup();
  });

  it('puts Baileys’ cacheable key store in front of the files, and ignores status@broadcast', async () => {
    const h = await setup();
    const keys = h.sockets.last.options.auth.keys;
    await keys.set({ session: { 'alice.0': Buffer.from('session-bytes') } });
    const file = path.join(h.dir, 'data', 'session_auth', 'session-alice.0.json');
    expect(existsSync(file)).to.equal(true);
    await rm(file);
    // Served from memory: Baileys reads the same keys many times per message.
    expect((await keys.get('session', ['alice.0']))['alice.0']).to.deep.equal(Buffer.from('session-bytes'));
    expect(h.sockets.last.options.shouldIgnoreJid!('status@broadcast')).to.equal(true);
    expect(h.sockets.last.options.shouldIgnoreJid!(ALICE)).to.equal(false);
    expect(h.sockets.last.options.shouldIgnoreJid!(GROUP)).to.equal(false);
  });

  it('one fsync per key write (creds.json keeps the folder fsync too)', async () => {
    const dir = await tempDir('wabot-fsync-');
    const auth = await useDurableAuthState(path.join(dir, 'auth'));
    const probe = await open(path.join(dir, 'probe'), 'w');
    const sync = sinon.spy(Object.getPrototypeOf(probe), 'sync');
    await probe.close();
    await auth.state.keys.set({ 'pre-key': { '1': { public: Buffer.alloc(32), private: Buffer.alloc(32) } } });
    expect(sync.callCount).to.equal(1);
    await auth.saveCreds();
    expect(sync.callCount).to.equal(3);
    await rm(dir, { recursive: true, force: true });
  });

  it('removes session and sender-key files unused for 30 days at start, keeps the rest', async () => {
    const dir = await tempDir('wabot-wa-');
    const folder = path.join(dir, 'data', 'session_auth');
    await mkdir(folder, { recursive: true });
    const old = new Date(Date.now() - 40 * 24 * 3600_000);
    for (const name of ['session-old.0.json', 'sender-key-120363@g.us--old.json', 'sender-key-memory-120363@g.us.json', 'session-fresh.0.json', 'pre-key-5.json']) {
      await writeFile(path.join(folder, name), '{}');
      if (!name.includes('fresh')) await utimes(path.join(folder, name), old, old);
    }
    const h = await setup({ dir });
    expect(existsSync(path.join(folder, 'session-old.0.json'))).to.equal(false);
    expect(existsSync(path.join(folder, 'sender-key-120363@g.us--old.json'))).to.equal(false);
    // An old sender-key memory goes too (with the bot's own key of that group, if any: see stale-keys.test).
    expect(existsSync(path.join(folder, 'sender-key-memory-120363@g.us.json'))).to.equal(false);
    for (const kept of ['session-fresh.0.json', 'pre-key-5.json']) expect(existsSync(path.join(folder, kept)), kept).to.equal(true);
    expect(h.messages().some((m) => m.startsWith('removed 3 session/sender-key files'))).to.equal(true);
  });
});

describe('WhatsApp transport: the rarer cases (fake socket)', () => {
  afterEach(cleanup);

  it('an old message resent as notify (placeholder resend) is not answered', async () => {
    const h = await setup();
    await link(h);
    h.sockets.last.deliver([waText('from last week', { from: ALICE, timestamp: Math.floor(Date.now() / 1000) - 7 * 86400 }), waText('now', { from: ALICE })], 'notify');
    await h.transport.idle();
    expect(h.received.map((m) => m.text)).to.deep.equal(['now']);
  });

  it('a message that could not be decrypted (CIPHERTEXT stub) is logged at warn and counted', async () => {
    const h = await setup();
    await link(h);
    const stub = waMessage({}, { from: ALICE });
    stub.message = null;
    stub.messageStubType = proto.WebMessageInfo.StubType.CIPHERTEXT;
    stub.messageStubParameters = ['No session record'];
    h.sockets.last.deliver([stub]);
    await h.transport.idle();
    expect(h.transport.decryptionFailures()).to.equal(1);
    const line = h.logs().find((l) => String(l.msg).startsWith('a WhatsApp message could not be decrypted'));
    expect(line).to.include({ level: 40, reason: 'No session record' });
  });

  it('a pending placeholder (Baileys asks the phone for content this device did not get) is no decryption failure', async () => {
    const h = await setup();
    await link(h);
    const stub = waMessage({}, { from: ALICE });
    stub.message = null;
    stub.messageStubType = proto.WebMessageInfo.StubType.CIPHERTEXT;
    stub.messageStubParameters = ['Message absent from node'];
    h.sockets.last.deliver([stub]);
    await h.transport.idle();
    expect(h.transport.decryptionFailures()).to.equal(0);
    expect(h.logs().some((l) => String(l.msg).startsWith('a WhatsApp message could not be decrypted'))).to.equal(false);
    expect(h.received).to.deep.equal([]);
  });

  it('edits and deletes for everyone reach the core’s listeners (with the one chat id), not the bot as messages', async () => {
    const edits: unknown[] = [];
    const revokes: unknown[] = [];
    const h = await setup({ events: { onEdit: (chat, id, text) => void edits.push([chat, id, text]), onRevoke: (chat, id) => void revokes.push([chat, id]) } });
    await link(h);
    const Type = proto.Message.ProtocolMessage.Type;
    h.sockets.last.deliver([
      waMessage({ protocolMessage: { type: Type.MESSAGE_EDIT, key: { remoteJid: ALICE_LID, id: 'ORIG1', fromMe: false }, editedMessage: { conversation: 'fixed typo' } } }, { from: ALICE_LID, fromAlt: ALICE }),
      waMessage({ protocolMessage: { type: Type.REVOKE, key: { remoteJid: GROUP, id: 'ORIG2', fromMe: false, participant: ALICE_LID } } }, { chat: GROUP, from: ALICE_LID }),
    ]);
    await h.transport.idle();
    expect(edits).to.deep.equal([[ALICE, 'ORIG1', 'fixed typo']]);
    expect(revokes).to.deep.equal([[GROUP, 'ORIG2']]);
    expect(h.received).to.deep.equal([]);
  });

  it("the echo of the bot's own edit (its status message, edited as it goes) reaches no listener; the owner's edit from the phone does", async () => {
    const edits: unknown[] = [];
    const h = await setup({ events: { onEdit: (chat, id, text) => void edits.push([chat, id, text]) } });
    await link(h);
    h.sockets.last.echoOwnSends = true;
    const sent = await h.transport.sendText(ALICE, 'looking it up…');
    await h.transport.editText(ALICE, sent.id, 'still looking…');
    await h.transport.idle();
    expect(edits).to.deep.equal([]);
    const Type = proto.Message.ProtocolMessage.Type;
    h.sockets.last.deliver([waMessage({ protocolMessage: { type: Type.MESSAGE_EDIT, key: { remoteJid: ALICE, id: 'OWNERMSG1', fromMe: true }, editedMessage: { conversation: 'typed on the phone' } } }, { from: ALICE, fromMe: true, id: 'OWNEREDIT1' })]);
    await h.transport.idle();
    expect(edits).to.deep.equal([[ALICE, 'OWNERMSG1', 'typed on the phone']]);
  });

  it('a poll is not answered as a prompt', async () => {
    const h = await setup();
    await link(h);
    h.sockets.last.deliver([waMessage({ pollCreationMessageV3: { name: 'What should the bot write about?', options: [{ optionName: 'a' }, { optionName: 'b' }], selectableOptionsCount: 1 } }, { chat: GROUP, from: ALICE_LID })]);
    await h.transport.idle();
    expect(h.received).to.deep.equal([]);
  });

  it('view-once: media that arrived is handled; an empty view-once wrapper is refused in words', async () => {
    const h = await setup();
    await link(h);
    h.sockets.last.deliver([waMessage({ viewOnceMessageV2: { message: { imageMessage: { mimetype: 'image/jpeg', caption: 'look once', viewOnce: true } } } }, { from: ALICE })]);
    await h.transport.idle();
    expect(h.received.map((m) => [m.text, m.media?.kind])).to.deep.equal([['look once', 'image']]);
    h.sockets.last.deliver([waMessage({ viewOnceMessageV2: { message: {} } }, { from: ALICE })]);
    await h.transport.idle();
    expect(h.received).to.have.length(1);
    expect((h.sockets.last.sent.at(-1)!.content as { text: string }).text).to.include('cannot open view-once');
  });

  it('view-once as Baileys 7 delivers it to a linked device (flag on the key, no body) is refused in words, once, on the LID it came in on', async () => {
    const h = await setup();
    await link(h);
    // What rc14's decodeMessageNode makes of a view-once stanza (`<unavailable type="view_once"/>`, nothing to decrypt).
    const viewOnce = (id: string) => {
      const raw = proto.WebMessageInfo.fromObject({ key: { remoteJid: ALICE_LID, fromMe: false, id }, messageTimestamp: Math.floor(Date.now() / 1000), pushName: 'Alice' }) as WAMessage;
      Object.assign(raw.key, { remoteJidAlt: ALICE, isViewOnce: true });
      return raw;
    };
    h.sockets.last.deliver([viewOnce('3EB0VIEWONCE01')]);
    await h.transport.idle();
    // WhatsApp may deliver it again (offline replay): still one answer.
    h.sockets.last.deliver([viewOnce('3EB0VIEWONCE01')], 'append');
    await h.transport.idle();
    expect(h.received).to.deep.equal([]);
    expect(h.sockets.last.sent.map((s) => [s.jid, (s.content as { text: string }).text.includes('cannot open view-once')])).to.deep.equal([[ALICE_LID, true]]);
  });

  it('an edit past WhatsApp’s 15-minute edit window is reported as a failure, not sent', async () => {
    const clock = sinon.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    try {
      const h = await setup();
      await link(h);
      const sent = await h.transport.sendText(ALICE, 'Downloading… 10%');
      expect(await h.transport.editText(ALICE, sent.id, 'Downloading… 20%')).to.equal(true);
      clock.tick(16 * 60_000);
      expect(await h.transport.editText(ALICE, sent.id, 'Downloading… 90%')).to.equal(false);
      expect(h.sockets.last.sent).to.have.length(2);
    } finally {
      clock.restore();
    }
  });

  it('mp3 progress: at most MAX_PROGRESS_EDITS progress edits per job, and the end still goes out', async () => {
    let now = 0;
    const edits: string[] = [];
    const ctx = { reply: async () => ({ id: 'S1' }), edit: async (_s: unknown, text: string) => (edits.push(text), true), log: { debug: () => undefined } };
    const status = await StatusMessage.open(ctx as never, 'Downloading…', { intervalMs: 1500, spanMs: 600_000, now: () => now });
    for (let i = 0; i < 500; i++) {
      now += 2000;
      status.progress('Downloading…', i / 5);
    }
    await status.finish('Done.');
    expect(edits).to.have.length(StatusMessage.MAX_PROGRESS_EDITS + 1);
    expect(edits.at(-1)).to.equal('Done.');
  });
});

describe('WhatsApp transport: video previews with the project’s ffmpeg (real ffmpeg)', () => {
  afterEach(cleanup);

  it('sends a JPEG preview made by the configured ffmpeg (in the jail), so Baileys runs no ffmpeg of its own', async () => {
    const { execFileSync } = await import('node:child_process');
    const { Jail } = await import('../../../core/services/jail/jail.js');
    const h = await setup({ transport: { ffmpegPath: '/usr/bin/ffmpeg', jail: new Jail() } });
    await link(h);
    const clip = path.join(h.dir, 'clip.mp4');
    execFileSync('/usr/bin/ffmpeg', ['-loglevel', 'error', '-f', 'lavfi', '-i', 'color=c=red:s=64x48:d=0.2', '-pix_fmt', 'yuv420p', clip]);
    await h.transport.sendMedia(ALICE, { kind: 'video', path: clip });
    const thumb = (h.sockets.last.sent[0].content as { jpegThumbnail?: string }).jpegThumbnail;
    expect(Buffer.from(thumb ?? '', 'base64').subarray(0, 2)).to.deep.equal(Buffer.from([0xff, 0xd8]));
  });
});

describe('voice-note waveforms (Baileys’ optional audio-decode is installed)', () => {
  it('Baileys computes a 64-point waveform from an Ogg/Opus voice note made by real ffmpeg', async () => {
    const { execFileSync } = await import('node:child_process');
    const { getAudioWaveform } = await import('@whiskeysockets/baileys');
    const dir = await tempDir('wabot-wave-');
    const note = path.join(dir, 'note.ogg');
    execFileSync('/usr/bin/ffmpeg', ['-loglevel', 'error', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', '-c:a', 'libopus', note]);
    const waveform = await getAudioWaveform(await readFile(note), { warn: () => undefined, debug: () => undefined, trace: () => undefined, info: () => undefined, error: () => undefined, child: () => ({}) } as never);
    expect(waveform).to.have.length(64);
    expect(Math.max(...waveform!)).to.equal(100);
    await rm(dir, { recursive: true, force: true });
  });
});
