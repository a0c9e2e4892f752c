import { expect } from 'chai';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { proto } from '@whiskeysockets/baileys';
import { createApp, type App } from '../../core/app.js';
import { FakeModel } from '../../core/index.js';
import { createLogger } from '../../core/log/logger.js';
import { WhatsAppTransport } from '../../core/transport/whatsapp/whatsapp-transport.js';
import recall from '../../plugins/recall/index.js';
import { BOT_ME, DisconnectReason, FakeSocketFactory, waMessage, waText } from '../fakes/baileys-socket.js';
import { tempDir, writeConfig } from '../helpers/test-app.js';

const ALICE = '6281211110000@s.whatsapp.net';
const ALICE_LID = '98765432100001@lid';

/**
 * Every file under `folder` (two levels: the recall log has a folder per chat), as text. A file that moves while it is
 * read (the temporary file of an atomic write, a history log a fold sets aside) makes the whole folder read again, so
 * no text is missed in between.
 */
async function textUnder(folder: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await textUnderOnce(folder);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 20) throw err;
    }
  }
}

async function textUnderOnce(folder: string): Promise<string> {
  let text = '';
  for (const entry of await readdir(folder, { withFileTypes: true }).catch(() => [])) {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) text += await textUnderOnce(full);
    else if (entry.isFile()) text += await readFile(full, 'utf8');
  }
  return text;
}

/**
 * The real bot (app, stores, recall plugin, metrics wrapper) over the WhatsApp transport on a fake socket that
 * delivers real Baileys messages: what the bot keeps about a chat follows what happens to the chat on WhatsApp.
 */
describe('the real bot over WhatsApp: what it keeps follows the chat', function () {
  this.timeout(20_000);
  let dir: string;
  let model: FakeModel;
  let app: App | undefined;
  let sockets: FakeSocketFactory;

  async function start(): Promise<void> {
    const logger = createLogger({ level: 'warn', pretty: false, destination: new PassThrough() });
    const env = { PATH: process.env.PATH ?? '', API_KEY: 'test-key-123456', BASE_URL: model.url, MODEL: 'test-model' };
    app = await createApp({ cwd: dir, env, plugins: [recall], logger, skipHealthProbe: true });
    sockets = new FakeSocketFactory();
    const transport = new WhatsAppTransport({ settings: app.settings, config: () => app!.config, log: app.log, makeSocket: sockets.make, printQr: () => undefined, fetchVersion: async () => ({ version: [2, 3000, 1000000001], isLatest: true }) });
    await app.connect(transport);
    sockets.last.qr();
    sockets.last.paired({ id: BOT_ME.id });
    sockets.last.close(DisconnectReason.restartRequired);
    await sockets.waitForSockets(2);
    sockets.last.open(BOT_ME);
  }
  /** Delivers a message that the model answers; resolves with what the model was sent (the prompt) once answered. */
  async function say(message: proto.IWebMessageInfo): Promise<string> {
    const before = model.requests.length;
    sockets.last.deliver([message as never]);
    // Up to 10 s: on a machine busy writing elsewhere one fsync can take seconds (a fast run waits milliseconds).
    for (let i = 0; i < 1000 && model.requests.length === before; i++) await new Promise((r) => setTimeout(r, 10));
    await app!.bot.idle();
    return JSON.stringify(model.requests.at(-1)?.messages ?? []);
  }

  beforeEach(async () => {
    dir = await tempDir('wabot-wa-chat-data-');
    await writeConfig(dir);
    model = await FakeModel.start(() => 'noted');
  });
  afterEach(async () => {
    await app?.stop();
    app = undefined;
    await model.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('what was said while the chat was known by its LID is in the prompt once the phone number is known, after a restart too', async () => {
    await start();
    await say(waText('my cat is called Miso', { from: ALICE_LID }));
    expect(await say(waText('what is my cat called?', { from: ALICE_LID, fromAlt: ALICE }))).to.include('my cat is called Miso');

    await app!.stop();
    app = undefined;
    await start();
    expect(await say(waText('and my dog?', { from: ALICE }))).to.include('my cat is called Miso');
    // No second copy under the LID (it would be reported as a clash and outlive a delete of the phone chat).
    const folder = path.join(dir, 'data', 'history');
    for (const name of (await readdir(folder)).filter((n) => n.startsWith(ALICE_LID))) {
      expect(await readFile(path.join(folder, name), 'utf8'), name).not.to.include('Miso');
    }
  });

  it('a message deleted for everyone leaves the prompt history and the recall log', async () => {
    await start();
    const secret = waText('my bank pin is 4471', { from: ALICE });
    await say(secret);
    await say(waText('thanks', { from: ALICE }));
    expect(await textUnder(path.join(dir, 'data'))).to.include('4471');

    const revoke = waMessage({ protocolMessage: { type: proto.Message.ProtocolMessage.Type.REVOKE, key: { remoteJid: ALICE, id: secret.key.id, fromMe: false } } }, { from: ALICE });
    sockets.last.deliver([revoke]);
    // The removal rewrites the history file (with an fsync): up to 10 s on a busy disk, milliseconds otherwise.
    for (let i = 0; i < 1000 && (await textUnder(path.join(dir, 'data', 'history'))).includes('4471'); i++) await new Promise((r) => setTimeout(r, 10));
    expect(await say(waText('what did I say?', { from: ALICE }))).not.to.include('4471');
    expect(await textUnder(path.join(dir, 'data', 'history'))).not.to.include('4471');
    expect(await textUnder(path.join(dir, 'data', 'recall'))).not.to.include('4471');
  });
});
