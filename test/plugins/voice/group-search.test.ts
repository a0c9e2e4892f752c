import { expect } from 'chai';
import { rm } from 'node:fs/promises';
import type { IncomingMedia } from '../../../core/kernel/port/message.js';
import type { BotAction } from '../../../core/adapters/memory/memory-transport.js';
import { createVoicePlugin } from '../../../plugins/voice/index.js';
import { FakeAudioProvider } from '../../fakes/audio-provider.js';
import { FakeGateway } from '../../fakes/openai-gateway.js';
import { startTestApp, tempDir, type TestApp } from '../../helpers/test-app.js';
import { makeTone } from './audio-files.js';

const GROUP = '120363000000000099@g.us';
const ALICE = '62811111111@s.whatsapp.net';
const BOB = '62822222222@s.whatsapp.net';

const texts = (actions: BotAction[]) => actions.filter((a): a is Extract<BotAction, { type: 'text' }> => a.type === 'text').map((a) => a.text);
const voice = (bytes: Buffer): IncomingMedia => ({ kind: 'voice', mimetype: 'audio/ogg; codecs=opus', size: bytes.length, download: async () => bytes });

describe('voice plugin: .vn in a group searches that group', function () {
  this.timeout(30_000);
  let dir: string;
  let audio: FakeAudioProvider;
  let gw: FakeGateway;
  let t: TestApp;

  before(async () => {
    dir = await tempDir('voice-group-');
    audio = await FakeAudioProvider.start();
    gw = await FakeGateway.start('gw');
    t = await startTestApp({
      plugins: [createVoicePlugin({ random: () => 0.99 })],
      env: { API_KEY: 'gateway-key-123456', BASE_URL: gw.url, MODEL: 'm', AUDIO_BASE_URL: `${audio.url}/v1/`, AUDIO_API_KEYS: 'audio-key-1111111' },
      config: { groups: { commandsWithoutMention: true } },
    });
    const note = makeTone(dir, 'n.ogg', 1);
    // Bob's note in the group, and a different note in Alice's private chat.
    audio.transcript = () => 'the group picnic moves to the lake';
    await t.transport.push({ chatId: GROUP, senderId: BOB, media: voice(note) });
    audio.transcript = () => 'my private dentist appointment at the lake';
    await t.transport.push({ senderId: ALICE, media: voice(note) });
  });
  after(async () => {
    await t.stop();
    await audio.close();
    await gw.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("finds the group's note, not the sender's private one, when Alice searches in the group", async () => {
    const [reply] = texts(await t.transport.push({ chatId: GROUP, senderId: ALICE, text: '.vn lake' }));
    expect(reply).to.include('the group picnic moves to the lake');
    expect(reply).to.not.include('dentist');
  });

  it('finds her own note, not the group one, when she searches in private', async () => {
    const [reply] = texts(await t.transport.push({ senderId: ALICE, text: '.vn lake' }));
    expect(reply).to.include('dentist');
    expect(reply).to.not.include('picnic');
  });
});
