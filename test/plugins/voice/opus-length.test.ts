import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FakeAudio, startTestBot, type TestBot } from '../../../app/testing/index.js';
import type { JailJob } from '../../../core/services/jail/jail.js';
import { createVoicePlugin } from '../../../plugins/voice/index.js';
import { opusSeconds } from '../../../plugins/voice/opus-length.js';
import { madeOnceSync } from '../../helpers/made-media.js';
import { tempDir } from '../../helpers/checkout.js';
import { makeTone, testFfmpeg } from './audio-files.js';

/** What a real ffprobe (outside the bot) says the file lasts. */
function ffprobeSeconds(file: string): number {
  return Number(execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file], { encoding: 'utf8' }).trim());
}

/** Byte offsets of the Ogg pages of a clean file. */
function pageStarts(bytes: Buffer): number[] {
  const starts: number[] = [];
  for (let at = 0; at < bytes.length; ) {
    starts.push(at);
    const segments = bytes[at + 26]!;
    let body = 0;
    for (let i = 0; i < segments; i++) body += bytes[at + 27 + i]!;
    at += 27 + segments + body;
  }
  return starts;
}

describe('voice: a voice note is measured from its Ogg pages', function () {
  this.timeout(60_000);
  let dir: string;

  before(async () => {
    dir = await tempDir('opus-length-');
  });

  it('reads the length ffprobe reads, to the sample, for short and long notes', () => {
    for (const [name, seconds] of [['short.ogg', 1], ['note.ogg', 1.5], ['long.ogg', 12]] as const) {
      const bytes = makeTone(dir, name, seconds);
      expect(opusSeconds(bytes), name).to.be.closeTo(ffprobeSeconds(path.join(dir, name)), 1e-6);
    }
  });

  it('leaves to ffprobe what is not one clean Opus stream starting at zero', () => {
    const note = makeTone(dir, 'clean.ogg', 1.5);
    const pages = pageStarts(note);
    expect(opusSeconds(note)).to.be.a('number');
    // Cut inside a page, bytes between two pages, a second stream chained after the first.
    expect(opusSeconds(note.subarray(0, note.length - 5)), 'cut short').to.equal(undefined);
    expect(opusSeconds(Buffer.concat([note.subarray(0, pages[2]!), Buffer.from('junk'), note.subarray(pages[2]!)])), 'bytes between pages').to.equal(undefined);
    const other = Buffer.from(note);
    for (const at of pageStarts(other)) other.writeUInt32LE(0x1234_5678, at + 14);
    expect(opusSeconds(Buffer.concat([note, other])), 'two streams').to.equal(undefined);
    // A stream cut from a later point: its first audio page holds more samples than its packets can.
    const late = Buffer.from(note);
    late.writeBigUInt64LE(48_000n * 3600n, pages[2]! + 6);
    expect(opusSeconds(late), 'starts later').to.equal(undefined);
    // Vorbis in Ogg.
    const vorbis = path.join(dir, 'vorbis.ogg');
    const args = ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', '-c:a', 'libvorbis'];
    madeOnceSync([testFfmpeg(), ...args, '.ogg'], vorbis, (out) => execFileSync(testFfmpeg(), [...args, out]));
    expect(opusSeconds(readFileSync(vorbis)), 'vorbis').to.equal(undefined);
  });

  it('a voice note costs the bot no jail run (measured from its pages, uploaded as it is); an mp3 is measured by ffprobe in the jail', async () => {
    const audio = await FakeAudio.start(() => 'twelve seconds of tone');
    let t: TestBot | undefined;
    try {
      t = await startTestBot(createVoicePlugin({ random: () => 0.99 }), { audio, options: { maxMinutes: 0.15 }, config: { targetUserIds: ['62899999999'] } });
      const runs: string[] = [];
      const jail = t.app.bot.jail;
      const run = jail.run.bind(jail);
      jail.run = (job: JailJob) => (runs.push(path.basename(job.program)), run(job));
      const long = makeTone(dir, 'twelve.ogg', 12);
      // 12 s is over the 9 s limit: the length read from the pages is what refuses it.
      const [refused] = await t.send({ senderId: '62811111111@s.whatsapp.net', media: { kind: 'voice', mimetype: 'audio/ogg; codecs=opus', size: long.length, download: async () => long } });
      expect(refused).to.equal('That voice note is 12 s long; I only transcribe voice notes of up to 9 s, so I did not listen to it.');
      const note = makeTone(dir, 'heard.ogg', 1);
      expect(await t.send({ senderId: '62811111111@s.whatsapp.net', media: { kind: 'voice', mimetype: 'audio/ogg; codecs=opus', size: note.length, download: async () => note } })).to.deep.equal(['model: twelve seconds of tone']);
      expect(runs).to.deep.equal([]);
      const mp3 = makeTone(dir, 'song.mp3', 1);
      await t.send({ senderId: '62811111111@s.whatsapp.net', media: { kind: 'audio', mimetype: 'audio/mpeg', size: mp3.length, download: async () => mp3 } });
      expect(runs).to.deep.equal(['ffprobe']);
    } finally {
      await t?.stop();
      await audio.close();
    }
  });
});
