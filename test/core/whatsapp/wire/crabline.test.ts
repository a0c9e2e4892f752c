import { expect } from 'chai';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { FakeAudio } from '../../../../app/testing/index.js';
import { CrablineWhatsApp } from '../../../fakes/crabline.js';
import { FakeGateway, lastUserText } from '../../../fakes/openai-gateway.js';
import { tempDir, writeConfig } from '../../../helpers/checkout.js';
import { WireBot } from '../../../helpers/wire-bot.js';
import { makeTone } from '../../../plugins/voice/audio-files.js';

/** Every file under `dir` whose bytes contain `needle`, relative to `dir`. */
async function filesContaining(dir: string, needle: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const file = path.join(entry.parentPath, entry.name);
    if (!entry.isFile()) continue;
    // A write's temporary file may be renamed away between the listing and the read (its bytes are then in the file
    // it became, which the listing holds too).
    const bytes = await stat(file)
      .then((s) => (s.size > 50_000_000 ? undefined : readFile(file)))
      .catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return undefined;
        throw err;
      });
    if (bytes?.includes(needle)) found.push(path.relative(dir, file));
  }
  return found;
}

const opened = (l: Record<string, any>) => typeof l.myLID === 'string';

/**
 * The real thing on the wire: `npm start`'s process (real Baileys socket, real auth store on disk, the app's own
 * wiring) connected through WA_WEBSOCKET_URL to crabline's WhatsApp Web server on 127.0.0.1, with the fake gateway and
 * audio provider as upstreams. One bot serves the cases in order, as a person's day with it would.
 */
describe('WhatsApp on the wire (npm start against a WhatsApp Web server on 127.0.0.1)', function () {
  this.timeout(60_000);
  let dir: string;
  let wa: CrablineWhatsApp;
  let gateway: FakeGateway;
  let audio: FakeAudio;
  let bot: WireBot | undefined;
  let env: Record<string, string>;

  before(async () => {
    dir = await tempDir('wabot-wire-');
    gateway = await FakeGateway.start('gw');
    audio = await FakeAudio.start(() => 'please remember the blue kettle');
    wa = await CrablineWhatsApp.start(path.join(dir, 'server'));
    await wa.seedSession(path.join(dir, 'data', 'session_auth'));
    await writeConfig(dir, { port: 0, sending: { perChatPerMinute: 60, globalPerMinute: 120, jitterMs: 0 }, plugins: { ping: { enabled: true, access: 'everyone' } } });
    env = {
      API_KEY: 'gateway-key-123456',
      BASE_URL: gateway.url,
      MODEL: 'main-model',
      AUDIO_API_KEYS: 'wire-audio-key-1',
      AUDIO_BASE_URL: audio.url,
      WA_WEBSOCKET_URL: wa.socketUrl,
      // The wire server's media host is on loopback: the tests-only switch lets the download reach it.
      EGRESS_ALLOW_PRIVATE_HOSTS: '1',
    };
    bot = WireBot.start(dir, env);
    await bot.waitForLog(opened);
  });

  after(async () => {
    await bot?.stop();
    await wa?.stop();
    await gateway?.close();
    await audio?.close();
    // The session's pre-key files go here, beside the other files' tests, not alone in the run's clean-up at the end.
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('opens the stored session without a QR, warning that WA_WEBSOCKET_URL is set', () => {
    const messages = bot!.messages();
    expect(messages.some((m) => m.includes('WA_WEBSOCKET_URL is set'))).to.equal(true);
    expect(messages.some((m) => m.includes('WhatsApp session found'))).to.equal(true);
    expect(messages.some((m) => m.includes('scan the QR'))).to.equal(false);
    expect(bot!.logs().find(opened)?.myLID).to.equal(wa.selfJid.split('@')[0]);
  });

  it('answers a private text through the gateway, to the sender', async () => {
    await wa.inbound({ from: '15551230001@s.whatsapp.net', text: 'hello over the wire' });
    const reply = await wa.waitForSend((s) => s.text?.includes('hello over the wire') ?? false);
    expect(reply.to).to.equal('15551230001@s.whatsapp.net');
    expect(reply.text).to.equal('gw: hello over the wire');
  });

  it('answers .ping', async () => {
    await wa.inbound({ from: '15551230001@s.whatsapp.net', text: '.ping' });
    const reply = await wa.waitForSend((s) => /^pong \(\d+ ms\)$/.test(s.text ?? ''));
    expect(reply.to).to.equal('15551230001@s.whatsapp.net');
  });

  it('downloads a voice note from the media URL, has it transcribed and answers what was said', async () => {
    const note = makeTone(dir, 'note.ogg', 1.5);
    await wa.inbound({ from: '15551230003@s.whatsapp.net', voice: note });
    const reply = await wa.waitForSend((s) => s.to === '15551230003@s.whatsapp.net' && (s.text?.includes('blue kettle') ?? false));
    expect(reply.text).to.include('please remember the blue kettle');
    // The bytes the provider got are the note's, decrypted from WhatsApp's media encryption.
    expect(audio.uploads.length).to.equal(1);
    expect(Buffer.compare(audio.uploads[0].bytes, note)).to.equal(0);
  });

  it('answers a chat that arrives on its LID at the LID, although the phone is known', async () => {
    // The server's usync answered 15551230001's LID when the bot first wrote to the phone id (above).
    await wa.inbound({ from: '15551230001@lid', text: 'hello from my lid' });
    const reply = await wa.waitForSend((s) => s.text?.includes('hello from my lid') ?? false);
    expect(reply.to).to.equal('15551230001@lid');
  });

  // The bot's own record of what it sent (kept for resends in the store database) quotes the person's words too.
  it('.mydata delete confirm leaves nothing of the chat\'s words in data/', async () => {
    const person = '15551230002@s.whatsapp.net';
    await wa.inbound({ from: person, text: 'my secret word is zanzibar-quokka' });
    await wa.waitForSend((s) => s.text?.includes('zanzibar-quokka') ?? false);
    expect(await filesContaining(path.join(dir, 'data'), 'zanzibar-quokka')).to.not.deep.equal([]);
    await wa.inbound({ from: person, text: '.mydata delete' });
    await wa.waitForSend((s) => s.to === person && (s.text?.includes('mydata delete confirm') ?? false));
    await wa.inbound({ from: person, text: '.mydata delete confirm' });
    await wa.waitForSend((s) => s.to === person && (s.text?.startsWith('Done: I deleted everything') ?? false));
    expect(await filesContaining(path.join(dir, 'data'), 'zanzibar-quokka')).to.deep.equal([]);
  });

  it('after a restart on the same session: no new QR, and it answers again', async () => {
    expect(await bot!.stop()).to.equal(0);
    const before = gateway.chats().length;
    bot = WireBot.start(dir, env);
    await bot.waitForLog(opened);
    await wa.inbound({ from: '15551230001@s.whatsapp.net', text: 'still there after the restart?' });
    const reply = await wa.waitForSend((s) => s.text?.includes('still there after the restart?') ?? false);
    expect(reply.to).to.equal('15551230001@s.whatsapp.net');
    expect(lastUserText(gateway.chats().at(-1)!)).to.include('still there after the restart?');
    expect(gateway.chats().length).to.be.greaterThan(before);
    expect(bot.messages().some((m) => m.includes('scan the QR') || m.includes('no WhatsApp session stored'))).to.equal(false);
  });
});
