import { expect } from 'chai';
import type { IncomingMedia } from '../../../core/kernel/port/message.js';
import { FakeAudio, startTestBot, type TestBot } from '../../../app/testing/index.js';
import { createVoicePlugin } from '../../../plugins/voice/index.js';
import { tempDir } from '../../helpers/checkout.js';
import { makeTone } from '../voice/audio-files.js';

const ALICE = '62811111111@s.whatsapp.net';

function voice(bytes: Buffer): IncomingMedia {
  return { kind: 'voice', mimetype: 'audio/ogg; codecs=opus', size: bytes.length, download: async () => bytes };
}

/** The voice path: a voice note answered with the no-reply token, with spoken replies on, sends no voice note and no token. */
describe('the no-reply token on the voice path: never spoken, never sent', function () {
  this.timeout(60_000);
  let audio: FakeAudio;
  let bot: TestBot | undefined;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
    await audio.close();
  });

  it('a voice note the model answers with the token alone, or with a token line after words, sends nothing of the token (spoken replies on)', async () => {
    const note = makeTone(await tempDir('noreply-voice-'), 'note.ogg', 1);
    audio = await FakeAudio.start(() => 'anything new today');
    let answer = 'NO_REPLY';
    bot = await startTestBot(createVoicePlugin({ random: () => 0.99 }), { audio, model: () => answer, config: { owners: ['62811111111'] } });
    await bot.send({ senderId: ALICE, text: '.voice on' });
    const silent = await bot.push({ senderId: ALICE, media: voice(note) });
    expect(silent.filter((a) => a.type === 'media' || a.type === 'text')).to.deep.equal([]);
    answer = 'Nothing new.\n\nNO_REPLY';
    const said = await bot.push({ senderId: ALICE, media: voice(note) });
    expect(said.some((a) => a.type === 'media' || a.type === 'text'), 'the words before the token were not answered').to.equal(true);
    expect(JSON.stringify(said)).to.not.include('NO_REPLY');
    expect(audio.http.requests.filter((r) => JSON.stringify(r).includes('NO_REPLY')), 'the token was sent to be spoken').to.deep.equal([]);
  });
});
