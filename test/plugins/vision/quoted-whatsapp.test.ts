import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { proto } from '@whiskeysockets/baileys';
import type { App } from '../../../app/app.js';
import visionPlugin from '../../../plugins/vision/index.js';
import { FakeAnthropicGateway } from '../../fakes/anthropic-messages.js';
import { BOT_PHONE, FakeSocketFactory, mediaServedById, sentText, waMessage, waText } from '../../fakes/baileys-socket.js';
import { startLinkedBot } from '../../helpers/linked-bot.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { testFfmpeg } from '../voice/audio-files.js';
import { makeImage } from './images.js';

const ALICE = '6281200000001@s.whatsapp.net';

/**
 * Quoted photos of an album and quoted videos over the real WhatsApp transport on a fake socket with real Baileys
 * `proto` messages: the photos of an album arrive as one message each and are answered as one turn, and a reply
 * quoting the second one (`contextInfo.stanzaId`) brings that photo back from the kept copy; a reply quoting a video
 * brings its frames back.
 */
describe('quoted album photos and videos over WhatsApp (fake Baileys socket, real app, real jail)', function () {
  this.timeout(90_000);
  let dir: string;
  let app: App | undefined;
  let sockets: FakeSocketFactory;
  let gateway: FakeAnthropicGateway;
  /** What the fake WhatsApp media server hands out, by message id; an id missing here fails to download. */
  let served: Map<string, Buffer>;

  beforeEach(async () => {
    dir = await tempDir('wabot-vision-quoted-');
    gateway = await FakeAnthropicGateway.start('gw');
    const media = mediaServedById();
    served = media.served;
    await writeConfig(dir, { targetUserIds: [BOT_PHONE], access: { mode: 'everyone', allow: [], block: [] }, conversation: { debounceMs: 500, progressAfterSeconds: 0 }, sending: { perChatPerMinute: 60, globalPerMinute: 600, jitterMs: 0 } });
    ({ app, sockets } = await startLinkedBot({
      dir,
      env: { API_KEY: 'test-key-123456', BASE_URL: `${gateway.url}/v1`, MODEL: 'test-model' },
      plugins: [visionPlugin],
      transport: { download: media.download },
    }));
  });

  afterEach(async () => {
    await app?.stop();
    app = undefined;
    await gateway.close();
    await rm(dir, { recursive: true, force: true });
  });

  const nextText = () => sockets.last.nextSent().then(sentText);
  const picturesOf = (n: number) => ((gateway.messages()[n]!.json.messages[0].content ?? []) as Array<{ type: string; source?: { data: string } }>).filter((b) => b.type === 'image').map((b) => Buffer.from(b.source!.data, 'base64'));

  it('a reply quoting the second photo of an album brings that photo back, from the kept copy', async () => {
    const photos = await Promise.all(['red', 'blue', 'green'].map(async (c) => readFile(await makeImage(dir, `${c}.png`, `color=c=${c}:s=64x48`))));
    const image = (bytes: Buffer, caption?: string): proto.IMessage => ({ imageMessage: { mimetype: 'image/png', fileLength: bytes.length, mediaKey: Buffer.alloc(32, 2), directPath: '/v/t62/img', ...(caption ? { caption } : {}) } });
    const ids = ['3EB0ALBUM0000001', '3EB0ALBUM0000002', '3EB0ALBUM0000003'];
    ids.forEach((id, i) => served.set(id, photos[i]!));
    let answered = nextText();
    sockets.last.deliver(ids.map((id, i) => waMessage(image(photos[i]!, i === 2 ? 'which is nicest?' : undefined), { from: ALICE, id })));
    expect(await answered).to.equal('gw sees: which is nicest?');
    expect(picturesOf(0)).to.have.length(3);

    served.clear();
    answered = nextText();
    sockets.last.deliver([waText('what colour is this one?', { from: ALICE, quote: { id: ids[1]!, participant: ALICE, message: image(photos[1]!) } })]);
    expect(await answered).to.equal('gw sees: what colour is this one?');
    const [picture] = picturesOf(1);
    expect(picture!.equals(photos[1]!)).to.equal(true);
  });

  it('a reply quoting a video brings its frames back from the kept copy when WhatsApp no longer has it', async () => {
    const file = path.join(dir, 'clip.mp4');
    execFileSync(testFfmpeg(), ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=s=160x120:d=3:r=10', '-pix_fmt', 'yuv420p', file]);
    const clip = await readFile(file);
    const video: proto.IMessage = { videoMessage: { mimetype: 'video/mp4', seconds: 3, fileLength: clip.length, mediaKey: Buffer.alloc(32, 4), directPath: '/v/t62/vid', caption: 'what is this?' } };
    served.set('3EB0VIDEO0000001', clip);
    let answered = nextText();
    sockets.last.deliver([waMessage(video, { from: ALICE, id: '3EB0VIDEO0000001' })]);
    expect(await answered).to.match(/^gw sees: what is this\?/);
    const frames = picturesOf(0);
    expect(frames).to.have.length(4);

    served.clear();
    answered = nextText();
    sockets.last.deliver([waText('and what changes?', { from: ALICE, quote: { id: '3EB0VIDEO0000001', participant: ALICE, message: video } })]);
    expect(await answered).to.match(/^gw sees: and what changes\?/);
    expect(picturesOf(1).map((f) => f.toString('base64'))).to.deep.equal(frames.map((f) => f.toString('base64')));
  });
});
