import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { makeWASocket, proto } from '@whiskeysockets/baileys';
import { createApp, type App } from '../../../../app/app.js';
import { whatsAppTransportOf } from '../../../../app/testing/whatsapp-transport-of.js';
import type { WhatsAppTransport } from '../../../../core/adapters/whatsapp/whatsapp-transport.js';
import { definePlugin } from '../../../../core/kernel/plugin/contract.js';
import pingPlugin from '../../../../plugins/ping/index.js';
import visionPlugin from '../../../../plugins/vision/index.js';
import { FakeGateway } from '../../../fakes/openai-gateway.js';
import { WhatsAppWireServer } from '../../../fakes/whatsapp-wire-server.js';
import { tempDir, writeConfig } from '../../../helpers/checkout.js';
import { storedDocuments } from '../../../helpers/disk-text.js';
import { HoldablePacingClock } from '../../../helpers/pacing-clock.js';
import { linkByQr, watchLog } from '../../../helpers/wire-transport.js';

/** The WhatsApp Business app's greeting, as the owner lists it (it arrives as the account's own message). */
const GREETING = 'Thanks for contacting Toko Maju! We reply within the hour.';

/** A command that answers with a stream of messages, as a long answer split in parts does. */
const stream = definePlugin({
  name: 'stream',
  description: 'test: answers in three messages',
  setup: () => ({ commands: [{ command: 'stream', run: async (ctx) => { for (const n of [1, 2, 3]) await ctx.reply(`part ${n}`); } }] }),
});

const textOf = (m: proto.IMessage) => m.conversation ?? m.extendedTextMessage?.text ?? undefined;
/** A WebP header: what the sticker's download gives (the wire server hosts no inbound media yet). */
const STICKER = Buffer.from('RIFF\u0000\u0000\u0000\u0000WEBPVP8 ');

/**
 * Issue 50's "done when" on the real socket with the whole bot: the app as `npm start` wires it (its pipeline, bursts,
 * outbox and plugins) over the real WhatsApp transport and Baileys socket, linked by QR to the project's wire server,
 * whose people are devices running Baileys' own Signal code; the model is the fake gateway on 127.0.0.1.
 */
