import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { IncomingMedia } from '../../../core/kernel/port/message.js';
import { audioFailures, contentOf, FakeAudio, lastText, startTestBot, type BotAction, type ModelAnswer, type ModelRequest, type TestBot } from '../../../app/testing/index.js';
import pingPlugin from '../../../plugins/ping/index.js';
import { archiveAt } from '../../helpers/voice-archive.js';
import { safeFileName } from '../../../core/index.js';
import { createVoicePlugin } from '../../../plugins/voice/index.js';
import { tempDir } from '../../helpers/checkout.js';
import { makeTone } from './audio-files.js';
import { storedSearchLogText } from '../../helpers/disk-text.js';

const BOT_PHONE = '62899999999';
const GROUP = '120363000000000077@g.us';
const ALICE = '62811111111@s.whatsapp.net';
const BOB = '62822222222@s.whatsapp.net';
const KEY1 = 'audio-key-one-111111';
const KEY2 = 'audio-key-two-222222';

const texts = (actions: BotAction[]) => actions.filter((a): a is Extract<BotAction, { type: 'text' }> => a.type === 'text').map((a) => a.text);
/** The last user message the chat model was sent. */
const lastUserText = (request: ModelRequest) => {
  const content = [...request.messages].reverse().find((m) => m.role === 'user')?.content;
  return typeof content === 'string' ? content : JSON.stringify(content ?? '');
};

function voice(bytes: Buffer, kind: 'voice' | 'audio' = 'voice', mimetype = 'audio/ogg; codecs=opus'): IncomingMedia {
  return { kind, mimetype, size: bytes.length, download: async () => bytes };
}

