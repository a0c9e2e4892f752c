import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { chmod, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import sinon from 'sinon';
import { ffmpegBinary } from '../../../core/kernel/capabilities/detect.js';
import { Jail } from '../../../core/services/jail/jail.js';
import { assertPixelBudget, inputArgs, MediaRefused, pinFormat } from '../../../core/services/media/index.js';
import type { IncomingMedia } from '../../../core/kernel/port/message.js';
import type { BotAction } from '../../../core/adapters/memory/memory-transport.js';
import { createMp3Plugin } from '../../../plugins/mp3/index.js';
import visionPlugin from '../../../plugins/vision/index.js';
import { prepareImage } from '../../../plugins/vision/prepare-image.js';
import { createVoicePlugin } from '../../../plugins/voice/index.js';
import { FakeAnthropicGateway } from '../../fakes/anthropic-messages.js';
import { FakeGateway } from '../../fakes/openai-gateway.js';
import { FakeAudio, startTestBot, type TestBot } from '../../../app/testing/index.js';
import { tempDir } from '../../helpers/checkout.js';
import { makeSample } from '../../plugins/mp3/media-samples.js';
import { makeImage } from '../../plugins/vision/images.js';

const ALICE = '62811111111@s.whatsapp.net';
const MALLORY = '62833333333@s.whatsapp.net';
const FFMPEG = ffmpegBinary({ ffmpegPath: '' }).path;

const texts = (actions: BotAction[]) => actions.filter((a): a is Extract<BotAction, { type: 'text' | 'edit' }> => a.type === 'text' || a.type === 'edit').map((a) => a.text);
const sentMedia = (actions: BotAction[]) => actions.filter((a) => a.type === 'media');
const bytesMedia = (bytes: Buffer, kind: IncomingMedia['kind'], mimetype: string): IncomingMedia => ({ kind, mimetype, size: bytes.length, download: async () => bytes });

/** An HLS playlist whose only segment is another file on this machine. */
const hlsPlaylist = (target: string) => Buffer.from(`#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\n#EXTINF:10.0,\nfile://${target}\n#EXT-X-ENDLIST\n`);

/** A PNG: signature, IHDR declaring width × height, one IDAT of `idatBytes` zero bytes (compressed), IEND. */
function craftedPng(width: number, height: number, idatBytes = 0): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(8 + data.length + 4);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), 8 + data.length);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  // Random-looking (incompressible) filler keeps the file over the byte limit so it would go to ffmpeg.
  const filler = Buffer.from(Array.from({ length: idatBytes }, (_, i) => (i * 2654435761) >>> 24));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(filler, { level: 0 })), chunk('IEND', Buffer.alloc(0))]);
}