describe('the bot on the wire, round 4 (whole app, real socket, people with their own Signal sessions)', function () {
  this.timeout(60_000);
  let dir: string;
  let server: WhatsAppWireServer;
  let gateway: FakeGateway;
  let app: App;
  let transport: WhatsAppTransport;
  let stopped = false;
  /** The outbox's clock: real, but a test may hold it to see which answer waits for its gap. */
  const pacing = new HoldablePacingClock();
  const log = watchLog();
  const { lines, until } = log;
  /** The copies of the bot's messages a person's device decrypted, as text. */
  const textsTo = (person: { user: string; lid?: string }) =>
    server.sent.filter((s) => [person.user, person.lid].includes(s.device.split('@')[0].split(':')[0])).map((s) => textOf(s.message)).filter((t) => t !== undefined);

  before(async () => {
    dir = await tempDir('wabot-wire-bot-');
    server = await WhatsAppWireServer.start();
    gateway = await FakeGateway.start('gw');
    await writeConfig(dir, {
      targetUserIds: [server.user],
      sending: { perChatPerMinute: 60, globalPerMinute: 120, jitterMs: 0 },
      // The lines of a burst within 1.5 s are one turn (the WhatsApp default, said here so the test reads it).
      conversation: { debounceMs: 1500 },
      plugins: { ping: { enabled: true, access: 'everyone' } },
      groups: { policy: 'open', commandsWithoutMention: true },
      takeover: { minutes: 30, autoReplies: [GREETING] },
    });
    app = await createApp({
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', API_KEY: 'gateway-key-123456', BASE_URL: gateway.url, MODEL: 'main-model', WA_WEBSOCKET_URL: server.url },
      plugins: [pingPlugin, visionPlugin, stream],
      logDestination: log.sink,
      logLevel: 'debug',
      skipHealthProbe: true,
      answerClock: pacing,
    });
    const qrs: string[] = [];
    transport = whatsAppTransportOf(app, {
      makeSocket: (config) => makeWASocket({ ...config, fetchAgent: server.mediaAgent }),
      fetchVersion: async () => ({ version: [2, 3000, 1234567], isLatest: true }),
      printQr: (qr) => void (qrs.push(qr), log.poke()),
      backoff: { baseMs: 50, maxMs: 100, stableMs: 600_000 },
      download: async () => STICKER,
    });
    await app.connect(transport);
    await until(() => qrs.length === 1, 'the QR');
    await linkByQr(server, transport, qrs[0]!, log);
  });
  after(async () => {
    if (!stopped) await app?.stop();
    await server?.stop();
    await gateway?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a bare sticker from a contact\'s device gets no model call and no text; the text after it is answered', async () => {
    const ann = server.person('15551240001', '155512400010001');
    const chats = gateway.chats().length;
    const sticker = await server.deliver(ann, { stickerMessage: { mimetype: 'image/webp', fileLength: STICKER.length, mediaKey: randomBytes(32), directPath: '/v/t62/sticker', url: 'https://mmg.whatsapp.net/v/t62/sticker' } }, { pushName: 'Ann' });
    // A chat's messages are handled in order: once the text after the sticker is answered, the sticker was handled.
    await server.deliver(ann, { conversation: 'and how are you?' });
    await server.waitFor(() => (textsTo(ann).includes('gw: and how are you?') ? true : undefined), 'the answer to the text');
    await app.bot.idle();
    // The sticker made no model call and no text: the only call and the only text are the question's.
    expect(gateway.chats().length - chats).to.equal(1);
    expect(textsTo(ann)).to.deep.equal(['gw: and how are you?']);
    // The sticker did reach the bot: Baileys acknowledged it to the phone.
    expect(server.receipts.some((r) => r.ids.includes(sticker))).to.equal(true);
  });

  it('every line of a burst is read (a "read" receipt, blue ticks, names each one), and the burst is one turn', async () => {
    const bea = server.person('15551240002', '155512400020001');
    const chats = gateway.chats().length;
    const ids = [await server.deliver(bea, { conversation: 'hi' }, { pushName: 'Bea' }), await server.deliver(bea, { conversation: 'one question' }), await server.deliver(bea, { conversation: 'about rice' })];
    const read = () => server.receipts.filter((r) => r.type === 'read').flatMap((r) => r.ids);
    await server.waitFor(() => (ids.every((id) => read().includes(id)) ? true : undefined), 'read receipts for every line');
    await server.waitFor(() => (textsTo(bea).some((t) => t.startsWith('gw: ')) ? true : undefined), 'the answer');
    await app.bot.idle();
    expect(gateway.chats().length - chats, 'the three lines were one turn').to.equal(1);
    expect(read()).to.include.members(ids);
  });

  it("a group's stream of answers is spread by the outbox while a private answer meanwhile goes at once", async () => {
    const eve = server.person('15551240004', '155512400040001');
    const fay = server.person('15551240005', '155512400050001');
    const group = server.group('120363000000000088@g.us', 'Stream club', [eve]).id;
    const inGroup = (text: string) => (c: { chat: string; message: proto.Message }) => c.chat === group && textOf(c.message) === text;
    // The texts the group got, in order (each member's devices decrypt their own copy).
    const groupTexts = () => [...new Set(server.sent.filter((c) => c.chat === group).map((c) => textOf(c.message)))];
    // The outbox's clock held: an answer waiting for its gap waits until the test moves the clock, however long the
    // private answer takes on a loaded machine; one that must go at once cannot wait for it.
    pacing.hold();
    try {
      await server.deliver(eve, { conversation: '.stream' }, { group, pushName: 'Eve' });
      await server.waitForSent(inGroup('part 1'));
      // The group's stream now waits its turn (WhatsApp groups: parts seconds apart)…
      await pacing.whenWaiting(1);
      // …and a private answer meanwhile does not wait behind it: it goes with the clock still held.
      await server.deliver(fay, { conversation: '.ping' }, { pushName: 'Fay' });
      await server.waitFor(() => (textsTo(fay).some((t) => t.startsWith('pong')) ? true : undefined), 'the private answer');
      expect(groupTexts()).to.deep.equal(['part 1']);
      // The group's gap is 4 s (jitter only adds): part 2 still waits at 3.9 s, and goes once the clock passes 4.4 s.
      pacing.advance(3_900);
      expect(pacing.waiting(), 'part 2 waits the whole group gap').to.equal(1);
      pacing.advance(500);
      await server.waitForSent(inGroup('part 2'));
      // Part 3 waits its own gap after part 2.
      await pacing.whenWaiting(1);
      pacing.advance(4_400);
      await server.waitForSent(inGroup('part 3'));
      expect(groupTexts()).to.deep.equal(['part 1', 'part 2', 'part 3']);
    } finally {
      pacing.release();
    }
  });

  it("the WhatsApp Business app's greeting, sent as the account from the phone, does not pause the chat: the contact's question is answered", async () => {
    const gus = server.person('15551240006', '155512400060001');
    const own = server.person(server.user, server.lidUser);
    await server.deliver(own, { conversation: GREETING }, { ownTo: gus });
    // A chat's messages are handled in order: the question after the greeting is answered once both were handled.
    await server.deliver(gus, { conversation: 'do you have rice?' }, { pushName: 'Gus' });
    await server.waitFor(() => (textsTo(gus).includes('gw: do you have rice?') ? true : undefined), 'the answer to the question');
    expect(app.bot.access.paused()).to.deep.equal([]);
    expect(lines.some((l) => String(l.msg).startsWith('the owner wrote from the phone'))).to.equal(false);
  });

  // Last: it stops the bot to read what it stored.
  it("the owner typing to a contact on the phone leaves identity-links clean, and what the bot sends that contact reaches the contact, not \"Message yourself\"", async () => {
    const cai = server.person('15551240003', '155512400030001');
    const own = server.person(server.user, server.lidUser);
    await server.deliver(cai, { conversation: 'is the shop open?' }, { pushName: 'Cai' });
    await server.waitFor(() => (textsTo(cai).includes('gw: is the shop open?') ? true : undefined), 'the answer to Cai');
    await server.deliver(own, { conversation: 'I will take this one' }, { ownTo: cai });
    await until(() => lines.some((l) => String(l.msg).startsWith('the owner wrote from the phone')), "the owner's message to be taken in");
    await app.bot.idle();
    const sent = await transport.sendText(cai.phoneJid, 'reminder: call the plumber');
    const copy = await server.waitForSent((c) => c.id === sent.id && [cai.user, cai.lid].includes(c.device.split('@')[0].split(':')[0]));
    expect([cai.phoneJid, cai.lidJid]).to.include(copy.chat);
    expect(server.sent.filter((c) => c.id === sent.id).map((c) => c.chat)).to.not.include(server.bot.lid);
    await app.stop();
    stopped = true;
    const links = (storedDocuments(path.join(dir, 'data'), 'whatsapp', 'identity-links')[''] ?? {}) as { lidToPhone?: Record<string, string> };
    // Cai's own pair was learnt (from the message they sent), and no pair names the account with anyone else.
    expect(links.lidToPhone).to.include({ [cai.lid!]: cai.user });
    const mixed = Object.entries(links.lidToPhone ?? {}).filter(([lid, phone]) => (lid === server.lidUser) !== (phone === server.user));
    expect(mixed).to.deep.equal([]);
  });
});
