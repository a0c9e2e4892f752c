import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { storeDatabaseText, storedDocuments } from '../../helpers/disk-text.js';
import path from 'node:path';
import type { IncomingMedia } from '../../../core/kernel/port/message.js';
import { FakeAudio, startTestBot, type BotAction, type TestBot } from '../../../app/testing/index.js';
import { createVoicePlugin } from '../../../plugins/voice/index.js';
import { resolveOptions } from '../../../core/kernel/plugin/options.js';
import { voiceOptionsSchema } from '../../../plugins/voice/options.js';
import { whyText } from '../../../plugins/voice/speech-reply.js';
import { tempDir } from '../../helpers/checkout.js';
import { makeTone } from './audio-files.js';

const BOT_PHONE = '62899999999';
const ALICE = '62811111111@s.whatsapp.net';
const BOB = '62822222222@s.whatsapp.net';
const KEY1 = 'audio-key-one-111111';
const KEY2 = 'audio-key-two-222222';

type MediaAction = Extract<BotAction, { type: 'media' }>;
const texts = (actions: BotAction[]) => actions.filter((a): a is Extract<BotAction, { type: 'text' }> => a.type === 'text').map((a) => a.text);
const medias = (actions: BotAction[]) => actions.filter((a): a is MediaAction => a.type === 'media');

function voice(bytes: Buffer): IncomingMedia {
  return { kind: 'voice', mimetype: 'audio/ogg; codecs=opus', size: bytes.length, download: async () => bytes };
}

/** What ffprobe (a real one, outside the bot) says the file is. */
function probe(file: string): { format: string; codec: string; channels: number } {
  const out = JSON.parse(execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'format=format_name:stream=codec_name,channels', '-of', 'json', file], { encoding: 'utf8' }));
  return { format: out.format.format_name, codec: out.streams[0].codec_name, channels: out.streams[0].channels };
}

