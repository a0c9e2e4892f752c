import { expect } from 'chai';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createMp3Plugin } from '../../../plugins/mp3/index.js';
import type { IncomingMedia } from '../../../core/kernel/port/message.js';
import type { BotAction } from '../../../core/adapters/memory/memory-transport.js';
import { fakeYtdlpCalls, recordFakeYtdlpCalls, writeFakeYtdlp } from '../../fakes/fake-ytdlp.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { tempDir } from '../../helpers/checkout.js';
import { inspectFile, makeSample } from './media-samples.js';

const USER = '10000000001@s.whatsapp.net';

function mediaOf(file: string, kind: IncomingMedia['kind'], mimetype: string, extra: Partial<IncomingMedia> = {}): IncomingMedia {
  return { kind, mimetype, fileName: path.basename(file), download: () => readFile(file), ...extra };
}

/** Files (recursively, including hidden job folders) under a folder; [] when it does not exist. */
async function filesUnder(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true, recursive: true });
    return entries.filter((e) => !e.isDirectory()).map((e) => path.join(e.parentPath, e.name));
  } catch {
    return [];
  }
}
async function entriesIn(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}

const texts = (actions: BotAction[]) => actions.filter((a) => a.type === 'text').map((a) => (a as { text: string }).text);
const edits = (actions: BotAction[]) => actions.filter((a) => a.type === 'edit').map((a) => (a as { text: string }).text);
const sentMedia = (actions: BotAction[]) => actions.filter((a): a is Extract<BotAction, { type: 'media' }> => a.type === 'media');

