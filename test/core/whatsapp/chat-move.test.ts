import { expect } from 'chai';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { AnyMessageContent } from '@whiskeysockets/baileys';
import { FakeModel, lastText } from '../../../app/testing/fake-model.js';
import mydata from '../../../plugins/mydata/index.js';
import recall from '../../../plugins/recall/index.js';
import { createVoicePlugin } from '../../../plugins/voice/index.js';
import { FakeAudio } from '../../../app/testing/index.js';
import { waMessage, waText } from '../../fakes/baileys-socket.js';
import { startLinkedBot, type LinkedBot } from '../../helpers/linked-bot.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { UNPACED_ANSWERS } from '../../helpers/chat.js';
import { storedHistory, storedSearchLogText, storedSummary } from '../../helpers/disk-text.js';
import { makeTone } from '../../plugins/voice/audio-files.js';

const ALICE = '6281211110000@s.whatsapp.net';
const ALICE_LID = '98765432100001@lid';
const LID_DIGITS = '98765432100001';
/**
 * Each message its own turn at once: no 1.5 s burst window waited out per message. The test of a message still being
 * answered when the phone id arrives keeps WhatsApp's default window (a burst open under the LID at the move).
 */
/**
 * No burst window; the recall log's lines (written `data.flushIntervalMs` after they are added, 1 s by default) are
 * written after 50 ms: when they are written is not what this file tests, that they move is.
 */
const NO_BURSTS = { conversation: { debounceMs: 0 }, data: { flushIntervalMs: 50 } };

/** Every file under `folder`, as paths relative to it. */
async function filesUnder(folder: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(path.join(folder, prefix), { withFileTypes: true }).catch(() => [])) {
    const rel = path.join(prefix, entry.name);
    if (entry.isDirectory()) out.push(rel + '/', ...(await filesUnder(folder, rel)));
    else out.push(rel);
  }
  return out;
}

async function textUnder(folder: string): Promise<string> {
  let text = '';
  for (const file of await filesUnder(folder)) if (!file.endsWith('/')) text += await readFile(path.join(folder, file), 'utf8').catch(() => '');
  return text;
}

/**
 * The real bot over the WhatsApp transport on a fake socket with real Baileys messages: a private chat first seen by
 * its LID and then with its phone number takes everything the bot kept under the LID along — history, memory, the
 * recall log and the voice archive — and nothing stays under the LID.
 */
