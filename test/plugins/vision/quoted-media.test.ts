import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readdir, readFile, utimes } from 'node:fs/promises';
import path from 'node:path';
import visionPlugin from '../../../plugins/vision/index.js';
import { startTestBot, type BotAction, type TestBot } from '../../../app/testing/index.js';
import type { IncomingMedia, QuotedMessage } from '../../../core/kernel/port/message.js';
import { FakeAnthropicGateway } from '../../fakes/anthropic-messages.js';
import { tempDir } from '../../helpers/checkout.js';
import { testFfmpeg } from '../voice/audio-files.js';
import { makeImage, mediaOf } from './images.js';

const ALICE = '10000000001@s.whatsapp.net';
const BOB = '10000000002@s.whatsapp.net';

/** The average colour of a picture as [r, g, b], decoded by a real ffmpeg outside the bot. */
function colourOf(picture: Buffer): number[] {
  return [...execFileSync(testFfmpeg(), ['-hide_banner', '-loglevel', 'error', '-i', 'pipe:0', '-vf', 'scale=1:1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'], { input: picture })];
}
const isRed = (c: number[]) => c[0]! > 180 && c[1]! < 80 && c[2]! < 80;
const isBlue = (c: number[]) => c[2]! > 180 && c[0]! < 80 && c[1]! < 80;

/** A quote of message `id` whose media WhatsApp no longer serves (the bot must use what it kept, or say it is gone). */
function expiredQuote(id: string, kind: IncomingMedia['kind'], senderId = ALICE): QuotedMessage {
  return { id, senderId, text: '', fromBot: false, media: { kind, mimetype: kind === 'video' ? 'video/mp4' : 'image/png', download: () => Promise.reject(new Error('410 Gone')) } };
}

/**
 * Quoted photos and videos come back, through the test kit: every photo of an album is kept under its own message id
 * (a reply quoting the second photo brings the second photo), a video's frames go to the vision path and are kept too,
 * and what is gone (swept after 30 days, deleted for everyone, another chat's) is said plainly, never answered from.
 */