describe('mp3 plugin', function () {
  this.timeout(60_000);
  let samples: string;
  let video: string;
  let voice: string;
  let silent: string;
  let fakeDir: string;
  let fakeBin: string;

  before(async () => {
    samples = await tempDir('mp3-samples-');
    [video, voice, silent] = await Promise.all([makeSample(samples, 'video', 2), makeSample(samples, 'voice', 2), makeSample(samples, 'silent-video', 1)]);
    fakeDir = await tempDir('mp3-fake-ytdlp-');
    fakeBin = await writeFakeYtdlp(fakeDir, video);
  });
  after(async () => {
    await rm(samples, { recursive: true, force: true });
    await rm(fakeDir, { recursive: true, force: true });
  });

  async function start(options: Record<string, unknown> = {}, config: Record<string, unknown> = {}): Promise<TestBot> {
    await rm(path.join(fakeDir, 'calls.log'), { force: true });
    // Executable paths and the guard switch are environment settings (never config.json).
    const { ytdlpPath, allowPrivateHosts, ...rest } = options as { ytdlpPath?: string; allowPrivateHosts?: boolean };
    const env: Record<string, string> = { YTDLP_PATH: ytdlpPath ?? fakeBin, ...(allowPrivateHosts ? { MP3_ALLOW_PRIVATE_HOSTS: 'true' } : {}) };
    const t = await startTestBot([createMp3Plugin()], { env, config: { ...config, plugins: { mp3: { progressIntervalMs: 0, ...rest } } } });
    recordFakeYtdlpCalls(t.app.bot.jail, fakeDir);
    return t;
  }

  describe('.mp3 on media', () => {
    let t: TestBot;
    afterEach(async () => t?.stop());

    it('converts a replied video to a real MP3, shows progress in one status message, and keeps the files in data/', async () => {
      t = await start();
      const actions = await t.transport.push({ text: '.mp3', quoted: { id: 'q1', senderId: USER, text: '', fromBot: false, media: mediaOf(video, 'video', 'video/mp4') } });
      expect(texts(actions)).to.deep.equal(['Converting to MP3…']);
      expect(edits(actions).at(-1)).to.equal('Converted to MP3 ✓');
      const [audio] = sentMedia(actions);
      expect(audio?.media).to.include({ kind: 'audio', mimetype: 'audio/mpeg', fileName: 'video.mp3' });
      expect(path.dirname(audio!.media.path)).to.equal(path.join(t.dir, 'data', 'generated'));
      const info = await inspectFile(audio!.media.path);
      expect(info.format).to.equal('mp3');
      expect(info.seconds).to.be.within(1.5, 2.6);
      expect(info.hasVideo).to.equal(false);
      expect(await entriesIn(path.join(t.dir, 'data', 'media'))).to.have.length(1);
      expect((await entriesIn(path.join(t.dir, 'data', 'generated'))).filter((n) => n.startsWith('.job-'))).to.deep.equal([]);
    });

    it('.mp3 replying to a video deleted for everyone says so and converts nothing, though WhatsApp still serves it through the quote', async () => {
      t = await start();
      await t.transport.push({ text: '', media: mediaOf(video, 'video', 'video/mp4'), id: 'gone-video' });
      await t.transport.revoke(USER, 'gone-video', { ids: [USER] });
      const actions = await t.transport.push({ text: '.mp3', quoted: { id: 'gone-video', senderId: USER, text: '', fromBot: false, media: mediaOf(video, 'video', 'video/mp4') } });
      expect(texts(actions)).to.deep.equal(['That video was deleted for everyone, so I no longer have it.']);
      expect(sentMedia(actions)).to.have.length(0);
    });

    it('converts a voice note sent with the caption .mp3, named by the words after the command', async () => {
      t = await start();
      const actions = await t.transport.push({ text: '.mp3 my tune', media: mediaOf(voice, 'voice', 'audio/ogg; codecs=opus') });
      const [audio] = sentMedia(actions);
      expect(audio?.media.fileName).to.equal('my tune.mp3');
      expect((await inspectFile(audio!.media.path)).format).to.equal('mp3');
    });

    it('answers a file ffmpeg cannot read clearly and leaves no files behind', async () => {
      t = await start();
      const junk = path.join(samples, 'broken.mp4');
      await writeFile(junk, Buffer.from('definitely not a video '.repeat(100)));
      const actions = await t.transport.push({ text: '.mp3', quoted: { id: 'q2', senderId: USER, text: '', fromBot: false, media: mediaOf(junk, 'document', 'video/mp4') } });
      expect(sentMedia(actions)).to.have.length(0);
      expect(edits(actions).at(-1)).to.match(/can't read that file as audio or video/);
      expect(await filesUnder(path.join(t.dir, 'data', 'media'))).to.deep.equal([]);
      expect(await filesUnder(path.join(t.dir, 'data', 'generated'))).to.deep.equal([]);
      expect(await entriesIn(path.join(t.dir, 'data', 'generated'))).to.deep.equal([]);
    });

    it('says a video without sound has nothing to convert, and keeps nothing', async () => {
      t = await start();
      const actions = await t.transport.push({ text: '.mp3', quoted: { id: 'q3', senderId: USER, text: '', fromBot: false, media: mediaOf(silent, 'video', 'video/mp4') } });
      expect(edits(actions).at(-1)).to.match(/no sound/);
      expect(await filesUnder(path.join(t.dir, 'data'))).to.satisfy((files: string[]) => files.every((f) => !/[\\/](media|generated)[\\/]/.test(f)));
    });

    it('refuses a 3-hour recording up front without downloading it', async () => {
      t = await start();
      let downloaded = false;
      const media = mediaOf(video, 'video', 'video/mp4', { seconds: 10800, download: async () => ((downloaded = true), Buffer.alloc(0)) });
      const actions = await t.transport.push({ text: '.mp3', quoted: { id: 'q4', senderId: USER, text: '', fromBot: false, media } });
      expect(texts(actions)).to.deep.equal(['That recording is 3 h 0 min long; I only handle up to 1 h 0 min.']);
      expect(downloaded).to.equal(false);
    });

    it('refuses an image, and explains usage when there is nothing to convert', async () => {
      t = await start();
      const image = await t.transport.push({ text: '.mp3', quoted: { id: 'q5', senderId: USER, text: '', fromBot: false, media: mediaOf(video, 'image', 'image/jpeg') } });
      expect(texts(image)[0]).to.match(/That is an image: \.mp3 needs a video, voice note, audio/);
      const usage = await t.transport.push({ text: '.mp3' });
      expect(texts(usage)[0]).to.include('.mp3 <link>').and.include('.dl <link>').and.include('Reply .mp3 to a video');
    });

    it('sends only the status and the result where messages cannot be edited', async () => {
      t = await start();
      t.transport.canEdit = false;
      const ok = await t.transport.push({ text: '.mp3', quoted: { id: 'q6', senderId: USER, text: '', fromBot: false, media: mediaOf(voice, 'voice', 'audio/ogg') } });
      expect(ok.map((a) => a.type)).to.deep.equal(['text', 'media']);
      const junk = path.join(samples, 'junk.ogg');
      await writeFile(junk, 'nope');
      const bad = await t.transport.push({ text: '.mp3', quoted: { id: 'q7', senderId: USER, text: '', fromBot: false, media: mediaOf(junk, 'audio', 'audio/ogg') } });
      expect(bad.map((a) => a.type)).to.deep.equal(['text', 'text']);
      expect(texts(bad)[1]).to.match(/can't read that file/);
    });

    it('refuses a second job of the same user while the first runs, and frees the slot afterwards', async () => {
      t = await start({}, { groups: { commandsWithoutMention: true } });
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const slow = mediaOf(voice, 'voice', 'audio/ogg', { download: async () => (await gate, readFile(voice)) });
      const first = t.transport.push({ text: '.mp3', quoted: { id: 'q8', senderId: USER, text: '', fromBot: false, media: slow } });
      // The same user in another chat (a group): different chat queue, same user.
      const group = 'friends@g.us';
      while (!t.transport.texts().includes('Converting to MP3…')) await new Promise((r) => setImmediate(r));
      const second = await t.transport.push({ chatId: group, isGroup: true, mentions: [], text: '.mp3', quoted: { id: 'q9', senderId: USER, text: '', fromBot: false, media: mediaOf(voice, 'voice', 'audio/ogg') } });
      release();
      await first;
      expect(texts(second).join(' ')).to.match(/already have a download or conversion running/);
      const third = await t.transport.push({ text: '.mp3', quoted: { id: 'q10', senderId: USER, text: '', fromBot: false, media: mediaOf(voice, 'voice', 'audio/ogg') } });
      expect(sentMedia(third)).to.have.length(1);
    });
  });

  describe('links (fake yt-dlp)', () => {
    let t: TestBot;
    afterEach(async () => t?.stop());

    it('refuses loopback, private and non-http links before anything runs', async () => {
      t = await start();
      const refused = [
        ['.mp3 http://127.0.0.1:8080/video', /local or private network address/],
        ['.dl http://10.1.2.3/clip', /local or private network address/],
        ['.dl http://localhost:3000/', /local or private network address/],
        ['.mp3 http://[::1]/x', /local or private network address/],
        ['.mp3 http://[::ffff:127.0.0.1]/x', /local or private network address/],
        ['.dl http://169.254.169.254/latest/meta-data/', /local or private network address/],
        ['.dl file:///etc/passwd', /only fetch http and https/],
        ['.mp3 hello there', /"hello" is not a link/],
      ] as const;
      for (const [text, reply] of refused) {
        const actions = await t.transport.push({ text });
        expect(texts(actions), text).to.have.length(1);
        expect(texts(actions)[0], text).to.match(reply);
      }
      const calls = await fakeYtdlpCalls(fakeDir);
      expect(calls.filter((c) => !c.includes('--version'))).to.deep.equal([]);
      expect(await entriesIn(path.join(t.dir, 'data', 'generated'))).to.deep.equal([]);
    });

    it('downloads a link as MP3 with progress edits in one status message', async () => {
      t = await start({ allowPrivateHosts: true });
      const actions = await t.transport.push({ text: '.mp3 http://127.0.0.1:9/ok' });
      expect(texts(actions)).to.deep.equal(['Looking at the 127.0.0.1 link…']);
      const progress = edits(actions);
      expect(progress).to.include('Downloading… 50%');
      expect(progress.some((e) => /^Converting to MP3… \d+%$/.test(e))).to.equal(true);
      expect(progress.at(-1)).to.equal('Done ✓ Fake clip');
      const [audio] = sentMedia(actions);
      expect(audio?.media).to.include({ kind: 'audio', fileName: 'Fake clip.mp3' });
      expect((await inspectFile(audio!.media.path)).format).to.equal('mp3');
      expect((await entriesIn(path.join(t.dir, 'data', 'generated'))).filter((n) => n.startsWith('.'))).to.deep.equal([]);
    });

    it('.dl sends the video itself', async () => {
      t = await start({ allowPrivateHosts: true });
      const actions = await t.transport.push({ text: '.dl http://127.0.0.1:9/ok' });
      const [clip] = sentMedia(actions);
      expect(clip?.media).to.include({ kind: 'video', mimetype: 'video/mp4' });
      expect((await inspectFile(clip!.media.path)).hasVideo).to.equal(true);
    });

    it('refuses a 3-hour video up front: nothing is downloaded', async () => {
      t = await start({ allowPrivateHosts: true });
      const actions = await t.transport.push({ text: '.mp3 http://127.0.0.1:9/long' });
      expect(edits(actions).at(-1)).to.equal('That video is 3 h 0 min long; I only handle up to 1 h 0 min.');
      const calls = await fakeYtdlpCalls(fakeDir);
      expect(calls.some((c) => c.includes('-J'))).to.equal(true);
      expect(calls.some((c) => c.includes('--load-info-json'))).to.equal(false);
      expect(sentMedia(actions)).to.have.length(0);
      expect(await entriesIn(path.join(t.dir, 'data', 'generated'))).to.deep.equal([]);
    });

    it('explains unsupported sites, private posts, huge files and playlists', async () => {
      t = await start({ allowPrivateHosts: true });
      const cases = [
        ['unsupported', /does not support that site/],
        ['private', /private or needs a login/],
        ['huge', /is 10240 MB; I only fetch up to 200 MB/],
        ['playlist', /playlist/],
      ] as const;
      for (const [kind, reply] of cases) {
        const actions = await t.transport.push({ text: `.dl http://127.0.0.1:9/${kind}` });
        expect(edits(actions).at(-1), kind).to.match(reply);
      }
    });

    it('a download that fails half-way gets a clear reply and leaves no files', async () => {
      t = await start({ allowPrivateHosts: true });
      const actions = await t.transport.push({ text: '.mp3 http://127.0.0.1:9/broken' });
      expect(edits(actions).at(-1)).to.equal('The download from 127.0.0.1 failed: unable to download video data: HTTP Error 403: Forbidden');
      expect(await filesUnder(path.join(t.dir, 'data', 'generated'))).to.deep.equal([]);
      expect(await entriesIn(path.join(t.dir, 'data', 'generated'))).to.deep.equal([]);
      const garbage = await t.transport.push({ text: '.dl http://127.0.0.1:9/garbage' });
      expect(edits(garbage).at(-1)).to.match(/not audio or video I can read/);
      expect(await entriesIn(path.join(t.dir, 'data', 'generated'))).to.deep.equal([]);
    });

    it('without yt-dlp, downloads say why they are unavailable while .mp3 on media still works', async () => {
      t = await start({ ytdlpPath: path.join(fakeDir, 'no-such-yt-dlp') });
      const dl = await t.transport.push({ text: '.dl https://youtu.be/abc' });
      expect(texts(dl)[0]).to.match(/^Downloading from links is unavailable here: .*no-such-yt-dlp.*does not run/);
      const mp3Link = await t.transport.push({ text: '.mp3 https://youtu.be/abc' });
      expect(texts(mp3Link)[0]).to.include('Replying .mp3 to a video, voice note or audio still works');
      const media = await t.transport.push({ text: '.mp3', quoted: { id: 'q11', senderId: USER, text: '', fromBot: false, media: mediaOf(voice, 'voice', 'audio/ogg') } });
      expect(sentMedia(media)).to.have.length(1);
      expect(t.logs().some((l) => typeof l.msg === 'string' && /✘ ytdlp .*no-such-yt-dlp/.test(l.msg))).to.equal(true);
    });
  });
});

