import { expect } from 'chai';
import { audioFailures, type BotAction, FakeAudio, type ModelRequest, startTestBot, type TestBot } from '../../../app/testing/index.js';
import type { IncomingMedia, QuotedMessage } from '../../../core/kernel/port/message.js';
import { createVoicePlugin } from '../../../plugins/voice/index.js';
import { tempDir } from '../../helpers/checkout.js';
import { makeTone } from './audio-files.js';

const ALICE = '10000000001@s.whatsapp.net';
const BOB = '10000000002@s.whatsapp.net';
const BOT = '10000000099@s.whatsapp.net';

/**
 * A question replying to a voice note is answered from what the note says: from the archive when the bot heard it
 * (no second transcription), from the bot's own record for its voice replies, transcribed now (and said so) when it
 * was never heard; a note deleted for everyone, or one WhatsApp no longer serves, is said plainly, and a quote never
 * reaches another chat's notes.
 */
describe('voice: a reply quoting a voice note brings its words back', function () {
  this.timeout(60_000);
  let audio: FakeAudio;
  let t: TestBot | undefined;
  let ogg: Buffer;
  let transcript: string;

  before(async () => {
    ogg = makeTone(await tempDir('voice-quoted-'), 'note.ogg', 1);
  });

  beforeEach(async () => {
    transcript = 'the blue folder is in the second drawer';
    audio = await FakeAudio.start(() => transcript);
  });

  afterEach(async () => {
    await t?.stop();
    t = undefined;
    await audio.close();
  });

  async function start(voice: Record<string, unknown> = {}): Promise<TestBot> {
    t = await startTestBot(createVoicePlugin({ random: () => 0.99 }), {
      env: { AUDIO_BASE_URL: `${audio.url}/v1/`, AUDIO_API_KEYS: 'audio-key-one-111111', AUDIO_SPEECH_MODEL: 'tts-test', AUDIO_SPEECH_VOICE: 'nova' },
      options: { reactions: { enabled: false }, ...voice },
      ownIds: [BOT],
    });
    return t;
  }

  const note = (bytes: Buffer = ogg): IncomingMedia => ({ kind: 'voice', mimetype: 'audio/ogg; codecs=opus', size: bytes.length, download: async () => bytes });
  /** A quote whose audio WhatsApp no longer serves: only a kept transcript can answer it. */
  const quoteOf = (id: string, options: { fromBot?: boolean; senderId?: string; served?: Buffer } = {}): QuotedMessage => ({
    id,
    senderId: options.fromBot ? BOT : (options.senderId ?? ALICE),
    text: '',
    fromBot: Boolean(options.fromBot),
    media: { kind: 'voice', mimetype: 'audio/ogg; codecs=opus', download: () => (options.served ? Promise.resolve(options.served) : Promise.reject(new Error('410 Gone'))) },
  });
  const texts = (actions: BotAction[]) => actions.flatMap((a) => (a.type === 'text' ? [a.text] : []));
  /** The turn the core puts just before the question: the quoted message's words, marked as quoted content. */
  const quotedTurnOf = (request: ModelRequest) => {
    const before = request.messages.at(-2);
    return before?.role === 'user' && String(before.content).startsWith('[The next message replies to') ? String(before.content) : '';
  };

  it("answers a reply to the sender's earlier voice note from its archived transcript, without transcribing it again", async () => {
    const bot = await start();
    await bot.transport.push({ media: note(), id: 'note-1' });
    expect(audio.uploads).to.have.length(1);
    const actions = await bot.transport.push({ text: 'where is the folder?', quoted: quoteOf('note-1') });
    expect(texts(actions)).to.deep.equal(['model: where is the folder?']);
    expect(quotedTurnOf(bot.model.requests.at(-1)!)).to.contain('a voice note they sent earlier').and.to.contain('<<<CONTENT\nthe blue folder is in the second drawer\nCONTENT>>>');
    expect(audio.uploads).to.have.length(1);
  });

  it('answers a reply to a voice reply the bot sent from the words it spoke', async () => {
    const bot = await start({ replies: { enabled: true } });
    const first = await bot.transport.push({ media: note(), id: 'note-2' });
    const spoken = first.find((a): a is Extract<BotAction, { type: 'media' }> => a.type === 'media');
    expect(spoken?.media.kind).to.equal('voice');
    const actions = await bot.transport.push({ text: 'say that again in French', quoted: quoteOf(spoken!.id, { fromBot: true }) });
    expect(texts(actions)).to.deep.equal(['model: say that again in French']);
    expect(quotedTurnOf(bot.model.requests.at(-1)!)).to.contain('a voice note you sent earlier (your own words)').and.to.contain('<<<CONTENT\nmodel: the blue folder is in the second drawer\nCONTENT>>>');
    expect(audio.uploads).to.have.length(1);
  });

  it("a note received here but not heard then is transcribed through a later quote, archived as its real sender's (not the quote's claim), and not transcribed a second time", async () => {
    const bot = await start();
    transcript = 'meet me at the station at nine';
    // Its first hearing fails (the provider answers no text): the note is received, from Bob, but not archived.
    audio.forKey('audio-key-one-111111', audioFailures.noText);
    await bot.transport.push({ chatId: ALICE, senderId: BOB, media: note(), id: 'old-note' });
    expect(await bot.app.bot.privacy.exportFor([BOB]).then((e) => JSON.stringify(e))).to.not.contain('station');
    // Alice quotes it, her client claiming it was her own: the words are answered from and kept as Bob's.
    const first = await bot.transport.push({ text: 'when do we meet?', quoted: quoteOf('old-note', { served: ogg, senderId: ALICE }) });
    expect(texts(first)).to.deep.equal(['_(I had not transcribed that voice note before, so I listened to it just now.)_\n\nmodel: when do we meet?']);
    expect(quotedTurnOf(bot.model.requests.at(-1)!)).to.contain('meet me at the station at nine');
    expect(audio.uploads).to.have.length(2);
    expect(JSON.stringify(await bot.app.bot.privacy.exportFor([BOB]))).to.contain('meet me at the station at nine');
    const again = await bot.transport.push({ text: 'and where?', quoted: quoteOf('old-note') });
    expect(texts(again)).to.deep.equal(['model: and where?']);
    expect(quotedTurnOf(bot.model.requests.at(-1)!)).to.contain('meet me at the station at nine');
    expect(audio.uploads).to.have.length(2);
  });

  it('a forged quote of a voice note this chat never received is answered from, but nothing is kept in anyone\'s name', async () => {
    const bot = await start();
    transcript = 'I, Bob, owe Alice 500 euros';
    const forged = await bot.transport.push({ text: 'what did Bob say?', quoted: quoteOf('forged-note', { served: ogg, senderId: BOB }) });
    expect(texts(forged)).to.deep.equal(['_(I had not heard that voice note before, so I listened to it just now; I keep nothing of it, since I never received it in this chat.)_\n\nmodel: what did Bob say?']);
    expect(quotedTurnOf(bot.model.requests.at(-1)!)).to.contain('I, Bob, owe Alice 500 euros');
    // Nothing kept as Bob's: his .mydata has no such words, and a later quote cannot find them.
    expect(JSON.stringify(await bot.app.bot.privacy.exportFor([BOB]))).to.not.contain('500 euros');
    const later = await bot.transport.push({ text: 'and again?', quoted: quoteOf('forged-note', { senderId: BOB }) });
    expect(texts(later)).to.deep.equal(['I never transcribed that voice note, and WhatsApp no longer serves it. Please send it again.']);
    // A quote claiming to be a voice reply of the bot is not kept as the bot's words either.
    const botClaim = await bot.transport.push({ text: 'what did you say?', quoted: quoteOf('fake-bot-note', { served: ogg, fromBot: true }) });
    expect(texts(botClaim)[0]).to.contain('I keep nothing of it');
    const stillUnknown = await bot.transport.push({ text: 'and?', quoted: quoteOf('fake-bot-note', { fromBot: true }) });
    expect(texts(stillUnknown)[0]).to.match(/^I never transcribed that voice note/);
  });

  it('says plainly when a quoted voice note was never transcribed and WhatsApp no longer serves it', async () => {
    const bot = await start();
    const actions = await bot.transport.push({ text: 'what did it say?', quoted: quoteOf('lost-note') });
    expect(texts(actions)).to.deep.equal(['I never transcribed that voice note, and WhatsApp no longer serves it. Please send it again.']);
    expect(bot.model.requests).to.have.length(0);
  });

  it('a voice note deleted for everyone is not brought back by a later quote, though WhatsApp still serves it', async () => {
    const bot = await start();
    await bot.transport.push({ media: note(), id: 'secret-note' });
    const asked = bot.model.requests.length;
    await bot.transport.revoke(ALICE, 'secret-note', { ids: [ALICE] });
    const actions = await bot.transport.push({ text: 'what did it say?', quoted: quoteOf('secret-note', { served: ogg }) });
    expect(texts(actions)).to.deep.equal(['That voice note was deleted for everyone, so I no longer have it.']);
    expect(bot.model.requests).to.have.length(asked);
    expect(audio.uploads).to.have.length(1);
  });

  it("after the sender's .mydata delete, a quote of their voice note is not transcribed again through the quote", async () => {
    const bot = await start();
    await bot.transport.push({ media: note(), id: 'erased-note' });
    const asked = bot.model.requests.length;
    await bot.app.bot.privacy.deleteFor([ALICE]);
    const actions = await bot.transport.push({ text: 'what did it say?', quoted: quoteOf('erased-note', { served: ogg }) });
    expect(texts(actions)).to.deep.equal(['I no longer have that voice note: it was deleted from what I keep.']);
    expect(bot.model.requests).to.have.length(asked);
    expect(audio.uploads).to.have.length(1);
  });

  it("a quote naming another chat's voice note id never reaches that chat's transcript", async () => {
    const bot = await start();
    await bot.transport.push({ media: note(), id: 'alice-note' });
    const asked = bot.model.requests.length;
    const actions = await bot.transport.push({ senderId: BOB, text: 'what did she say?', quoted: quoteOf('alice-note', { senderId: BOB }) });
    expect(texts(actions)).to.deep.equal(['I never transcribed that voice note, and WhatsApp no longer serves it. Please send it again.']);
    expect(bot.model.requests).to.have.length(asked);
  });

  it('a question quoting a voice note in a chat where the bot cannot hear says so when it would have to listen', async () => {
    await audio.close();
    t = await startTestBot(createVoicePlugin(), { options: { reactions: { enabled: false } } });
    const actions = await t.transport.push({ text: 'what did it say?', quoted: quoteOf('unheard', { served: ogg }) });
    expect(texts(actions)[0]).to.match(/^I never transcribed that voice note, and I can't hear voice notes right now: /);
    audio = await FakeAudio.start();
  });
});
