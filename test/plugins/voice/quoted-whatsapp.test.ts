import { expect } from 'chai';
import { rm } from 'node:fs/promises';
import { proto } from '@whiskeysockets/baileys';
import type { App } from '../../../app/app.js';
import { createVoicePlugin } from '../../../plugins/voice/index.js';
import { FakeAudio } from '../../../app/testing/index.js';
import { BOT_PHONE, FakeSocketFactory, isSentText, mediaServedById, sentText, waMessage, waText, type SentRecord } from '../../fakes/baileys-socket.js';
import { FakeGateway } from '../../fakes/openai-gateway.js';
import { startLinkedBot } from '../../helpers/linked-bot.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { makeTone } from './audio-files.js';

const ALICE = '6281200000001@s.whatsapp.net';
const BOB = '6281200000002@s.whatsapp.net';
const BOT_JID = `${BOT_PHONE}@s.whatsapp.net`;

/**
 * Quoted voice notes over the real WhatsApp transport on a fake socket with real Baileys `proto` messages: a reply
 * (`extendedTextMessage` whose `contextInfo` names the note by `stanzaId` and carries it as `quotedMessage`) is
 * answered from the archived transcript, a reply to the bot's own voice reply from the words it spoke, and a reply in
 * another chat naming the same id gets nothing of the first chat.
 */
describe('quoted voice notes over WhatsApp (fake Baileys socket, real app)', function () {
  this.timeout(90_000);
  let dir: string;
  let app: App | undefined;
  let sockets: FakeSocketFactory;
  let gateway: FakeGateway;
  let audio: FakeAudio;
  /** What the fake WhatsApp media server hands out, by message id; an id missing here fails to download. */
  let served: Map<string, Buffer>;
  let ogg: Buffer;

  beforeEach(async () => {
    dir = await tempDir('wabot-voice-quoted-');
    ogg = makeTone(dir, 'note.ogg', 1);
    gateway = await FakeGateway.start('gw');
    audio = await FakeAudio.start(() => 'the key is under the blue flower pot');
    const media = mediaServedById();
    served = media.served;
    await writeConfig(dir, {
      targetUserIds: [BOT_PHONE],
      access: { mode: 'everyone', allow: [], block: [] },
      conversation: { debounceMs: 0, progressAfterSeconds: 0 },
      sending: { perChatPerMinute: 60, globalPerMinute: 600, jitterMs: 0 },
      plugins: { voice: { reactions: { enabled: false }, replies: { enabled: true } } },
    });
    ({ app, sockets } = await startLinkedBot({
      dir,
      env: { API_KEY: 'test-key-123456', BASE_URL: gateway.url, MODEL: 'test-model', AUDIO_API_KEYS: 'audio-key-111111', AUDIO_BASE_URL: `${audio.url}/v1/`, AUDIO_SPEECH_MODEL: 'tts-test', AUDIO_SPEECH_VOICE: 'nova' },
      plugins: [createVoicePlugin({ random: () => 0.99 })],
      transport: { download: media.download },
    }));
  });

  afterEach(async () => {
    await app?.stop();
    app = undefined;
    await Promise.all([gateway.close(), audio.close()]);
    await rm(dir, { recursive: true, force: true });
  });

  const isAudio = (s: SentRecord) => 'audio' in s.content;

  const voiceNote = (): proto.IMessage => ({ audioMessage: { mimetype: 'audio/ogg; codecs=opus', ptt: true, seconds: 1, fileLength: ogg.length, mediaKey: Buffer.alloc(32, 3), directPath: '/v/t62/ptt' } });
  /** The turn the core put just before the question of the last chat request: the quoted message's words. */
  const quotedTurnOfLastChat = () => {
    const before = (gateway.chats().at(-1)!.json.messages as Array<{ role: string; content: string }>).at(-2);
    return before?.role === 'user' && before.content.startsWith('[The next message replies to') ? before.content : '';
  };

  it("a reply quoting the sender's voice note is answered from its archived transcript, not transcribed again", async () => {
    served.set('3EB0VOICE0000001', ogg);
    const spoken = sockets.last.nextSent(isAudio, ALICE);
    sockets.last.deliver([waMessage(voiceNote(), { from: ALICE, id: '3EB0VOICE0000001' })]);
    await spoken;
    expect(audio.uploads).to.have.length(1);
    served.clear();
    const answered = sockets.last.nextSent(isSentText, ALICE);
    sockets.last.deliver([waText('where is the key?', { from: ALICE, quote: { id: '3EB0VOICE0000001', participant: ALICE, message: voiceNote() } })]);
    expect(sentText(await answered)).to.equal('gw: where is the key?');
    expect(quotedTurnOfLastChat()).to.contain('<<<CONTENT\nthe key is under the blue flower pot\nCONTENT>>>');
    expect(audio.uploads).to.have.length(1);
  });

  it('a reply quoting the voice reply the bot sent is answered from the words it spoke', async () => {
    served.set('3EB0VOICE0000002', ogg);
    const spoken = sockets.last.nextSent(isAudio, ALICE);
    sockets.last.deliver([waMessage(voiceNote(), { from: ALICE, id: '3EB0VOICE0000002' })]);
    const reply = await spoken;
    served.clear();
    const answered = sockets.last.nextSent(isSentText, ALICE);
    // The phone quotes the bot's own message: its id, the bot as participant, the audio as the quoted message.
    sockets.last.deliver([waText('can you repeat that?', { from: ALICE, quote: { id: reply.id, participant: BOT_JID, message: voiceNote() } })]);
    expect(sentText(await answered)).to.equal('gw: can you repeat that?');
    expect(quotedTurnOfLastChat()).to.contain('your own words').and.to.contain('<<<CONTENT\ngw: the key is under the blue flower pot\nCONTENT>>>');
    expect(audio.uploads).to.have.length(1);
  });

  it("a reply in another chat naming the first chat's voice note id gets nothing of it", async () => {
    served.set('3EB0VOICE0000003', ogg);
    const spoken = sockets.last.nextSent(isAudio, ALICE);
    sockets.last.deliver([waMessage(voiceNote(), { from: ALICE, id: '3EB0VOICE0000003' })]);
    await spoken;
    served.clear();
    const answered = sockets.last.nextSent(isSentText, BOB);
    sockets.last.deliver([waText('what did she say?', { from: BOB, quote: { id: '3EB0VOICE0000003', participant: BOB, message: voiceNote() } })]);
    expect(sentText(await answered)).to.equal('I never transcribed that voice note, and WhatsApp no longer serves it. Please send it again.');
    expect(gateway.chats().filter((c) => JSON.stringify(c.json.messages).includes('blue flower pot') && JSON.stringify(c.json.messages).includes('what did she say'))).to.have.length(0);
  });
});
