import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import visionPlugin from '../../../plugins/vision/index.js';
import { soundWindows } from '../../../plugins/vision/video-sound.js';
import { FakeAnthropicGateway, imageOf } from '../../fakes/anthropic-messages.js';
import { FakeAudio, startTestBot, type TestBot } from '../../../app/testing/index.js';
import type { IncomingMedia } from '../../../core/kernel/port/message.js';
import { tempDir } from '../../helpers/checkout.js';
import { testFfmpeg } from '../voice/audio-files.js';

const ALICE = '62811111111@s.whatsapp.net';

/** A real MP4 of `seconds` (a test picture), with a tone as its sound or none. */
async function makeVideo(dir: string, name: string, seconds: number, sound: boolean): Promise<Buffer> {
  const file = `${dir}/${name}`;
  const audio = sound ? ['-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}`] : [];
  execFileSync(testFfmpeg(), ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', `testsrc=s=160x120:d=${seconds}:r=5`, ...audio, '-pix_fmt', 'yuv420p', ...(sound ? ['-c:a', 'aac', '-shortest'] : ['-an']), file]);
  return readFile(file);
}

function video(bytes: Buffer, seconds: number): IncomingMedia {
  return { kind: 'video', mimetype: 'video/mp4', size: bytes.length, seconds, download: async () => bytes };
}

/** Seconds of audio in `bytes`, as a real ffprobe (outside the bot) reads them. */
async function secondsOf(dir: string, bytes: Buffer): Promise<number> {
  const file = `${dir}/probe-${Date.now()}.ogg`;
  await writeFile(file, bytes);
  return Number(execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file], { encoding: 'utf8' }).trim());
}

/** Videos heard as well as seen (issue 54): the sound track transcribed beside the frames. */
describe('vision: a video\'s sound', function () {
  this.timeout(60_000);
  let gateway: FakeAnthropicGateway;
  let audio: FakeAudio;
  let t: TestBot | undefined;
  let dir: string;

  before(async () => {
    dir = await tempDir('video-sound-');
  });
  beforeEach(async () => {
    gateway = await FakeAnthropicGateway.start('gw');
    audio = await FakeAudio.start(() => 'he says the bridge opens at nine');
  });
  afterEach(async () => {
    await t?.stop();
    t = undefined;
    await Promise.all([gateway.close(), audio.close()]);
  });

  async function start(options: Record<string, unknown> = {}): Promise<TestBot> {
    t = await startTestBot(visionPlugin, { audio, options, env: { API_KEY: 'gw-key', BASE_URL: gateway.url, MODEL: 'gw-model' } });
    return t;
  }

  it('"what does he say?" about a video: its sound is transcribed in the jail and the words are in the answer, beside the frames', async () => {
    await start();
    const clip = await makeVideo(dir, 'talk.mp4', 3, true);
    const [answer] = await t!.send({ senderId: ALICE, text: 'what does he say in this clip?', media: video(clip, 3) });
    expect(answer).to.match(/^gw sees: what does he say in this clip\?/);
    expect(answer).to.contain('he says the bridge opens at nine');
    const [upload] = audio.uploads;
    expect(upload.fileType).to.equal('audio/ogg');
    expect(await secondsOf(dir, upload.bytes)).to.be.within(2.5, 3.5);
    // The words are framed as content the video brought, beside 4 frames.
    const asked = imageOf(gateway.messages()[0]);
    expect(asked.question).to.contain("[Content: the transcript of the video's sound, from the video");
  });

  it('a video without sound says so, and nothing is sent to the audio provider', async () => {
    await start();
    const silent = await makeVideo(dir, 'silent.mp4', 2, false);
    const [answer] = await t!.send({ senderId: ALICE, text: 'what is said here?', media: video(silent, 2) });
    expect(answer).to.match(/^_\(This video has no sound\.\)_\n\ngw sees: what is said here\?/);
    expect(answer).to.contain('The video has no sound track');
    expect(audio.uploads).to.have.length(0);
  });

  it('a long video is heard within the budget: four windows spread over it, no more seconds than videoSoundSeconds', async () => {
    await start({ videoSoundSeconds: 8 });
    const long = await makeVideo(dir, 'long.mp4', 20, true);
    const [answer] = await t!.send({ senderId: ALICE, text: 'summarise', media: video(long, 20) });
    expect(answer).to.contain('four stretches spread over it');
    expect(await secondsOf(dir, audio.uploads[0].bytes)).to.be.within(7, 9);
    expect(soundWindows(20, 8)).to.deep.equal([[0, 2], [6, 8], [12, 14], [18, 20]]);
    expect(soundWindows(5, 8)).to.deep.equal([[0, 8]]);
  });
});
