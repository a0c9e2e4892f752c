import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import stickerPlugin from '../../../plugins/sticker/index.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { runConsoleChat } from '../../helpers/console-chat.js';

const run = promisify(execFile);

/** Width and height a WebP file declares (VP8X canvas, or the VP8/VP8L frame of a simple file); throws if not WebP. */
export function webpSize(bytes: Buffer): { width: number; height: number; animated: boolean } {
  if (bytes.toString('latin1', 0, 4) !== 'RIFF' || bytes.toString('latin1', 8, 12) !== 'WEBP') throw new Error('not a WebP file');
  const chunk = bytes.toString('latin1', 12, 16);
  if (chunk === 'VP8X') {
    return { width: 1 + bytes.readUIntLE(24, 3), height: 1 + bytes.readUIntLE(27, 3), animated: (bytes[20]! & 0x02) !== 0 };
  }
  if (chunk === 'VP8 ') return { width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff, animated: false };
  if (chunk === 'VP8L') {
    const bits = bytes.readUInt32LE(21);
    return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >> 14) & 0x3fff), animated: false };
  }
  throw new Error(`unknown WebP chunk ${chunk}`);
}

type Action = { type: string; text?: string; media?: { kind: string; path: string } };

describe('sticker plugin (real ffmpeg in the jail)', function () {
  this.timeout(120_000);
  let t: TestBot | undefined;
  let dir: string;
  let photo: Buffer;
  let noisy: Buffer;
  let clip: Buffer;

  before(async () => {
    dir = await tempDir('wabot-sticker-');
    // A 1200×800 picture, a noisy one (hard to compress) and a 9-second clip, all made by the real ffmpeg.
    await run('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=1200x800', '-frames:v', '1', path.join(dir, 'photo.png')]);
    await run('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'nullsrc=size=700x1400,geq=lum=random(1)*255:cb=random(2)*255:cr=random(3)*255', '-frames:v', '1', '-q:v', '2', path.join(dir, 'noisy.jpg')]);
    await run('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=640x360:rate=25', '-t', '9', '-pix_fmt', 'yuv420p', path.join(dir, 'clip.mp4')]);
    [photo, noisy, clip] = await Promise.all(['photo.png', 'noisy.jpg', 'clip.mp4'].map((f) => readFile(path.join(dir, f))));
  });
  after(() => rm(dir, { recursive: true, force: true }));
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  const start = async () => (t = await startTestBot([stickerPlugin], { config: { plugins: { sticker: { enabled: true } } } }));
  const mediaOf = (bytes: Buffer, kind: 'image' | 'video', mimetype: string) => ({ kind, mimetype, size: bytes.length, download: async () => bytes });
  const stickerOf = async (actions: Action[]) => {
    const sent = actions.filter((a) => a.type === 'media');
    expect(sent, JSON.stringify(actions)).to.have.length(1);
    expect(sent[0]!.media!.kind).to.equal('sticker');
    return readFile(sent[0]!.media!.path);
  };

  it('.sticker as an image caption sends a WebP 512 px on the longer side, under 100 KB', async () => {
    await start();
    const webp = await stickerOf((await t!.transport.push({ text: '.sticker', media: mediaOf(photo, 'image', 'image/png') })) as Action[]);
    const size = webpSize(webp);
    expect(Math.max(size.width, size.height)).to.equal(512);
    expect(size.width / size.height).to.be.closeTo(1.5, 0.01);
    expect(webp.length).to.be.at.most(100 * 1024);
  });

  it('replying .sticker to a noisy tall photo still fits 100 KB, 512 px high', async () => {
    await start();
    const quoted = { id: 'm1', senderId: '6281200000009', text: '', fromBot: false, media: mediaOf(noisy, 'image', 'image/jpeg') };
    const webp = await stickerOf((await t!.transport.push({ text: '.sticker', quoted })) as Action[]);
    const size = webpSize(webp);
    expect(size.height).to.equal(512);
    expect(webp.length).to.be.at.most(100 * 1024);
  });

  it('.sticker on a video makes an animated WebP of at most 6 seconds, 512 px wide, under 500 KB', async () => {
    await start();
    const webp = await stickerOf((await t!.transport.push({ text: '.sticker', media: mediaOf(clip, 'video', 'video/mp4') })) as Action[]);
    const size = webpSize(webp);
    expect(size.animated).to.equal(true);
    expect(size.width).to.equal(512);
    expect(webp.length).to.be.at.most(500 * 1024);
    // Frames (ANMF chunks) × their duration: no more than 6 seconds of the 9-second clip.
    let ms = 0;
    for (let at = webp.indexOf('ANMF'); at !== -1; at = webp.indexOf('ANMF', at + 4)) ms += webp.readUIntLE(at + 8 + 12, 3);
    expect(ms).to.be.greaterThan(4000).and.at.most(6000);
  });

  it('refuses a script posing as an image in words, and .sticker with nothing to use gets a hint', async () => {
    await start();
    const fake = Buffer.from('#!/bin/sh\nrm -rf /\n');
    const actions = (await t!.transport.push({ text: '.sticker', media: mediaOf(fake, 'image', 'image/png') })) as Action[];
    expect(actions.filter((a) => a.type === 'media')).to.have.length(0);
    expect(actions.find((a) => a.type === 'text')?.text).to.match(/could not make a sticker/);
    const hint = (await t!.transport.push({ text: '.sticker' })) as Action[];
    expect(hint.find((a) => a.type === 'text')?.text).to.match(/as the caption of an image or a short video/);
  });

  it('.sticker replying to a photo deleted for everyone says so and makes nothing, though WhatsApp still serves it through the quote', async () => {
    await start();
    const ANA = '10000000001@s.whatsapp.net';
    await t!.transport.push({ text: '', media: mediaOf(photo, 'image', 'image/png'), id: 'gone-photo' });
    await t!.transport.revoke(ANA, 'gone-photo', { ids: [ANA] });
    const actions = (await t!.transport.push({ text: '.sticker', quoted: { id: 'gone-photo', senderId: ANA, text: '', fromBot: false, media: mediaOf(photo, 'image', 'image/png') } })) as Action[];
    expect(actions.filter((a) => a.type === 'media')).to.have.length(0);
    expect(actions.find((a) => a.type === 'text')?.text).to.equal('That photo was deleted for everyone, so I no longer have it.');
  });

  it('on the console, `:image <file> .sticker` prints bot [sticker] <path> of the WebP', async () => {
    const cwd = await tempDir('wabot-sticker-console-');
    try {
      await writeConfig(cwd, { plugins: { sticker: { enabled: true } } });
      const chat = await runConsoleChat(`:image ${path.join(dir, 'photo.png')} .sticker\n`, { cwd, env: { API_KEY: 'k-123456', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm' } });
      const line = chat.lines.find((l) => l.startsWith('bot [sticker] '));
      expect(line, chat.stdout + chat.stderr).to.be.a('string');
      expect(Math.max(...Object.values(webpSize(await readFile(line!.slice('bot [sticker] '.length)))).filter((v) => typeof v === 'number'))).to.equal(512);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });
});
