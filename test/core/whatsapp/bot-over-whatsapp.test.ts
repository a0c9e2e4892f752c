import { expect } from 'chai';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { createApp, type App } from '../../../app/app.js';
import { createLogger } from '../../../core/services/log/logger.js';
import { addOwnLidToConfig } from '../../../cli/own-lid-config.js';
import { WhatsAppTransport } from '../../../core/adapters/whatsapp/whatsapp-transport.js';
import { whatsAppSettings } from '../../../app/whatsapp-settings.js';
import pingPlugin from '../../../plugins/ping/index.js';
import { startWebServer, type WebServer } from '../../../web/server.js';
import { BOT_LID, BOT_ME, BOT_PHONE, DisconnectReason, FakeSocketFactory, GROUP, waText } from '../../fakes/baileys-socket.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { UNPACED_ANSWERS } from '../../helpers/chat.js';

const ALICE = '6281211110000@s.whatsapp.net';
const ALICE_LID = '98765432100001@lid';

describe('the real bot over the WhatsApp transport (fake socket, real app and web page)', () => {
  let dir: string;
  let app: App;
  let transport: WhatsAppTransport;
  let sockets: FakeSocketFactory;
  let web: WebServer;
  let lines: string[];

  beforeEach(async () => {
    dir = await tempDir('wabot-wa-app-');
    // targetUserIds holds only the phone number, as after a first setup: the LID must be learnt at login.
    await writeConfig(dir, { targetUserIds: [BOT_PHONE] });
    const sink = new PassThrough();
    lines = [];
    sink.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
    const logger = createLogger({ level: 'debug', pretty: false, destination: sink });
    const env = { PATH: process.env.PATH ?? '', API_KEY: 'test-key-123456', BASE_URL: 'http://127.0.0.1:9', MODEL: 'test-model' };
    // A group's answers go as soon as they are ready, not 4 s apart in real time (their spacing is answer-pacing.test.ts's).
    app = await createApp({ cwd: dir, env, plugins: [pingPlugin], logger, skipHealthProbe: true, answerPacing: UNPACED_ANSWERS });
    sockets = new FakeSocketFactory();
    const log = app.log.child({ part: 'whatsapp' });
    transport = new WhatsAppTransport({
      ...whatsAppSettings(app.settings, () => app.config),
      log,
      makeSocket: sockets.make,
      printQr: () => undefined,
      fetchVersion: async () => ({ version: [2, 3000, 1000000001], isLatest: true }),
      onLinked: async (me) => {
        if (!me.lid) return;
        const updated = await addOwnLidToConfig(app.configFile, app.config, me.lid, log);
        if (updated) app.bot.setConfig(updated);
      },
    });
    web = await startWebServer(app, () => transport);
    await app.connect(transport);
  });

  afterEach(async () => {
    await app.stop();
    await web.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function linkBot(): Promise<void> {
    sockets.last.qr();
    sockets.last.paired({ id: BOT_ME.id });
    sockets.last.close(DisconnectReason.restartRequired);
    await sockets.waitForSockets(2);
    sockets.last.open(BOT_ME);
  }

  async function settle(): Promise<void> {
    await transport.idle();
    await app.bot.idle();
  }

  it('GET / serves the QR while not linked and the status page once linked', async () => {
    sockets.last.qr('2@qr-for-the-page');
    const pending = await (await fetch(`http://127.0.0.1:${web.port}/`)).text();
    expect(pending).to.include('<svg');
    await linkBot();
    const linked = await (await fetch(`http://127.0.0.1:${web.port}/`)).text();
    expect(linked).to.not.include('<svg');
    expect(linked).to.include('linked').and.to.include(BOT_PHONE);
  });

  it('answers a private .ping, quoting nothing, through the socket', async () => {
    await linkBot();
    sockets.last.deliver([waText('.ping', { from: ALICE })]);
    await settle();
    expect(sockets.last.sent).to.have.length(1);
    expect(sockets.last.sent[0].jid).to.equal(ALICE);
    expect((sockets.last.sent[0].content as { text: string }).text).to.match(/^pong/);
  });

  it('in a group answers a mention by LID (learnt at login and written to config.json), a mention by phone and a reply to the bot; not a mention of someone else', async () => {
    await linkBot();
    const socket = sockets.last;
    socket.deliver([waText('@777000111 .ping', { chat: GROUP, from: ALICE_LID, fromAlt: ALICE, mentions: ['777000111@lid'] })]);
    await settle();
    expect(socket.sent).to.have.length(0);

    socket.deliver([waText(`@${BOT_LID} .ping`, { chat: GROUP, from: ALICE_LID, fromAlt: ALICE, mentions: [`${BOT_LID}@lid`] })]);
    await settle();
    expect(socket.sent).to.have.length(1);
    expect(socket.sent[0].jid).to.equal(GROUP);
    expect((socket.sent[0].content as { text: string }).text).to.match(/^pong/);

    socket.deliver([waText(`@${BOT_PHONE} .ping`, { chat: GROUP, from: ALICE_LID, mentions: [`${BOT_PHONE}@s.whatsapp.net`] })]);
    await settle();
    expect(socket.sent).to.have.length(2);

    socket.deliver([waText('.ping', { chat: GROUP, from: ALICE_LID, quote: { id: socket.sent[0].id, participant: `${BOT_LID}@lid`, text: 'pong' } })]);
    await settle();
    expect(socket.sent).to.have.length(3);

    const config = JSON.parse(await readFile(path.join(dir, 'config.json'), 'utf8'));
    expect(config.targetUserIds).to.deep.equal([BOT_PHONE, BOT_LID]);
    expect(lines.filter((l) => l.includes('added the bot\'s own LID'))).to.have.length(1);
  });

  it('answers one message once even when WhatsApp delivers it twice', async () => {
    await linkBot();
    const msg = waText('.ping', { from: ALICE });
    sockets.last.deliver([msg]);
    sockets.last.deliver([msg], 'append');
    await settle();
    expect(sockets.last.sent).to.have.length(1);
  });
});
