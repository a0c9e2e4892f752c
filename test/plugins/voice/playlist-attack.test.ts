import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { IncomingMedia } from '../../../core/kernel/port/message.js';
import { FakeAudio, startTestBot, type BotAction, type TestBot } from '../../../app/testing/index.js';
import { Jail } from '../../../core/services/jail/jail.js';
import mp3Plugin from '../../../plugins/mp3/index.js';
import { createVoicePlugin } from '../../../plugins/voice/index.js';
import { tempDir } from '../../helpers/checkout.js';
import { makeTone, testFfmpeg } from './audio-files.js';

const ALICE = '62811111111@s.whatsapp.net';
const OTHER_CHAT = '62833333333@s.whatsapp.net';

const texts = (actions: BotAction[]) => actions.filter((a): a is Extract<BotAction, { type: 'text' }> => a.type === 'text').map((a) => a.text);

/** An HLS playlist whose only segment is a file:// path on the host: the bytes a hostile "voice note" carries. */
function playlistOf(file: string): Buffer {
  return Buffer.from(['#EXTM3U', '#EXT-X-VERSION:3', '#EXT-X-TARGETDURATION:5', '#EXT-X-MEDIA-SEQUENCE:0', '#EXTINF:2.0,', `file://${file}`, '#EXT-X-ENDLIST', ''].join('\n'));
}

/**
 * Issue 13, attack 1: a voice note (or a video for .mp3) whose bytes are an HLS playlist listing another chat's
 * archived audio. ffmpeg runs in the core jail, where the data folder does not exist: nothing of chat B's audio
 * is uploaded or sent back.
 */
describe('media through the jail: a playlist of file:// paths reads nothing', function () {
  this.timeout(60_000);
  let audio: FakeAudio;
  let t: TestBot;
  let secret: string;

  beforeEach(async () => {
    audio = await FakeAudio.start(() => 'the secret voice note of chat B');
    t = await startTestBot([createVoicePlugin(), mp3Plugin], { audio });
    // Another chat's archived voice note, where the archive keeps it.
    const otherDir = path.join(t.dir, 'data', 'audio_archive', OTHER_CHAT.replace(/[^\w.-]/g, '_'));
    await mkdir(otherDir, { recursive: true });
    secret = path.join(otherDir, 'secret.mp3');
    await writeFile(secret, makeTone(await tempDir('tone-'), 'secret.mp3', 2, 880));
  });
  afterEach(async () => {
    await t.stop();
    await audio.close();
  });

  it('a voice note that is a playlist of another chat\'s archive is never uploaded', async () => {
    const bytes = playlistOf(secret);
    const note: IncomingMedia = { kind: 'voice', mimetype: 'audio/ogg; codecs=opus', size: bytes.length, download: async () => bytes };
    const actions = await t.push({ senderId: ALICE, media: note });
    expect(audio.uploads, 'uploads to the audio provider').to.have.length(0);
    expect(texts(actions).join('\n')).to.match(/could not read that audio|cannot|not/i);
    expect(texts(actions).join('\n')).not.to.include('secret voice note');
  });

  it('.mp3 on a "video" that is such a playlist sends no audio back', async () => {
    const bytes = playlistOf(secret);
    const video: IncomingMedia = { kind: 'video', mimetype: 'video/mp4', size: bytes.length, download: async () => bytes };
    const actions = await t.push({ senderId: ALICE, text: '.mp3', media: video });
    expect(actions.filter((a) => a.type === 'media'), JSON.stringify(actions.map((a) => a.type))).to.have.length(0);
    const generated = path.join(t.dir, 'data', 'generated');
    const made = existsSync(generated) ? (await readdir(generated, { recursive: true })).filter((n) => String(n).endsWith('.mp3')) : [];
    expect(made, 'mp3 files made').to.have.length(0);
  });

  it('inside the jail ffmpeg cannot even see the archive: a forced HLS read of it fails, while a plain input converts', async function () {
    const jail = new Jail();
    const support = await jail.detect();
    if (!support.bwrap.ok) this.skip(); // the jail's file view needs bubblewrap (CI has it)
    const ffmpeg = testFfmpeg() === 'ffmpeg' ? '/usr/bin/ffmpeg' : testFfmpeg();
    const out = await tempDir('jail-out-');
    // The same command outside the jail really reads the other chat's file (the attack is real with this ffmpeg).
    const list = path.join(out, 'list.m3u8');
    await writeFile(list, playlistOf(secret));
    execFileSync(ffmpeg, ['-hide_banner', '-loglevel', 'error', '-nostdin', '-protocol_whitelist', 'file,hls', '-allowed_extensions', 'ALL', '-f', 'hls', '-i', list, '-f', 'mp3', path.join(out, 'outside.mp3')]);
    expect((await stat(path.join(out, 'outside.mp3'))).size).to.be.greaterThan(1000);
    const limits = { wallSeconds: 20, cpuSeconds: 20, memoryMb: 512, maxProcesses: 64, maxOutputBytes: 1 << 20, diskBytes: 64 << 20 };
    const attack = await jail.run({
      kind: 'media',
      program: ffmpeg,
      args: ['-hide_banner', '-nostdin', '-protocol_whitelist', 'file,hls', '-allowed_extensions', 'ALL', '-f', 'hls', '-i', 'in/list.m3u8', '-f', 'mp3', 'out/stolen.mp3'],
      inputs: { 'list.m3u8': playlistOf(secret) },
      outputTo: out,
      limits,
    });
    expect(attack.exitCode).not.to.equal(0);
    expect(attack.stderr).to.match(/Failed to open segment|No such file/);
    expect(existsSync(path.join(out, 'stolen.mp3')) && attack.exitCode === 0).to.equal(false);
    const plain = await jail.run({ kind: 'media', program: ffmpeg, args: ['-hide_banner', '-nostdin', '-i', 'in/tone.mp3', '-f', 'ogg', 'out/tone.ogg'], inputs: { 'tone.mp3': secret }, outputTo: out, limits });
    expect(plain.exitCode, plain.stderr).to.equal(0);
    expect(plain.outputs).to.deep.equal(['tone.ogg']);
  });
});
