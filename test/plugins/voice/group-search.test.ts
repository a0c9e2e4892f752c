import { expect } from 'chai';
import { rm } from 'node:fs/promises';
import type { IncomingMedia } from '../../../core/kernel/port/message.js';
import { FakeAudio, startTestBot, type TestBot } from '../../../app/testing/index.js';
import { createVoicePlugin } from '../../../plugins/voice/index.js';
import { tempDir } from '../../helpers/checkout.js';
import { makeTone } from './audio-files.js';

const GROUP = '120363000000000099@g.us';
const ALICE = '62811111111@s.whatsapp.net';
const BOB = '62822222222@s.whatsapp.net';

const voice = (bytes: Buffer): IncomingMedia => ({ kind: 'voice', mimetype: 'audio/ogg; codecs=opus', size: bytes.length, download: async () => bytes });

describe('voice plugin: .vn in a group searches that group', function () {
  this.timeout(30_000);
  let dir: string;
  let audio: FakeAudio;
  let bot: TestBot;

  before(async () => {
    dir = await tempDir('voice-group-');
    audio = await FakeAudio.start();
    bot = await startTestBot(createVoicePlugin({ random: () => 0.99 }), { audio, config: { groups: { commandsWithoutMention: true } } });
    const note = makeTone(dir, 'n.ogg', 1);
    // Bob's note in the group, and a different note in Alice's private chat.
    audio.transcript = () => 'the group picnic moves to the lake';
    await bot.push({ chatId: GROUP, senderId: BOB, media: voice(note) });
    audio.transcript = () => 'my private dentist appointment at the lake';
    await bot.push({ senderId: ALICE, media: voice(note) });
  });
  after(async () => {
    await bot.stop();
    await audio.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("finds the group's note, not the sender's private one, when Alice searches in the group", async () => {
    const [reply] = await bot.send({ chatId: GROUP, senderId: ALICE, text: '.vn lake' });
    expect(reply).to.include('the group picnic moves to the lake');
    expect(reply).to.not.include('dentist');
  });

  it('finds her own note, not the group one, when she searches in private', async () => {
    const [reply] = await bot.send({ senderId: ALICE, text: '.vn lake' });
    expect(reply).to.include('dentist');
    expect(reply).to.not.include('picnic');
  });
});
