import { expect } from 'chai';
import type { IncomingMedia } from '../../../core/kernel/port/message.js';
import { FakeAudio, startTestBot, type BotAction, type TestBot } from '../../../app/testing/index.js';
import { createVoicePlugin } from '../../../plugins/voice/index.js';
import { tempDir } from '../../helpers/checkout.js';
import { makeTone } from './audio-files.js';

const ALICE = '62811111111@s.whatsapp.net';
const texts = (actions: BotAction[]) => actions.filter((a): a is Extract<BotAction, { type: 'text' }> => a.type === 'text').map((a) => a.text);

/** The voice plugin's handlers load at their first use (test/app/plugin-first-use.test.ts checks when, in a fresh process). */
describe('voice: handlers that load at their first use', function () {
  this.timeout(60_000);
  let audio: FakeAudio;
  let t: TestBot | undefined;
  let note: IncomingMedia;

  before(async () => {
    const ogg = makeTone(await tempDir('voice-first-use-'), 'note.ogg', 1.5);
    note = { kind: 'voice', mimetype: 'audio/ogg; codecs=opus', size: ogg.length, download: async () => ogg };
  });
  beforeEach(async () => (audio = await FakeAudio.start(() => 'the boiler is fixed')));
  afterEach(async () => {
    await t?.stop();
    t = undefined;
    await audio.close();
  });

  it('a load that fails is said in the reply and the log, the bot stays up, and the next voice note loads them again', async () => {
    let broken = true;
    let attempts = 0;
    let loads = 0;
    const voice = createVoicePlugin({
      load: async () => {
        attempts++;
        if (broken) throw new Error('runtime.js could not be read');
        const module = await import('../../../plugins/voice/runtime.js');
        loads++;
        return module;
      },
    });
    t = await startTestBot(voice, { audio });
    expect(attempts, 'nothing loads before the first voice note').to.equal(0);

    expect(texts(await t.transport.push({ senderId: ALICE, media: note }))).to.deep.equal(['Sorry, voice ran into an error and could not finish. The owner can find the details in the log.']);
    const failed = t.logs().find((l) => l.msg === 'plugin failed while handling a message');
    expect(failed?.plugin).to.equal('voice');
    expect(JSON.stringify(failed?.err)).to.include('runtime.js could not be read');
    // The observer (it hears every note first) said its own failure in the log too.
    expect(t.logs().some((l) => l.msg === 'observer plugin failed' && l.plugin === 'voice')).to.equal(true);

    broken = false;
    expect(texts(await t.transport.push({ senderId: ALICE, media: note }))).to.deep.equal(['model: the boiler is fixed']);
    // Loaded once per running plugin: the observer, the handler and a command later share it.
    expect((await t.transport.push({ senderId: ALICE, text: '.voice' })).length).to.equal(1);
    expect(loads).to.equal(1);
  });
});
