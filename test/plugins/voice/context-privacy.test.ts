import { expect } from 'chai';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { IncomingMedia } from '../../../core/kernel/port/message.js';
import { FakeAudio, startTestBot, type TestBot } from '../../../app/testing/index.js';
import { createVoicePlugin } from '../../../plugins/voice/index.js';
import mydata from '../../../plugins/mydata/index.js';
import { tempDir } from '../../helpers/checkout.js';
import { everyFileText, storedSearchLogText } from '../../helpers/disk-text.js';
import { makeTone } from './audio-files.js';

const GROUP = '120363000000000077@g.us';
const ANA = '62811111111@s.whatsapp.net';
const BUDI = '62822222222@s.whatsapp.net';

const voice = (bytes: Buffer): IncomingMedia => ({ kind: 'voice', mimetype: 'audio/ogg; codecs=opus', size: bytes.length, download: async () => bytes });

/** Every file of the voice archive as text. */
/** Everything on disk of the archive: its notes in the store database and its folder (audio). */
const archiveText = async (bot: TestBot) => storedSearchLogText(path.join(bot.dir, 'data'), 'voice', 'voice-archive') + (await everyFileText(path.join(bot.dir, 'data', 'audio_archive')));

/*
 * The messages a voice note keeps as its "before" context are held in memory until a note arrives. What a person
 * deleted (their data, a message deleted for everyone) or edited before that note must not reach the archive with it.
 */
describe('voice plugin: the context held in memory follows deletes and edits', function () {
  this.timeout(30_000);
  let dir: string;
  let audio: FakeAudio;
  let bot: TestBot;
  let note: Buffer;

  before(async () => {
    dir = await tempDir('voice-context-');
    audio = await FakeAudio.start();
    note = makeTone(dir, 'n.ogg', 1);
  });
  beforeEach(async () => {
    bot = await startTestBot([createVoicePlugin({ random: () => 0.99 }), mydata], { audio });
    audio.transcript = () => 'budi asks about the weekend';
  });
  afterEach(() => bot.stop());
  after(async () => {
    await audio.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("a person's .mydata delete forgets their messages waiting as context: the next note does not carry them", async () => {
    await bot.push({ chatId: GROUP, senderId: ANA, text: 'ana whispers pineapple' });
    await bot.push({ chatId: GROUP, senderId: BUDI, text: 'budi says hello' });
    await bot.send({ senderId: ANA, text: '.mydata delete' });
    expect((await bot.send({ senderId: ANA, text: '.mydata delete confirm' })).join(' ')).to.match(/deleted/);
    await bot.push({ chatId: GROUP, senderId: BUDI, media: voice(note) });
    const disk = await archiveText(bot);
    expect(disk).to.include('budi asks about the weekend');
    expect(disk, "another person's message stays as context").to.include('budi says hello');
    expect(disk).not.to.include('pineapple');
  });

  it("the messages waiting as context are in their writer's .mydata export, not in another person's", async () => {
    await bot.push({ chatId: GROUP, senderId: ANA, text: 'ana mentions papaya' });
    await bot.push({ chatId: GROUP, senderId: BUDI, text: 'budi mentions durian' });
    const waiting = async (person: string) => JSON.stringify(((await bot.app.bot.privacy.exportFor([person])).voice as { waitingContext?: unknown } | undefined)?.waitingContext ?? null);
    expect(await waiting(ANA)).to.include('papaya').and.not.include('durian');
    expect(await waiting(BUDI)).to.include('durian').and.not.include('papaya');
  });

  it('a message deleted for everyone, or edited, before the note is not kept in its old words', async () => {
    await bot.push({ chatId: GROUP, senderId: ANA, text: 'ana shares the door code 4242', id: 'ana-code' });
    await bot.push({ chatId: GROUP, senderId: ANA, text: 'ana typo mangoe', id: 'ana-typo' });
    await bot.transport.revoke(GROUP, 'ana-code', { ids: [ANA] });
    await bot.transport.edit(GROUP, 'ana-typo', 'ana meant mango', { ids: [ANA] });
    await bot.push({ chatId: GROUP, senderId: BUDI, media: voice(note) });
    const disk = await archiveText(bot);
    expect(disk).to.include('budi asks about the weekend');
    expect(disk).not.to.include('4242');
    expect(disk).not.to.include('mangoe');
    expect(disk).to.include('ana meant mango');
  });
});