describe('voice plugin', function () {
  this.timeout(60_000);
  let audio: FakeAudio;
  let t: TestBot;
  /** How the chat model answers this test (default "model: <last text>", as the kit's). */
  let answer: ((request: ModelRequest) => ModelAnswer) | undefined;
  let ogg: Buffer;
  let clock: number;
  let filesDir: string;

  before(async () => {
    filesDir = await tempDir('voice-files-');
    ogg = makeTone(filesDir, 'note.ogg', 1.5);
  });

  beforeEach(async () => {
    clock = Date.parse('2025-05-01T10:00:00Z');
    audio = await FakeAudio.start(() => 'please pay the invoice of five hundred dollars');
    answer = undefined;
  });

  afterEach(async () => {
    await t?.stop();
    await audio.close();
  });

  async function start(env: Record<string, string> = {}, config: Record<string, unknown> = {}): Promise<TestBot> {
    t = await startTestBot([createVoicePlugin({ now: () => clock, random: () => 0.99 }), pingPlugin], {
      audio,
      model: (request) => answer?.(request) ?? `model: ${lastText(request)}`,
      env: { AUDIO_MODEL: 'whisper-test', AUDIO_API_KEYS: `${KEY1}, ${KEY2}, ${KEY1}`, ...env },
      config: { targetUserIds: [BOT_PHONE], ...config },
    });
    return t;
  }

  it('transcribes a private voice note as .ogg, answers it like text and keeps the transcript in history', async () => {
    await start();
    const actions = await t.transport.push({ senderId: ALICE, media: voice(ogg) });
    expect(audio.uploads).to.have.length(1);
    const upload = audio.uploads[0];
    expect(upload.fileName).to.equal('voice.ogg');
    expect(upload.model).to.equal('whisper-test');
    expect(upload.bytes.equals(ogg)).to.equal(true);
    expect(upload.key).to.equal(KEY1);
    expect(lastUserText(t.model.requests[0])).to.equal('please pay the invoice of five hundred dollars');
    expect(texts(actions)).to.deep.equal(['model: please pay the invoice of five hundred dollars']);
    const history = await t.app.bot.histories.recent(ALICE);
    expect(history[0]).to.include({ role: 'user', text: 'please pay the invoice of five hundred dollars', media: 'voice' });
    expect(history[1]).to.include({ role: 'assistant' });
    const logs = JSON.stringify(t.logs());
    expect(logs).to.not.include(KEY1);
    expect(logs).to.include('2 audio key(s) in the rotation pool');
  });

  it('moves the same voice note to the next key at once on a 429 (numbered key form)', async () => {
    await start({ AUDIO_API_KEYS: '', AUDIO_API_KEY_1: KEY1, AUDIO_API_KEY_FALLBACK_1: KEY2 });
    audio.forKey(KEY1, audioFailures.rateLimit());
    const actions = await t.transport.push({ senderId: ALICE, media: voice(ogg) });
    expect(audio.uploads.map((u) => u.key)).to.deep.equal([KEY1, KEY2]);
    expect(audio.uploads[1].bytes.equals(audio.uploads[0].bytes)).to.equal(true);
    expect(texts(actions)).to.deep.equal(['model: please pay the invoice of five hundred dollars']);
  });

  it('parks a key for its retry-after: it gets no request during the cooldown and is used again after', async () => {
    await start();
    audio.forKey(KEY1, audioFailures.rateLimit(120));
    await t.transport.push({ senderId: ALICE, media: voice(ogg) });
    clock += 60_000;
    await t.transport.push({ senderId: ALICE, media: voice(ogg) });
    clock += 59_000;
    await t.transport.push({ senderId: ALICE, media: voice(ogg) });
    expect(audio.uploadsWith(KEY1)).to.have.length(1);
    expect(audio.uploadsWith(KEY2)).to.have.length(3);
    clock += 2_000;
    await t.transport.push({ senderId: ALICE, media: voice(ogg) });
    expect(audio.uploadsWith(KEY1)).to.have.length(2);
  });

  it('parks a key until the x-ratelimit-reset header says', async () => {
    await start();
    audio.forKey(KEY1, audioFailures.rateLimitWithReset('2m30s'));
    await t.transport.push({ senderId: ALICE, media: voice(ogg) });
    clock += 149_000;
    await t.transport.push({ senderId: ALICE, media: voice(ogg) });
    expect(audio.uploadsWith(KEY1)).to.have.length(1);
    clock += 2_000;
    await t.transport.push({ senderId: ALICE, media: voice(ogg) });
    expect(audio.uploadsWith(KEY1)).to.have.length(2);
  });

  it('parks a key that hit its daily limit until the next day', async () => {
    await start();
    audio.forKey(KEY1, audioFailures.dailyLimit);
    await t.transport.push({ senderId: ALICE, media: voice(ogg) });
    clock = Date.parse('2025-05-01T23:59:00Z');
    await t.transport.push({ senderId: ALICE, media: voice(ogg) });
    expect(audio.uploadsWith(KEY1)).to.have.length(1);
    clock = Date.parse('2025-05-02T00:00:01Z');
    await t.transport.push({ senderId: ALICE, media: voice(ogg) });
    expect(audio.uploadsWith(KEY1)).to.have.length(2);
  });

  it('skips a rejected key (401) until restart', async () => {
    await start();
    audio.forKey(KEY1, audioFailures.badKey);
    const first = await t.transport.push({ senderId: ALICE, media: voice(ogg) });
    expect(texts(first)).to.deep.equal(['model: please pay the invoice of five hundred dollars']);
    clock += 7 * 24 * 3600_000;
    await t.transport.push({ senderId: ALICE, media: voice(ogg) });
    expect(audio.uploadsWith(KEY1)).to.have.length(1);
    expect(audio.uploadsWith(KEY2)).to.have.length(2);
    const logs = JSON.stringify(t.logs());
    expect(logs).to.include('audio key #1 was rejected');
    expect(logs).to.not.include(KEY1);
  });

  it('refuses clearly when every key is out, and the bot stays alive', async () => {
    await start();
    audio.always(KEY1, audioFailures.rateLimit(600)).always(KEY2, audioFailures.forbidden);
    const refused = texts(await t.transport.push({ senderId: ALICE, media: voice(ogg) }));
    expect(refused).to.have.length(1);
    expect(refused[0]).to.match(/^I can't hear voice notes right now: all 2 audio key\(s\) are used up/);
    expect(t.model.requests).to.have.length(0);
    const pong = texts(await t.transport.push({ senderId: ALICE, text: '.ping' }));
    expect(pong[0]).to.match(/^pong/);
    const uploads = audio.uploads.length;
    const again = texts(await t.transport.push({ senderId: ALICE, media: voice(ogg) }));
    expect(again[0]).to.match(/^I can't hear voice notes right now/);
    expect(audio.uploads.length).to.equal(uploads);
    expect(texts(await t.transport.push({ senderId: ALICE, text: 'hello' }))).to.deep.equal(['model: hello']);
  });

  it('tries the next key after a 5xx, and tells the user when the provider hangs (without parking the key)', async () => {
    await start({ UPSTREAM_TIMEOUT_MS: '1500' });
    audio.forKey(KEY1, audioFailures.serverError);
    expect(texts(await t.transport.push({ senderId: ALICE, media: voice(ogg) }))).to.have.length(1);
    expect(audio.uploads.map((u) => u.key)).to.deep.equal([KEY1, KEY2]);
    audio.forKey(KEY1, 'hang');
    const hung = texts(await t.transport.push({ senderId: ALICE, media: voice(ogg) }));
    expect(hung[0]).to.match(/^I could not transcribe that voice note: the audio provider did not answer \(timed out\)/);
    expect(audio.uploads.map((u) => u.key)).to.deep.equal([KEY1, KEY2, KEY1]);
    expect(texts(await t.transport.push({ senderId: ALICE, media: voice(ogg) }))[0]).to.match(/^model: /);
    expect(audio.uploads.at(-1)!.key).to.equal(KEY1);
  });

  it('archives a group voice note that is not addressed without answering it, and answers an addressed one', async () => {
    await start();
    const quiet = await t.transport.push({ chatId: GROUP, senderId: ALICE, senderName: 'Alice', media: voice(ogg) });
    expect(quiet).to.deep.equal([]);
    expect(t.model.requests).to.have.length(0);
    expect(audio.uploads).to.have.length(1);
    const archive = archiveAt(path.join(t.dir, 'data', 'audio_archive'));
    expect(await archive.count(GROUP)).to.equal(1);
    const history = await t.app.bot.histories.recent(GROUP);
    expect(history.map((h) => h.text)).to.deep.equal(['please pay the invoice of five hundred dollars']);

    const addressed = await t.transport.push({ chatId: GROUP, senderId: BOB, senderName: 'Bob', media: voice(ogg), mentions: [`${BOT_PHONE}@s.whatsapp.net`] });
    expect(texts(addressed)).to.have.length(1);
    expect(t.model.requests).to.have.length(1);
  });

  it('keeps the 6 messages before and the 6 after a voice note, filled in as they arrive', async () => {
    await start();
    for (let i = 1; i <= 8; i++) await t.transport.push({ chatId: GROUP, senderId: i % 2 ? ALICE : BOB, text: `before ${i}` });
    await t.transport.push({ chatId: GROUP, senderId: ALICE, senderName: 'Alice', media: voice(ogg) });
    const archive = () => archiveAt(path.join(t.dir, 'data', 'audio_archive'));
    let context = await archive().context(GROUP, 1);
    expect(context.before.map((m) => m.text)).to.deep.equal(['before 3', 'before 4', 'before 5', 'before 6', 'before 7', 'before 8']);
    expect(context.after).to.deep.equal([]);
    for (let i = 1; i <= 3; i++) await t.transport.push({ chatId: GROUP, senderId: BOB, text: `after ${i}` });
    context = await archive().context(GROUP, 1);
    expect(context.after.map((m) => m.text)).to.deep.equal(['after 1', 'after 2', 'after 3']);
    for (let i = 4; i <= 8; i++) await t.transport.push({ chatId: GROUP, senderId: BOB, text: `after ${i}` });
    context = await archive().context(GROUP, 1);
    expect(context.after.map((m) => m.text)).to.deep.equal(['after 1', 'after 2', 'after 3', 'after 4', 'after 5', 'after 6']);
    expect(context.after[0].senderId).to.equal(BOB);
    // On disk: the note's row in the store database, the chat's search log (the transcript is the item's searched `text`).
    const chatDir = path.join(t.dir, 'data', 'audio_archive', GROUP);
    const lines = storedSearchLogText(path.join(t.dir, 'data'), 'voice', 'voice-archive', GROUP).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    const line = lines.find((l) => l.seq === 1)!;
    expect(line).to.include({ senderId: ALICE, senderName: 'Alice', text: 'please pay the invoice of five hundred dollars' });
    // Its audio beside it, named after its message.
    expect(line.audioFile).to.equal(`audio/msg-${safeFileName(String(line.id))}.ogg`);
    expect(existsSync(path.join(chatDir, String(line.audioFile)))).to.equal(true);
  });

  it('.vn searches only the current chat, whatever the query says', async () => {
    await start();
    const chatA = ALICE;
    const chatB = BOB;
    await t.transport.push({ senderId: chatA, senderName: 'Alice', media: voice(ogg) });
    audio.transcript = () => 'the garden party is on sunday';
    await t.transport.push({ senderId: chatB, senderName: 'Bob', media: voice(ogg) });

    const inA = texts(await t.transport.push({ senderId: chatA, text: '.vn invoice' }));
    expect(inA[0]).to.include('please pay the invoice of five hundred dollars').and.include('Alice');
    for (const query of ['invoice', 'five hundred dollars', `${chatA} invoice`, '62811111111', '* invoice', '../62811111111@s.whatsapp.net invoice']) {
      const inB = texts(await t.transport.push({ senderId: chatB, text: `.vn ${query}` }));
      expect(inB[0], query).to.not.include('invoice of five');
      expect(inB[0], query).to.match(/^No voice note in this chat matches/);
    }
    expect(texts(await t.transport.push({ senderId: chatB, text: '.vn garden' }))[0]).to.include('the garden party is on sunday');
  });

  it('offers search_voice_notes to the model, bound to the calling chat', async () => {
    await start();
    await t.transport.push({ senderId: ALICE, media: voice(ogg) });
    // The model asks for the voice notes of the chat `asked` names (in every argument it could), then answers.
    let asked = ALICE;
    answer = (request) =>
      request.messages.at(-1)?.role === 'tool' ? 'done' : { tool: 'search_voice_notes', args: { query: 'invoice dollars', chatId: asked, chat: asked } };
    const before = t.model.requests.length;
    await t.transport.push({ senderId: BOB, text: 'what did alice say about the invoice?' });
    const requests = t.model.requests.slice(before);
    expect(requests[0].tools).to.include('search_voice_notes');
    const toolResult = requests[1].messages.find((m) => m.role === 'tool')!;
    expect(String(toolResult.content)).to.not.include('invoice of five');
    expect(JSON.parse(contentOf(String(toolResult.content))).results).to.deep.equal([]);

    asked = BOB;
    const mark = t.model.requests.length;
    await t.transport.push({ senderId: ALICE, text: 'what did I say about the invoice?' });
    const own = t.model.requests.slice(mark)[1].messages.find((m) => m.role === 'tool')!;
    expect(String(own.content)).to.include('please pay the invoice of five hundred dollars');
  });

  it('is deaf without an audio key: says so at start and in the chat, archives nothing', async () => {
    await start({ AUDIO_API_KEYS: '' });
    const reply = texts(await t.transport.push({ senderId: ALICE, media: voice(ogg) }));
    expect(reply[0]).to.match(/^I can't hear voice notes right now: no audio key is configured/);
    expect(texts(await t.transport.push({ senderId: ALICE, text: '.vn invoice' }))[0]).to.match(/^Voice-note search is off/);
    expect(audio.uploads).to.have.length(0);
    expect(existsSync(path.join(t.dir, 'data', 'audio_archive'))).to.equal(false);
    const lines = t.logs().map((l) => String(l.msg));
    expect(lines.some((l) => /voice: no audio key/.test(l) && /archive/.test(l) && /reactions/.test(l))).to.equal(true);
    expect(texts(await t.transport.push({ senderId: ALICE, text: '.ping' }))[0]).to.match(/^pong/);
  });

  it('answers bad audio clearly and archives nothing half-done', async () => {
    await start();
    const empty = texts(await t.transport.push({ senderId: ALICE, media: voice(Buffer.alloc(0)) }));
    expect(empty[0]).to.match(/empty \(0 bytes\)/);
    const corrupt = texts(await t.transport.push({ senderId: ALICE, media: voice(Buffer.from('this is not audio at all, just some text bytes'.repeat(20)), 'audio', 'audio/ogg') }));
    expect(corrupt[0]).to.match(/could not read that audio file/);
    audio.forKey(KEY1, audioFailures.noText);
    const noText = texts(await t.transport.push({ senderId: ALICE, media: voice(ogg) }));
    expect(noText[0]).to.match(/answered without any text/);
    audio.forKey(KEY1, { status: 400, json: { error: { message: 'could not process file - is it a valid media file?', type: 'invalid_request_error' } } });
    const rejected = texts(await t.transport.push({ senderId: ALICE, media: voice(ogg) }));
    expect(rejected[0]).to.match(/could not read that voice note/);
    expect(audio.uploads).to.have.length(2);
    expect(await archiveAt(path.join(t.dir, 'data', 'audio_archive')).count(ALICE)).to.equal(0);
    expect(t.model.requests).to.have.length(0);
  });

  it('passes mp3 through and converts an unsupported format to .ogg with ffmpeg', async () => {
    await start();
    const mp3 = makeTone(filesDir, 'song.mp3', 1);
    await t.transport.push({ senderId: ALICE, media: voice(mp3, 'audio', 'audio/mpeg') });
    expect(audio.uploads[0].fileName).to.equal('voice.mp3');
    const aiff = makeTone(filesDir, 'old.aiff', 1);
    const actions = await t.transport.push({ senderId: ALICE, media: voice(aiff, 'audio', 'audio/aiff') });
    expect(audio.uploads[1].fileName).to.equal('voice-1.ogg');
    expect(audio.uploads[1].bytes.subarray(0, 4).toString('latin1')).to.equal('OggS');
    expect(texts(actions)).to.have.length(1);
  });

  it('splits a file over the upload limit into pieces and joins their transcripts', async () => {
    await start({}, { plugins: { voice: { maxUploadMb: 0.006 } } });
    const long = makeTone(filesDir, 'long.ogg', 12);
    expect(long.length).to.be.greaterThan(0.006 * 1024 * 1024);
    let n = 0;
    audio.transcript = () => `part ${++n}`;
    const actions = await t.transport.push({ senderId: ALICE, media: voice(long) });
    expect(audio.uploads.length).to.be.greaterThan(1);
    for (const upload of audio.uploads) {
      expect(upload.fileName).to.match(/^voice-\d+\.ogg$/);
      expect(upload.bytes.length).to.be.at.most(0.006 * 1024 * 1024);
    }
    expect(lastUserText(t.model.requests[0])).to.equal(audio.uploads.map((_, i) => `part ${i + 1}`).join(' '));
    expect(texts(actions)).to.have.length(1);
  });

  it('adds an auto reaction picked by the audio chat model, and stays silent when that fails', async () => {
    t = await startTestBot([createVoicePlugin({ now: () => clock, random: () => 0 }), pingPlugin], {
      audio,
      env: { AUDIO_BASE_URL: audio.url, AUDIO_CHAT_MODEL: 'chat-small', AUDIO_API_KEYS: KEY1 },
      options: { reactions: { share: 1, cooldownMinutes: 5 } },
      config: { targetUserIds: [BOT_PHONE] },
    });
    const actions = await t.transport.push({ senderId: ALICE, text: 'we won the cup!' });
    expect(actions.find((a) => a.type === 'react')).to.include({ emoji: '👍' });
    expect(texts(actions)).to.deep.equal(['model: we won the cup!']);
    expect(audio.chats()[0].json.model).to.equal('chat-small');
    // Cooldown: the next message in this chat gets no reaction and costs no request.
    const second = await t.transport.push({ senderId: ALICE, text: 'and a medal' });
    expect(second.some((a) => a.type === 'react')).to.equal(false);
    expect(audio.chats()).to.have.length(1);
    // A failure is silent in chat.
    clock += 6 * 60_000;
    audio.nextChat(audioFailures.serverError, audioFailures.serverError);
    const third = await t.transport.push({ senderId: ALICE, text: 'great day' });
    expect(third.some((a) => a.type === 'react')).to.equal(false);
    expect(texts(third)).to.deep.equal(['model: great day']);
  });
});
