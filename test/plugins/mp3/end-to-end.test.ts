import { expect } from 'chai';
import { copyFile, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { createMp3Plugin } from '../../../plugins/mp3/index.js';
import type { BotAction } from '../../../core/adapters/memory/memory-transport.js';
import { writeFakeYtdlp } from '../../fakes/fake-ytdlp.js';
import { MediaServer } from '../../fakes/media-server.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { runConsoleChat } from '../../helpers/console-chat.js';
import { inspectFile, makeSample } from './media-samples.js';

const sentMedia = (actions: BotAction[]) => actions.filter((a): a is Extract<BotAction, { type: 'media' }> => a.type === 'media');
const lastWords = (actions: BotAction[]) => actions.filter((a) => a.type === 'text' || a.type === 'edit').map((a) => (a as { text: string }).text).at(-1);

/** True when the bytes start like an MP3 (ID3 tag or an MPEG audio frame). */
function looksLikeMp3(bytes: Buffer): boolean {
  return bytes.subarray(0, 3).toString('latin1') === 'ID3' || (bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0);
}

describe('mp3 end to end', function () {
  this.timeout(120_000);
  let samples: string;
  let clip: string;

  before(async () => {
    samples = await tempDir('mp3-e2e-');
    clip = await makeSample(samples, 'video', 2);
  });
  after(async () => rm(samples, { recursive: true, force: true }));

  describe('real yt-dlp through its generic extractor, from a local web server', () => {
    let server: MediaServer;
    let t: TestBot;
    before(async () => {
      server = await MediaServer.start({ '/clip.mp4': { file: clip, type: 'video/mp4' } });
      t = await startTestBot([createMp3Plugin()], { env: { MP3_ALLOW_PRIVATE_HOSTS: 'true' }, config: { plugins: { mp3: { progressIntervalMs: 0 } } } });
    });
    after(async () => {
      await t.stop();
      await server.close();
    });

    it('downloads a video with .dl and its sound with .mp3 (or says why it cannot)', async () => {
      const ytdlp = t.app.capabilities.status('ytdlp');
      const python = t.app.capabilities.status('python');
      const dl = await t.transport.push({ text: `.dl ${server.url}/clip.mp4` });
      if (!ytdlp.ok || !python.ok) {
        // No yt-dlp on this machine (CI must install the Debian package yt-dlp): the refusal path.
        expect(lastWords(dl)).to.match(/^Downloading from links is unavailable here: /);
        expect(server.hits).to.deep.equal([]);
        return;
      }
      const [video] = sentMedia(dl);
      expect(video?.media.kind, lastWords(dl)).to.equal('video');
      const got = await inspectFile(video!.media.path);
      expect(got.hasVideo).to.equal(true);
      expect(got.seconds).to.be.within(1.5, 2.6);
      const mp3 = await t.transport.push({ text: `.mp3 ${server.url}/clip.mp4` });
      const [audio] = sentMedia(mp3);
      expect(audio?.media.kind, lastWords(mp3)).to.equal('audio');
      expect((await inspectFile(audio!.media.path)).format).to.equal('mp3');
      expect(server.hits.some((h) => h.endsWith(' /clip.mp4'))).to.equal(true);
    });

    it('a missing file on the server gets a clear reply', async function () {
      // Needs the real yt-dlp (Debian package, installed by .ci/run); the no-yt-dlp refusal has its own test.
      if (!t.app.capabilities.status('ytdlp').ok) this.skip();
      const actions = await t.transport.push({ text: `.dl ${server.url}/gone.mp4` });
      expect(sentMedia(actions)).to.have.length(0);
      expect(lastWords(actions)).to.equal("That 127.0.0.1 link points to nothing I can download (it may have been removed).");
    });
  });

  describe('console', () => {
    let dir: string;
    let fakeDir: string;
    before(async () => {
      dir = await tempDir('mp3-console-');
      fakeDir = await tempDir('mp3-console-fake-');
      await writeFakeYtdlp(fakeDir, clip);
      await copyFile(clip, path.join(dir, 'clip.mp4'));
      await writeConfig(dir, { plugins: { mp3: {} } });
    });
    after(async () => {
      await rm(dir, { recursive: true, force: true });
      await rm(fakeDir, { recursive: true, force: true });
    });

    it(':video clip.mp4 .mp3 prints bot [audio] <path> of a real MP3; a link download prints only status and result', async () => {
      const run = await runConsoleChat(':video clip.mp4 .mp3\n.mp3 http://127.0.0.1:9/ok\n', {
        cwd: dir,
        env: { YTDLP_PATH: path.join(fakeDir, 'yt-dlp'), MP3_ALLOW_PRIVATE_HOSTS: 'true', API_KEY: 'test-key-123456', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm', LOG_LEVEL: 'warn' },
      });
      expect(run.code, run.stderr).to.equal(0);
      const audioLines = run.lines.filter((l) => l.startsWith('bot [audio] '));
      expect(audioLines, run.stdout).to.have.length(2);
      for (const line of audioLines) {
        const file = line.slice('bot [audio] '.length);
        expect(path.dirname(file)).to.equal(path.join(dir, 'data', 'generated'));
        expect(looksLikeMp3(await readFile(file))).to.equal(true);
        expect((await inspectFile(file)).format).to.equal('mp3');
      }
      // The console cannot edit: one status line per job, then the file; no progress spam.
      expect(run.lines).to.deep.equal(['bot> Converting to MP3…', audioLines[0], 'bot> Looking at the 127.0.0.1 link…', audioLines[1]]);
    });
  });
});