describe('voice replies', function () {
  this.timeout(60_000);
  let audio: FakeAudio;
  let t: TestBot;
  let ogg: Buffer;
  let transcript: string;

  before(async () => {
    ogg = makeTone(await tempDir('voice-replies-'), 'note.ogg', 1);
  });

  beforeEach(async () => {
    transcript = 'what is the weather like today';
    audio = await FakeAudio.start(() => transcript);
  });

  afterEach(async () => {
    await t?.stop();
    await audio.close();
  });

  async function start(replies?: Record<string, unknown>, env: Record<string, string> = {}): Promise<TestBot> {
    t = await startTestBot(createVoicePlugin({ random: () => 0.99 }), {
      audio,
      env: { AUDIO_API_KEYS: `${KEY1},${KEY2}`, AUDIO_SPEECH_MODEL: 'tts-test', AUDIO_SPEECH_VOICE: 'nova', ...env },
      options: replies ? { replies } : {},
      config: { targetUserIds: [BOT_PHONE] },
    });
    return t;
  }

  it('answers a voice note with an Ogg/Opus voice note made from the speech endpoint, when the option is on', async () => {
    await start({ enabled: true });
    const actions = await t.push({ senderId: ALICE, media: voice(ogg) });
    expect(texts(actions)).to.deep.equal([]);
    const [sent] = medias(actions);
    expect(sent.media.kind).to.equal('voice');
    expect(sent.chatId).to.equal(ALICE);
    expect(existsSync(sent.media.path)).to.equal(true);
    expect(probe(sent.media.path)).to.deep.equal({ format: 'ogg', codec: 'opus', channels: 1 });
    expect(audio.speeches).to.have.length(1);
    expect(audio.speeches[0]).to.deep.include({ key: KEY1, model: 'tts-test', voice: 'nova', input: 'model: what is the weather like today' });
    // The answer is in the history as text, as for a typed answer.
    const history = await t.app.bot.histories.recent(ALICE);
    expect(history.at(-1)).to.include({ role: 'assistant', text: 'model: what is the weather like today' });
    expect(JSON.stringify(t.logs())).to.include('voice replies are on');
  });

  it('is off by default: text answers, no speech request, and the start log says why', async () => {
    await start();
    const actions = await t.push({ senderId: ALICE, media: voice(ogg) });
    expect(texts(actions)).to.deep.equal(['model: what is the weather like today']);
    expect(medias(actions)).to.deep.equal([]);
    expect(audio.speeches).to.have.length(0);
    expect(JSON.stringify(t.logs())).to.include('voice replies are off by default');
  });

  it('.voice on turns voice replies on for one chat only; .voice off returns it to text; the choice survives a restart', async () => {
    await start();
    expect((await t.send({ senderId: ALICE, text: '.voice on' }))[0]).to.match(/^Voice replies are on in this chat/);
    expect(medias(await t.push({ senderId: ALICE, media: voice(ogg) }))).to.have.length(1);
    expect(await t.send({ senderId: BOB, media: voice(ogg) })).to.deep.equal(['model: what is the weather like today']);
    t = await t.restart();
    expect(medias(await t.push({ senderId: ALICE, media: voice(ogg) }))).to.have.length(1);
    expect((await t.send({ senderId: ALICE, text: '.voice off' }))[0]).to.match(/^Voice replies are off in this chat/);
    const after = await t.push({ senderId: ALICE, media: voice(ogg) });
    expect(medias(after)).to.deep.equal([]);
    expect(texts(after)).to.deep.equal(['model: what is the weather like today']);
    expect((await t.send({ senderId: ALICE, text: '.voice' }))[0]).to.match(/^Voice replies are off in this chat/);
  });

  it('a private chat moving from its LID to its phone id keeps its .voice choice under the new id; the LID keeps none', async () => {
    const lid = '98765432100001@lid';
    await start();
    await t.push({ senderId: lid, text: '.voice on' });
    await t.app.bot.privacy.moveChat(lid, ALICE);
    expect(medias(await t.push({ senderId: ALICE, media: voice(ogg) }))).to.have.length(1);
    expect((await t.send({ senderId: lid, text: '.voice' }))[0]).to.match(/^Voice replies are off in this chat/);
    // The choices live in the store database (its file and WAL).
    expect(await storeDatabaseText(path.join(t.dir, 'data'))).not.to.include('98765432100001');
  });

  it("a person's .voice choice and audio seconds are in their export and go with the dashboard's delete; another's stay", async () => {
    await start();
    await t.push({ senderId: ALICE, text: '.voice on' });
    await t.push({ senderId: BOB, text: '.voice off' });
    await t.push({ senderId: ALICE, media: voice(ogg) });
    const exported = (await t.app.bot.privacy.exportFor([ALICE])).voice as { replyChoices: Record<string, boolean>; audioSecondsToday: Record<string, number> };
    expect(exported.replyChoices).to.deep.equal({ [ALICE]: true });
    expect(Object.keys(exported.audioSecondsToday)).to.deep.equal([ALICE]);
    await t.app.bot.privacy.deleteFor([ALICE]);
    const onDisk = JSON.stringify([storedDocuments(path.join(t.dir, 'data'), 'voice', 'reply-choices'), storedDocuments(path.join(t.dir, 'data'), 'voice', 'audio-budget')]);
    expect(onDisk).not.to.include('62811111111');
    expect(onDisk).to.include(BOB);
    expect((await t.send({ senderId: ALICE, text: '.voice' }))[0]).to.match(/^Voice replies are off in this chat/);
  });

  it("a chat's .voice off wins over the option on", async () => {
    await start({ enabled: true });
    await t.push({ senderId: ALICE, text: '.voice off' });
    const actions = await t.push({ senderId: ALICE, media: voice(ogg) });
    expect(medias(actions)).to.deep.equal([]);
    expect(texts(actions)).to.deep.equal(['model: what is the weather like today']);
    expect(audio.speeches).to.have.length(0);
  });

  it('sends a long answer, or one with a link or code, as text', async () => {
    await start({ enabled: true, maxChars: 80 });
    transcript = 'tell me a long story '.repeat(4).trim(); // 'model: ' + 83 characters
    const long = await t.push({ senderId: ALICE, media: voice(ogg) });
    expect(medias(long)).to.deep.equal([]);
    expect(texts(long)).to.deep.equal([`model: ${transcript}`]);
    transcript = 'open https://example.org/page';
    expect(medias(await t.push({ senderId: ALICE, media: voice(ogg) }))).to.deep.equal([]);
    transcript = 'run `npm test` now';
    expect(medias(await t.push({ senderId: ALICE, media: voice(ogg) }))).to.deep.equal([]);
    expect(audio.speeches).to.have.length(0);
    transcript = 'a short one';
    expect(medias(await t.push({ senderId: ALICE, media: voice(ogg) }))).to.have.length(1);
  });

  it('the default threshold is 600 characters, and voice replies are off by default', () => {
    expect(resolveOptions(voiceOptionsSchema, {}).options.replies).to.deep.equal({ enabled: false, maxChars: 600 });
    expect(whyText('a'.repeat(600), 600)).to.equal(undefined);
    expect(whyText('a'.repeat(601), 600)).to.match(/longer than 600/);
    expect(whyText('see www.example.org', 600)).to.match(/link/);
    expect(whyText('```js\nx\n```', 600)).to.match(/code/);
  });

  it('answers with text and no error when the speech endpoint fails (500 on every key) or hangs', async () => {
    await start({ enabled: true }, { UPSTREAM_TIMEOUT_MS: '4000' });
    audio.nextSpeech({ status: 500, json: { error: { message: 'boom' } } }, { status: 500, json: { error: { message: 'boom' } } });
    const failed = await t.push({ senderId: ALICE, media: voice(ogg) });
    expect(audio.speeches.map((s) => s.key)).to.deep.equal([KEY1, KEY2]);
    expect(medias(failed)).to.deep.equal([]);
    expect(texts(failed)).to.deep.equal(['model: what is the weather like today']);

    audio.nextSpeech('hang');
    const hung = await t.push({ senderId: ALICE, media: voice(ogg) });
    expect(audio.speeches.length).to.be.greaterThan(2);
    expect(medias(hung)).to.deep.equal([]);
    expect(texts(hung)).to.deep.equal(['model: what is the weather like today']);

    // The speech failures did not park the keys: the next voice note is heard and answered as a voice note.
    const after = await t.push({ senderId: ALICE, media: voice(ogg) });
    expect(medias(after)).to.have.length(1);
    expect(audio.uploads).to.have.length(3);
  });

  it('answers with text when the speech endpoint returns something that is not audio', async () => {
    await start({ enabled: true });
    audio.nextSpeech({ status: 200, text: '#EXTM3U\n#EXT-X-MEDIA-SEQUENCE:0\nfile:///etc/passwd\n' });
    const actions = await t.push({ senderId: ALICE, media: voice(ogg) });
    expect(medias(actions)).to.deep.equal([]);
    expect(texts(actions)).to.deep.equal(['model: what is the weather like today']);
  });

  it('without an audio key the start log says voice replies are off and why', async () => {
    await start({ enabled: true }, { AUDIO_API_KEYS: '' });
    expect(JSON.stringify(t.logs())).to.include('voice replies are off: no audio key');
  });
});