describe('the real bot over WhatsApp: a private chat moving from its LID to its phone id takes all its data along', function () {
  this.timeout(30_000);
  let dir: string;
  let model: FakeModel;
  let audio: FakeAudio;
  let bot: LinkedBot | undefined;
  let ogg: Buffer;
  /** Documents the bot sent (read when sent: the bot removes an export file afterwards). */
  let documents: string[];

  before(async () => {
    ogg = makeTone(await tempDir('wa-move-audio-'), 'note.ogg', 1);
  });
  beforeEach(async () => {
    dir = await tempDir('wa-chat-move-');
    await writeConfig(dir, NO_BURSTS);
    documents = [];
    // "remember: <fact>" makes the model call the remember tool (a memory write); anything else gets "noted".
    model = await FakeModel.start((request) => {
      // Asked to fold older turns into the chat summary: the summary keeps the folded text as it is.
      if (String(request.messages[0]?.content).includes('running summary of a WhatsApp conversation')) return lastText(request);
      const last = request.messages.at(-1);
      const fact = last?.role === 'user' ? /remember: (.+)$/.exec(lastText(request))?.[1] : undefined;
      return fact ? { tool: 'remember', args: { fact } } : 'noted';
    });
    audio = await FakeAudio.start(() => 'the boiler code is 5521');
  });
  afterEach(async () => {
    await bot?.app.stop();
    bot = undefined;
    await model.close();
    await audio.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function start(): Promise<LinkedBot> {
    bot = await startLinkedBot({
      dir,
      env: { API_KEY: 'test-key-123456', BASE_URL: model.url, MODEL: 'test-model', AUDIO_BASE_URL: `${audio.url}/v1/`, AUDIO_API_KEYS: 'audio-key-1' },
      plugins: [recall, createVoicePlugin(), mydata],
      transport: { download: async () => ogg },
      answerPacing: UNPACED_ANSWERS,
    });
    const socket = bot.sockets.last;
    const send = socket.sendMessage.bind(socket);
    socket.sendMessage = async (jid: string, content: AnyMessageContent, options?: never) => {
      if ('document' in content) documents.push(await readFile((content.document as { url: string }).url, 'utf8'));
      return send(jid, content, options);
    };
    return bot;
  }

  /** Delivers one real Baileys message and waits until it was handled; resolves with the bot's text replies to it. */
  async function say(message: ReturnType<typeof waText>): Promise<string> {
    const before = bot!.sockets.last.sent.length;
    bot!.sockets.last.deliver([message]);
    await bot!.transport.idle();
    await bot!.app.bot.idle();
    return bot!.sockets.last.sent
      .slice(before)
      .map((s) => (s.content as { text?: string }).text ?? '')
      .join('\n');
  }

  const voiceNote = (from: string, fromAlt?: string) => waMessage({ audioMessage: { ptt: true, seconds: 1, mimetype: 'audio/ogg; codecs=opus', fileLength: ogg.length } }, { from, ...(fromAlt ? { fromAlt } : {}) });
  /**
   * Files under data/ whose name holds the LID (the WhatsApp session's own files and the phone ↔ LID pairs aside), and
   * the LID's chat history and summary in the store database (named as `history/` entries).
   */
  const lidFiles = async () => [
    ...(await filesUnder(path.join(dir, 'data'))).filter((f) => f.includes(LID_DIGITS) && !/^(whatsapp|session_auth)\//.test(f)),
    ...(storedHistory(path.join(dir, 'data'), ALICE_LID).length ? [`history/ rows of ${ALICE_LID} in store.db`] : []),
    ...(storedSummary(path.join(dir, 'data'), ALICE_LID) ? [`history/ summary of ${ALICE_LID} in store.db`] : []),
    ...(storedSearchLogText(path.join(dir, 'data'), 'recall', 'recall', ALICE_LID) ? [`recall/ rows of ${ALICE_LID} in store.db`] : []),
    ...(storedSearchLogText(path.join(dir, 'data'), 'voice', 'voice-archive', ALICE_LID) ? [`audio_archive/ rows of ${ALICE_LID} in store.db`] : []),
  ];

  async function chatUnderTheLid(): Promise<void> {
    await say(waText('my locker number is 8812', { from: ALICE_LID }));
    await say(voiceNote(ALICE_LID));
    await say(waText('remember: my cat is called Miso', { from: ALICE_LID }));
    // Everything kept so far is on disk once the bot's stores are idle: the history, and the recall log's lines,
    // written a little after they were added.
    await bot!.app.bot.whenStoresIdle();
    // Kept under the LID so far, in every store.
    const kept = await lidFiles();
    for (const folder of ['history/', 'recall/', 'audio_archive/']) expect(kept.some((f) => f.startsWith(folder)), `${folder} in ${kept.join(', ')}`).to.equal(true);
    // Memory is rows of the store database, kept under the LID's chat id.
    expect((await bot!.app.bot.memories.facts(ALICE_LID)).map((f) => f.text).join('\n')).to.include('Miso');
  }

  it(".recall, voice search and the prompt under the phone id find what was said under the LID; nothing stays under the LID, and writes after the move don't bring it back, across a restart", async () => {
    await start();
    await chatUnderTheLid();
    // WhatsApp now sends the phone number along: the chat is known by it from here on.
    expect(await say(waText('.recall locker', { from: ALICE_LID, fromAlt: ALICE }))).to.include('8812');
    expect(await say(waText('.vn boiler', { from: ALICE }))).to.include('boiler code is 5521');
    await say(waText('remember: my dog is called Rex', { from: ALICE }));
    await say(voiceNote(ALICE));
    await say(waText('the locker is on floor two', { from: ALICE }));
    expect(JSON.stringify(model.requests.at(-1)!.messages), 'memory of both ids in the prompt').to.include('Miso').and.include('Rex');
    await bot!.app.stop();
    bot = undefined;
    expect(await lidFiles(), 'nothing under the LID after the move, the writes after it and the stop').to.deep.equal([]);

    await start();
    expect(await say(waText('.recall locker', { from: ALICE }))).to.include('8812').and.include('floor two');
    expect(await say(waText('.vn boiler', { from: ALICE }))).to.match(/2 voice notes/);
    await say(waText('what do you know about me?', { from: ALICE }));
    const prompt = JSON.stringify(model.requests.at(-1)!.messages);
    expect(prompt).to.include('Miso').and.include('Rex').and.include('my locker number is 8812');
    await bot!.app.stop();
    bot = undefined;
    expect(await lidFiles()).to.deep.equal([]);
  });

  it("the chat's summary of older turns moves from the LID to the phone id with its history, and reaches the prompt there", async () => {
    await writeConfig(dir, { ...NO_BURSTS, history: { maxMessages: 4, maxPromptTokens: 6000, summarize: true, summaryMaxTokens: 800 }, ai: { requestsPerMinute: 0 } });
    await start();
    await say(waText('my locker number is 8812', { from: ALICE_LID }));
    for (let i = 1; i <= 3; i++) await say(waText(`small talk ${i}`, { from: ALICE_LID }));
    expect((await bot!.app.bot.histories.summary(ALICE_LID))?.text).to.include('my locker number is 8812');
    await say(waText('what was my locker number?', { from: ALICE_LID, fromAlt: ALICE }));
    const prompt = model.requests.filter((r) => !String(r.messages[0]?.content).includes('running summary')).at(-1)!;
    expect(String(prompt.messages[1]?.content)).to.match(/^\[Content: summary of the earlier conversation/).and.include('8812');
    expect(await bot!.app.bot.histories.summary(ALICE)).to.not.equal(undefined);
    await bot!.app.bot.histories.flush();
    expect(await lidFiles()).to.deep.equal([]);
  });

  it('a message under the LID still being answered when the phone id arrives is written before the move, never under the LID after it', async () => {
    await writeConfig(dir);
    await start();
    // One batch: the LID message is being answered (its model request under way) when the next one reveals the phone.
    bot!.sockets.last.deliver([waText('my locker number is 8812', { from: ALICE_LID }), waText('the locker is on floor two', { from: ALICE_LID, fromAlt: ALICE })]);
    await bot!.transport.idle();
    await bot!.app.bot.idle();
    await bot!.app.stop();
    bot = undefined;
    expect(await lidFiles()).to.deep.equal([]);
    await writeConfig(dir, NO_BURSTS);
    await start();
    await say(waText('what is my locker number?', { from: ALICE }));
    const prompt = JSON.stringify(model.requests.at(-1)!.messages);
    expect(prompt).to.include('my locker number is 8812').and.include('floor two');
    expect(await say(waText('.recall locker', { from: ALICE }))).to.include('8812').and.include('floor two');
  });

  it('.mydata under the phone id exports what was kept under the LID, and .mydata delete removes it', async () => {
    await start();
    await chatUnderTheLid();
    await say(waText('.mydata', { from: ALICE_LID, fromAlt: ALICE }));
    expect(documents).to.have.length(1);
    const exported = JSON.parse(documents[0]) as Record<string, unknown>;
    for (const [section, words] of [['history', '8812'], ['recall log', '8812'], ['voice notes', 'boiler'], ['remembered facts', 'Miso']]) {
      expect(Object.keys(exported[section] as object), `${section}: filed under the phone id only`).to.deep.equal([ALICE]);
      expect(JSON.stringify(exported[section]), section).to.include(words);
    }
    await say(waText('.mydata delete', { from: ALICE }));
    expect(await say(waText('.mydata delete confirm', { from: ALICE }))).to.match(/Done: I deleted everything/);
    await bot!.app.bot.histories.flush();
    const data = await textUnder(path.join(dir, 'data'));
    for (const words of ['8812', 'boiler', 'Miso']) expect(data, words).not.to.include(words);
    expect(await lidFiles()).to.deep.equal([]);
  });
});