describe('vision: quoted photos and videos come back', function () {
  this.timeout(60_000);
  let gateway: FakeAnthropicGateway;
  let t: TestBot | undefined;
  let dir: string;
  let red: string;
  let blue: string;
  let green: string;
  let video: Buffer;

  before(async () => {
    dir = await tempDir('vision-quoted-');
    red = await makeImage(dir, 'red.png', 'color=c=red:s=64x48');
    blue = await makeImage(dir, 'blue.png', 'color=c=blue:s=64x48');
    green = await makeImage(dir, 'green.png', 'color=c=green:s=64x48');
    // Four seconds: red for two, then blue for two.
    const file = path.join(dir, 'clip.mp4');
    execFileSync(testFfmpeg(), ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'color=c=red:s=160x120:d=2:r=10', '-f', 'lavfi', '-i', 'color=c=blue:s=160x120:d=2:r=10', '-filter_complex', '[0:v][1:v]concat=n=2:v=1:a=0', '-pix_fmt', 'yuv420p', file]);
    video = await readFile(file);
  });

  beforeEach(async () => {
    gateway = await FakeAnthropicGateway.start('gw');
  });

  afterEach(async () => {
    await t?.stop();
    t = undefined;
    await gateway.close();
  });

  async function start(config: Record<string, unknown> = {}): Promise<TestBot> {
    t = await startTestBot(visionPlugin, { env: { API_KEY: 'gateway-key-123456', BASE_URL: gateway.url, MODEL: 'main' }, config: { conversation: { debounceMs: 300 }, ...config } });
    return t;
  }
  const texts = (actions: BotAction[]) => actions.flatMap((a) => (a.type === 'text' ? [a.text] : []));
  const picturesOf = (n: number) => ((gateway.messages()[n]!.json.messages[0].content ?? []) as Array<{ type: string; source?: { data: string } }>).filter((b) => b.type === 'image').map((b) => Buffer.from(b.source!.data, 'base64'));
  const keptFiles = async (bot: TestBot) => (await readdir(path.join(bot.dir, 'data', 'media', 'vision', 'files')).catch(() => [] as string[])).length;

  async function sendAlbum(bot: TestBot, files: string[], prefix: string): Promise<void> {
    // Read first, then pushed in one go: the photos arrive within one burst window, as an album does.
    const media = await Promise.all(files.map((file) => mediaOf(file)));
    await Promise.all(media.map((m, i) => bot.transport.push({ text: i === files.length - 1 ? 'which one is nicest?' : '', media: m, id: `${prefix}-${i + 1}` })));
    expect(gateway.messages(), 'the album is one question').to.have.length(1);
  }

  it('keeps every photo of an album under its own message id: quoting the second photo later brings that photo back', async () => {
    const bot = await start();
    await sendAlbum(bot, [red, blue, green], 'album');
    expect(gateway.messages()).to.have.length(1);
    expect(await keptFiles(bot)).to.equal(3);

    const second = await bot.transport.push({ text: 'what colour is this one?', quoted: expiredQuote('album-2', 'image') });
    expect(texts(second)).to.deep.equal(['gw sees: what colour is this one?']);
    const [picture] = picturesOf(1);
    expect(picture!.equals(await readFile(blue))).to.equal(true);

    await bot.transport.push({ text: 'and this one?', quoted: expiredQuote('album-1', 'image') });
    expect(picturesOf(2)[0]!.equals(await readFile(red))).to.equal(true);
    expect(picturesOf(2)).to.have.length(1);
  });

  it('keeps no more photos of an album than plugins.vision.maxPhotosPerTurn; quoting one past the cap says it is gone', async () => {
    const bot = await start({ plugins: { vision: { maxPhotosPerTurn: 2 } } });
    await sendAlbum(bot, [red, blue, green], 'many');
    expect(await keptFiles(bot)).to.equal(2);
    const third = await bot.transport.push({ text: 'and the last one?', quoted: expiredQuote('many-3', 'image') });
    expect(texts(third)).to.deep.equal(['I no longer have that photo, and WhatsApp no longer serves it. Please send it again.']);
    expect(gateway.messages()).to.have.length(1);
  });

  it('looks at a video as a few frames spread over its length (jailed ffmpeg), keeps them, and a reply quoting the video brings them back', async () => {
    const bot = await start();
    const clip: IncomingMedia = { kind: 'video', mimetype: 'video/mp4', size: video.length, seconds: 4, download: async () => video };
    const first = await bot.transport.push({ text: 'what happens here?', media: clip, id: 'clip-1' });
    expect(texts(first)[0]).to.match(/^gw sees: what happens here\?\n\n\(The images are 4 frames of one video, in order from its start; its sound is not included\.\)$/);
    const frames = picturesOf(0);
    expect(frames).to.have.length(4);
    expect(frames.map((f) => f.subarray(0, 3).toString('hex'))).to.deep.equal(['ffd8ff', 'ffd8ff', 'ffd8ff', 'ffd8ff']);
    expect(isRed(colourOf(frames[0]!))).to.equal(true);
    expect(isBlue(colourOf(frames[3]!))).to.equal(true);
    expect(await keptFiles(bot)).to.equal(4);
    const history = (await bot.app.bot.histories.recent(ALICE, 10)).filter((e) => e.role === 'user');
    expect(history.map((e) => e.text)).to.deep.equal(['[sent a video] what happens here?']);

    const again = await bot.transport.push({ text: 'what colour is it at the end?', quoted: expiredQuote('clip-1', 'video') });
    expect(texts(again)[0]).to.match(/^gw sees: what colour is it at the end\?/);
    const back = picturesOf(1);
    expect(back.map((f) => f.toString('base64'))).to.deep.equal(frames.map((f) => f.toString('base64')));
  });

  it('a reply quoting a video the bot never kept takes its frames through the quote', async () => {
    const bot = await start();
    const quoted: QuotedMessage = { id: 'old-clip', senderId: ALICE, text: '', fromBot: false, media: { kind: 'video', mimetype: 'video/mp4', download: async () => video } };
    const actions = await bot.transport.push({ text: 'describe it', quoted });
    expect(texts(actions)[0]).to.match(/^gw sees: describe it/);
    const frames = picturesOf(0);
    expect(frames).to.have.length(4);
    expect(isRed(colourOf(frames[0]!))).to.equal(true);
    expect(isBlue(colourOf(frames[3]!))).to.equal(true);
  });

  it('a "video" that is a playlist pointing at a file of the bot is refused before ffmpeg reads it; nothing reaches the gateway', async () => {
    const bot = await start();
    const secret = path.join(bot.dir, 'data', 'media', 'secret.mp4');
    const playlist = Buffer.from(`#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\nfile://${secret}\n#EXT-X-ENDLIST\n`);
    const actions = await bot.transport.push({ text: 'what is in it?', media: { kind: 'video', mimetype: 'video/mp4', size: playlist.length, download: async () => playlist } });
    expect(texts(actions)).to.have.length(1);
    expect(texts(actions)[0]).to.match(/^I can't read that file as audio or video: I only open the usual formats/);
    expect(gateway.messages()).to.have.length(0);
    expect(await keptFiles(bot)).to.equal(0);
  });

  it('says a kept photo is gone once the 30-day sweep removed it, instead of answering about it', async () => {
    let bot = await start();
    await bot.transport.push({ text: 'what is it?', media: await mediaOf(red), id: 'old-photo' });
    expect(await keptFiles(bot)).to.equal(1);
    const files = path.join(bot.dir, 'data', 'media', 'vision', 'files');
    bot = t = await bot.restart({}, async () => {
      const old = new Date(Date.now() - 31 * 24 * 60 * 60 * 1000);
      for (const name of await readdir(files)) await utimes(path.join(files, name), old, old);
    });
    const actions = await bot.transport.push({ text: 'and what colour was it?', quoted: expiredQuote('old-photo', 'image') });
    expect(texts(actions)).to.deep.equal(['I no longer have that photo: I keep the photos I looked at for 30 days only. Please send it again.']);
    expect(gateway.messages()).to.have.length(1);
  });

  it('a photo deleted for everyone is not brought back by a later quote, though WhatsApp still serves it through the quote', async () => {
    const bot = await start();
    await bot.transport.push({ text: 'look', media: await mediaOf(red), id: 'gone-photo' });
    await bot.transport.revoke(ALICE, 'gone-photo', { ids: [ALICE] });
    const stillServed: QuotedMessage = { id: 'gone-photo', senderId: ALICE, text: '', fromBot: false, media: await mediaOf(red) };
    const actions = await bot.transport.push({ text: 'what was in it?', quoted: stillServed });
    expect(texts(actions)).to.deep.equal(['That photo was deleted for everyone, so I no longer have it.']);
    expect(gateway.messages()).to.have.length(1);
  });

  it("a delete for everyone from someone who did not send the photo hides nothing: a later quote still brings it", async () => {
    const bot = await start();
    await bot.transport.push({ text: 'look', media: await mediaOf(red), id: 'kept-photo' });
    await bot.transport.revoke(ALICE, 'kept-photo', { ids: [BOB] });
    const actions = await bot.transport.push({ text: 'what colour?', quoted: expiredQuote('kept-photo', 'image') });
    expect(texts(actions)).to.deep.equal(['gw sees: what colour?']);
    expect(picturesOf(1)[0]!.equals(await readFile(red))).to.equal(true);
  });

  it("quoting a message id of another chat never brings that chat's photo", async () => {
    const bot = await start();
    await bot.transport.push({ text: 'secret', media: await mediaOf(red), id: 'alice-photo' });
    expect(await keptFiles(bot)).to.equal(1);
    const actions = await bot.transport.push({ senderId: BOB, text: 'what is in it?', quoted: expiredQuote('alice-photo', 'image', BOB) });
    expect(texts(actions)).to.deep.equal(['I no longer have that photo, and WhatsApp no longer serves it. Please send it again.']);
    expect(gateway.messages()).to.have.length(1);
  });
});
