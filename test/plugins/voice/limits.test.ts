import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { IncomingMedia } from '../../../core/kernel/port/message.js';
import { FakeAudio, startTestBot, type TestBot } from '../../../app/testing/index.js';
import { createVoicePlugin } from '../../../plugins/voice/index.js';
import { resolveOptions } from '../../../core/kernel/plugin/options.js';
import { voiceOptionsSchema } from '../../../plugins/voice/options.js';
import { tempDir } from '../../helpers/checkout.js';
import { makeTone, testFfmpeg } from './audio-files.js';

const BOT_PHONE = '62899999999';
const GROUP = '120363000000000088@g.us';
const OWNER = '62800000001';
const ALICE = '62811111111@s.whatsapp.net';
const BOB = '62822222222@s.whatsapp.net';

const voice = (bytes: Buffer): IncomingMedia => ({ kind: 'voice', mimetype: 'audio/ogg; codecs=opus', size: bytes.length, download: async () => bytes });

describe('voice plugin: length limit and daily allowance', function () {
  this.timeout(60_000);
  let dir: string;
  let short: Buffer;
  let fourSeconds: Buffer;
  let elevenMinutes: Buffer;
  let audio: FakeAudio;
  let t: TestBot | undefined;
  let clock: number;

  before(async () => {
    dir = await tempDir('voice-limits-');
    short = makeTone(dir, 'short.ogg', 1);
    fourSeconds = makeTone(dir, 'four.ogg', 4);
    // A real 11-minute note (the default limit is 10 minutes): 10 seconds encoded small, then played 66 times over
    // into one Ogg stream without encoding again (0.7 s of CPU instead of 2.2; its length is what counts here).
    const ten = path.join(dir, 'ten.ogg');
    const long = path.join(dir, 'long.ogg');
    execFileSync(testFfmpeg(), ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'sine=frequency=300:duration=10:sample_rate=8000', '-c:a', 'libopus', '-b:a', '6k', '-ac', '1', ten]);
    execFileSync(testFfmpeg(), ['-hide_banner', '-loglevel', 'error', '-y', '-stream_loop', '65', '-i', ten, '-c', 'copy', long]);
    elevenMinutes = await readFile(long);
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  beforeEach(async () => {
    clock = Date.parse('2025-06-01T10:00:00Z');
    audio = await FakeAudio.start(() => 'words from the note');
  });
  afterEach(async () => {
    await t?.stop();
    t = undefined;
    await audio.close();
  });

  async function start(voiceOptions: Record<string, unknown> = {}): Promise<TestBot> {
    t = await startTestBot(createVoicePlugin({ now: () => clock, random: () => 0.99 }), { audio, options: voiceOptions, config: { owners: [OWNER], targetUserIds: [BOT_PHONE] } });
    return t;
  }

  it('defaults to 10 minutes per note and 60 minutes per user a day', () => {
    expect(resolveOptions(voiceOptionsSchema, {}).options).to.include({ maxMinutes: 10, dailyMinutesPerUser: 60 });
  });

  it('does not upload an 11-minute note (default limit) and tells the sender why', async () => {
    await start();
    const replies = await t!.send({ senderId: ALICE, media: voice(elevenMinutes) });
    expect(audio.uploads).to.have.length(0);
    expect(t!.model.requests).to.have.length(0);
    expect(replies).to.deep.equal(['That voice note is 11 min long; I only transcribe voice notes of up to 10 min, so I did not listen to it.']);
    // A short one still goes through.
    await t!.push({ senderId: ALICE, media: voice(short) });
    expect(audio.uploads).to.have.length(1);
  });

  it('in a group, a note not addressed to the bot is transcribed within the limits and silently skipped over them', async () => {
    await start({ maxMinutes: 0.05 });
    const within = await t!.send({ chatId: GROUP, senderId: ALICE, media: voice(short) });
    expect(audio.uploads).to.have.length(1);
    expect(within).to.deep.equal([]);
    const over = await t!.send({ chatId: GROUP, senderId: ALICE, media: voice(fourSeconds) });
    expect(audio.uploads).to.have.length(1);
    expect(over).to.deep.equal([]);
    // Addressed (a reply to the bot), the same note gets the sentence.
    const addressed = await t!.send({ chatId: GROUP, senderId: ALICE, media: voice(fourSeconds), quoted: { id: 'b1', senderId: `${BOT_PHONE}@s.whatsapp.net`, text: 'hi', fromBot: true } });
    expect(audio.uploads).to.have.length(1);
    expect(addressed).to.deep.equal(['That voice note is 4 s long; I only transcribe voice notes of up to 3 s, so I did not listen to it.']);
  });

  it('keeps a daily allowance per user (owners exempt), counted across chats and restored the next day', async () => {
    await start({ dailyMinutesPerUser: 0.1 }); // 6 seconds a day
    await t!.push({ senderId: ALICE, media: voice(fourSeconds) });
    expect(audio.uploads).to.have.length(1);
    const refused = await t!.send({ chatId: GROUP, senderId: ALICE, media: voice(fourSeconds), quoted: { id: 'b2', senderId: `${BOT_PHONE}@s.whatsapp.net`, text: 'hi', fromBot: true } });
    expect(audio.uploads).to.have.length(1);
    expect(refused[0]).to.match(/^That voice note \(4 s\) is over your daily audio allowance: 6 s a day, 2 s left today\. It resets at midnight UTC/);
    // Not addressed in a group: skipped without a word.
    expect(await t!.send({ chatId: GROUP, senderId: ALICE, media: voice(fourSeconds) })).to.deep.equal([]);
    expect(audio.uploads).to.have.length(1);
    // Another user has their own allowance; the owner has none.
    await t!.push({ senderId: BOB, media: voice(fourSeconds) });
    expect(audio.uploads).to.have.length(2);
    for (let i = 0; i < 3; i++) await t!.push({ senderId: `${OWNER}@s.whatsapp.net`, media: voice(fourSeconds) });
    expect(audio.uploads).to.have.length(5);
    // Still refused later the same day; the next UTC day brings a fresh allowance.
    const again = await t!.send({ senderId: ALICE, media: voice(fourSeconds) });
    expect(again[0]).to.match(/over your daily audio allowance/);
    clock += 24 * 3600 * 1000;
    await t!.push({ senderId: ALICE, media: voice(fourSeconds) });
    expect(audio.uploads).to.have.length(6);
  });

  it('remembers the allowance across a restart', async () => {
    await start({ dailyMinutesPerUser: 0.1 });
    await t!.push({ senderId: ALICE, media: voice(fourSeconds) });
    t = await t!.restart();
    const refused = await t.send({ senderId: ALICE, media: voice(fourSeconds) });
    expect(audio.uploads).to.have.length(1);
    expect(refused[0]).to.match(/over your daily audio allowance/);
  });
});