describe('untrusted media is decoded only as what it claims to be', function () {
  this.timeout(60_000);
  let dir: string;

  before(async () => {
    dir = await tempDir('media-attack-');
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  describe('the format allow-list (core/media)', () => {
    it('pins the demuxer of real audio, video and pictures from their bytes', async () => {
      const video = await readFile(await makeSample(dir, 'video', 1));
      const voice = await readFile(await makeSample(dir, 'voice', 1));
      expect(await pinFormat(video, 'sound')).to.include({ demuxer: 'mov' });
      expect(await pinFormat(voice, 'sound')).to.include({ demuxer: 'ogg' });
      const png = await readFile(await makeImage(dir, 'tiny.png', 'color=c=red:s=16x16'));
      const jpg = await readFile(await makeImage(dir, 'tiny.jpg', 'color=c=red:s=16x16'));
      expect(await pinFormat(png, 'image')).to.include({ demuxer: 'png_pipe' });
      expect(await pinFormat(jpg, 'image')).to.include({ demuxer: 'jpeg_pipe' });
      expect(inputArgs({ container: 'ogg', demuxer: 'ogg' })).to.deep.equal(['-protocol_whitelist', 'file,pipe', '-f', 'ogg']);
    });

    it('refuses playlists, concat lists, SDP, text, and a picture sent as sound (and sound as a picture)', async () => {
      const png = await readFile(await makeImage(dir, 'other.png', 'color=c=blue:s=16x16'));
      const voice = await readFile(await makeSample(dir, 'voice', 1));
      const hostile: Array<[string, Buffer, 'sound' | 'image']> = [
        ['HLS', hlsPlaylist('/etc/hostname'), 'sound'],
        ['ffconcat', Buffer.from("ffconcat version 1.0\nfile '/etc/hostname'\n"), 'sound'],
        ['concat', Buffer.from("file '/etc/hostname'\n"), 'sound'],
        ['SDP', Buffer.from('v=0\no=- 0 0 IN IP4 127.0.0.1\ns=x\nc=IN IP4 127.0.0.1\nt=0 0\nm=audio 5004 RTP/AVP 0\n'), 'sound'],
        ['text', Buffer.from('hello there, just words'), 'sound'],
        ['png as sound', png, 'sound'],
        ['ogg as image', voice, 'image'],
        ['HLS as image', hlsPlaylist('/etc/hostname'), 'image'],
      ];
      for (const [name, bytes, family] of hostile) {
        let refused: unknown;
        await pinFormat(bytes, family).catch((err) => (refused = err));
        expect(refused, name).to.be.instanceOf(MediaRefused);
      }
    });
  });

  describe('an HLS playlist pointing at another chat\'s archived voice note', () => {
    let audio: FakeAudio;
    let gw: FakeGateway;
    let t: TestBot;
    let secret: string;

    before(async () => {
      audio = await FakeAudio.start(() => 'the secret plan is on tuesday');
      gw = await FakeGateway.start('gw');
      t = await startTestBot([createVoicePlugin({ random: () => 0.99 }), createMp3Plugin()], {
        env: { API_KEY: 'gateway-key-123456', BASE_URL: gw.url, MODEL: 'm', AUDIO_BASE_URL: `${audio.url}/v1/`, AUDIO_API_KEYS: 'audio-key-1111111' },
        config: { plugins: { mp3: { progressIntervalMs: 0 } } },
      });
      // Alice's private voice note lands in her chat's archive.
      await t.transport.push({ senderId: ALICE, media: bytesMedia(await readFile(await makeSample(dir, 'voice', 2)), 'voice', 'audio/ogg; codecs=opus') });
      const archived = (await readdir(path.join(t.dir, 'data', 'audio_archive'), { recursive: true })).filter((f) => /\.(ogg|opus|oga)$/.test(f));
      expect(archived).to.have.length(1);
      secret = path.join(t.dir, 'data', 'audio_archive', archived[0]!);
      expect((await stat(secret)).size).to.be.greaterThan(0);
    });
    after(async () => {
      await t?.stop();
      await audio.close();
      await gw.close();
    });

    it('is really a working attack on an unpinned ffmpeg (the test is not vacuous)', async () => {
      const playlist = path.join(dir, 'attack.mp4');
      await writeFile(playlist, hlsPlaylist(secret));
      const out = path.join(dir, 'stolen.mp3');
      try {
        execFileSync(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', '-i', playlist, '-vn', out], { stdio: 'ignore' });
      } catch {
        /* a build without the hls demuxer cannot be attacked this way */
      }
      const stolen = await stat(out).catch(() => undefined);
      expect(stolen?.size ?? 0, 'ffmpeg without -f follows the playlist').to.be.greaterThan(0);
      // The same file with the pinned options opens nothing.
      expect(() => execFileSync(FFMPEG, ['-hide_banner', '-nostdin', ...inputArgs({ container: 'mp4', demuxer: 'mov' }), '-i', playlist, '-f', 'null', '-'], { stdio: 'ignore' })).to.throw();
    });

    for (const [kind, mimetype] of [['video', 'video/mp4'], ['audio', 'audio/mpeg'], ['voice', 'audio/ogg; codecs=opus']] as const) {
      it(`.mp3 on it sent as ${kind} in another chat is refused and sends nothing`, async () => {
        const uploads = audio.uploads.length;
        const actions = await t.transport.push({ senderId: MALLORY, text: '.mp3', quoted: { id: `q-${kind}`, senderId: MALLORY, text: '', fromBot: false, media: bytesMedia(hlsPlaylist(secret), kind, mimetype) } });
        expect(sentMedia(actions)).to.deep.equal([]);
        expect(texts(actions).at(-1)).to.match(/can't read that file as audio or video: I only open the usual formats/);
        // Quoting voice media with .mp3 must not be heard either.
        expect(audio.uploads.length).to.equal(uploads);
      });
    }

    for (const kind of ['voice', 'audio'] as const) {
      it(`sent as ${kind === "voice" ? "a voice note" : "an audio file"} to the bot, it is refused and the transcription service receives nothing`, async () => {
        const uploads = audio.uploads.length;
        const chats = gw.chats().length;
        const actions = await t.transport.push({ senderId: MALLORY, media: bytesMedia(hlsPlaylist(secret), kind, 'audio/ogg; codecs=opus') });
        expect(audio.uploads.length).to.equal(uploads);
        expect(gw.chats().length).to.equal(chats);
        expect(texts(actions).join('\n')).to.match(/could not read that audio file: it is not in a format I open/);
        expect(texts(actions).join('\n')).to.not.include('secret plan');
      });
    }
  });

  describe('the image pixel budget', () => {
    let primary: FakeAnthropicGateway;
    let t: TestBot | undefined;
    let fakeFfmpeg: string;
    let ffmpegCalls: string;

    beforeEach(async () => {
      primary = await FakeAnthropicGateway.start('primary');
      ffmpegCalls = path.join(dir, `ffmpeg-calls-${Date.now()}.log`);
      // A stand-in ffmpeg that answers -version and records every other call (a decode would be one).
      fakeFfmpeg = path.join(dir, 'ffmpeg');
      await writeFile(fakeFfmpeg, `#!/bin/sh\nif [ "$1" = "-version" ]; then echo "ffmpeg version 9.9-recorder"; exit 0; fi\necho "$@" >> "${ffmpegCalls}"\nexec "${FFMPEG}" "$@"\n`);
      await chmod(fakeFfmpeg, 0o755);
    });
    afterEach(async () => {
      await t?.stop();
      t = undefined;
      await primary.close();
    });

    it('reads the declared size from the header of PNG, JPEG, WebP and GIF', async () => {
      for (const name of ['a.png', 'a.jpg', 'a.webp', 'a.gif']) {
        const bytes = await readFile(await makeImage(dir, name, 'color=c=red:s=120x80'));
        expect(assertPixelBudget(bytes, 40_000_000), name).to.deep.equal({ width: 120, height: 80 });
        expect(() => assertPixelBudget(bytes, 120 * 80 - 1), name).to.throw(MediaRefused, /120×80/);
      }
    });

    it('refuses a small PNG that declares 16000×16000 with a clear sentence, without running ffmpeg or asking the model', async () => {
      t = await startTestBot([visionPlugin], {
        env: { API_KEY: 'second-key-ghijkl', BASE_URL: primary.url, MODEL: 'main', FFMPEG_PATH: fakeFfmpeg },
        config: { plugins: { vision: { enabled: true, maxImageBytes: 20_000, maxDimension: 300 } } },
      });
      const bomb = craftedPng(16000, 16000, 30_000);
      expect(bomb.length).to.be.within(20_001, 40_000);
      // ffmpeg runs in the core jail, where the recorder cannot reach the host's log: the jail's runs are recorded.
      const runs = sinon.spy(t.app.bot.jail, 'run');
      const jailCalls = () => runs.getCalls().map((c) => [c.args[0].program, ...c.args[0].args].join(' ')).join('\n');
      const actions = await t.transport.push({ senderId: ALICE, text: 'what is this?', media: bytesMedia(bomb, 'image', 'image/png') });
      expect(texts(actions)).to.deep.equal(['That picture is 16000×16000 pixels (256 megapixels), more than the 40 megapixels I open. Please send a smaller picture.']);
      expect(jailCalls()).to.equal('');
      expect(primary.messages()).to.have.length(0);

      // Within the budget the same path does reach ffmpeg (the recorder works), and the budget is an option.
      const fine = await readFile(await makeImage(dir, 'fine.png', 'testsrc=s=1200x900'));
      expect(fine.length).to.be.greaterThan(20_000);
      const second = await t.transport.push({ senderId: ALICE, text: 'and this?', media: bytesMedia(fine, 'image', 'image/png') });
      expect(texts(second)).to.deep.equal(['primary sees: and this?']);
      const calls = jailCalls();
      expect(calls).to.include(fakeFfmpeg);
      expect(calls).to.include('-f png_pipe');
      expect(calls).to.include('-protocol_whitelist file,pipe');
      expect(primary.messages()).to.have.length(1);
    });

    it('uses the vision option maxPixels as the budget', async () => {
      const fine = await readFile(await makeImage(dir, 'mid.png', 'testsrc=s=1200x900'));
      let refusal: unknown;
      const jail = new Jail();
      const runs = sinon.spy(jail, 'run');
      await prepareImage(fine, { maxImageBytes: 20_000, maxDimension: 400, maxPixels: 1_000_000, ffmpeg: fakeFfmpeg, jail }).catch((err) => (refusal = err));
      expect((refusal as Error).message).to.match(/1200×900 pixels .* more than the 1\.0 megapixels/);
      expect(runs.callCount).to.equal(0);
      const ok = await prepareImage(fine, { maxImageBytes: 20_000, maxDimension: 400, maxPixels: 1_080_000, ffmpeg: fakeFfmpeg, jail });
      expect(ok.converted).to.equal(true);
      expect(runs.callCount).to.equal(1);
    });
  });

  describe('which ffmpeg opens untrusted media', () => {
    it('prefers FFMPEG_PATH, then the system ffmpeg, and uses the bundled 2018 build only when there is none', () => {
      expect(ffmpegBinary({ ffmpegPath: '/opt/ff/ffmpeg' })).to.deep.equal({ path: '/opt/ff/ffmpeg', source: 'FFMPEG_PATH' });
      // CI installs Debian's ffmpeg: it must win over the bundled one.
      expect(ffmpegBinary({ ffmpegPath: '' })).to.deep.equal({ path: '/usr/bin/ffmpeg', source: 'the system' });
      const bundled = ffmpegBinary({ ffmpegPath: '' }, ['/nonexistent/ffmpeg']);
      expect(bundled.path).to.include('@ffmpeg-installer');
      expect(bundled.source).to.match(/bundled 2018 build/);
    });

    it('names the ffmpeg in use and its version in the start log', async () => {
      const t = await startTestBot([]);
      try {
        const report = t.logs().map((l) => String(l.msg)).join('\n');
        expect(report).to.match(/ffmpeg +ffmpeg version \S+ \(\/usr\/bin\/ffmpeg\) from the system/);
      } finally {
        await t.stop();
      }
    });
  });
});