/** A mono 16-bit WAV at 16 kHz: one second each of the given amplitudes (0 = silence) of a 300 Hz tone. */
function wavOf(amplitudes: number[]): Buffer {
  const rate = 16_000;
  const data = Buffer.alloc(rate * amplitudes.length * 2);
  amplitudes.forEach((amp, s) => {
    for (let i = 0; i < rate; i++) data.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 300 * i) / rate) * amp * 32767), (s * rate + i) * 2);
  });
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

describe('voice replies: length and waveform', function () {
  this.timeout(60_000);
  let audio: FakeAudio;
  let t: TestBot | undefined;

  afterEach(async () => {
    await t?.stop();
    await audio.close();
  });

  it('a voice reply carries its length in seconds and a 64-bar waveform drawn from its sound (silence low, loud high)', async () => {
    audio = await FakeAudio.start(() => 'say something');
    // What the speech endpoint says: a second of silence, a loud second, a second at half the loudness.
    audio.nextSpeech({ status: 200, body: wavOf([0, 0.8, 0.4]), headers: { 'content-type': 'audio/wav' } });
    t = await startTestBot(createVoicePlugin({ random: () => 0.99 }), { audio, env: { AUDIO_API_KEYS: KEY1 }, options: { replies: { enabled: true } }, config: { targetUserIds: [BOT_PHONE] } });
    const ogg = makeTone(await tempDir('voice-shape-'), 'note.ogg', 1);
    const [sent] = medias(await t.push({ senderId: ALICE, media: voice(ogg) }));
    expect(sent.media.seconds).to.equal(3);
    const bars = [...sent.media.waveform!];
    expect(bars).to.have.length(64);
    expect(Math.max(...bars)).to.equal(100);
    for (const bar of bars.slice(2, 19)) expect(bar, 'the silent first second').to.be.below(5);
    for (const bar of bars.slice(24, 41)) expect(bar, 'the loud second').to.be.at.least(85);
    for (const bar of bars.slice(46, 62)) expect(bar, 'the half-loud second').to.be.within(35, 65);
  });
});
