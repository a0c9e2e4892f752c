import { expect } from 'chai';
import { FakeAudio } from '../../../app/testing/fake-audio.js';
import { contentOf, lastText, type ModelRequest } from '../../../app/testing/fake-model.js';
import type { TestBot } from '../../../app/testing/test-kit.js';
import type { IncomingMedia } from '../../../core/kernel/port/message.js';
import { createVoicePlugin } from '../../../plugins/voice/index.js';
import { tempDir } from '../../helpers/checkout.js';
import { makeTone } from '../voice/audio-files.js';
import { actionsIn, ALICE, BOB, FAMILY, groupLine, ownNumberBot, selfLine, WORK } from './helpers.js';

/** A model that reads all watched chats through catch_up when asked "catch me up", and answers with what it returned. */
function catchUpModel(request: ModelRequest) {
  if (request.messages.at(-1)?.role === 'tool') return `Here is what you missed:\n${contentOf(lastText(request))}`;
  if (/catch me up/i.test(lastText(request)) && request.tools.includes('catch_up')) return { tool: 'catch_up', args: {} };
  return `model: ${lastText(request)}`;
}

/** Voice notes of watched chats (issue 55): kept by their length, or by their words when the owner chose transcripts. */
describe('catchup: voice notes of watched chats', function () {
  this.timeout(60_000);
  let bot: TestBot | undefined;
  let audio: FakeAudio;
  let note: Buffer;
  const downloads: string[] = [];
  const voice = (id: string, seconds = 1): IncomingMedia => ({ kind: 'voice', mimetype: 'audio/ogg; codecs=opus', size: note.length, seconds, download: async () => (downloads.push(id), note) });

  before(async () => {
    note = makeTone(await tempDir('watched-voice-'), 'note.ogg', 1);
  });
  beforeEach(async () => {
    audio = await FakeAudio.start(() => 'the plumber comes on Tuesday at nine');
  });
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
    await audio.close();
    downloads.length = 0;
  });

  it('by default a watched voice note is kept by its length only: nothing downloaded, nothing sent to the audio provider', async () => {
    bot = await ownNumberBot({ model: catchUpModel, audio, config: { groups: { policy: 'open' } } }, [createVoicePlugin()]);
    await bot.send(selfLine('.watch Family'));
    await bot.push(groupLine(FAMILY, ALICE, 'Alice', '', { media: voice('family-1', 12) }));
    const [answer] = await bot.send(selfLine('catch me up'));
    expect(answer).to.include('[voice note, 12 s]').and.not.include('plumber');
    expect(downloads).to.deep.equal([]);
    expect(audio.uploads).to.have.length(0);
    expect(actionsIn(bot, FAMILY)).to.deep.equal([]);
  });

  it('with voiceNotes "transcript" its words are kept and found by catch-up; an unwatched chat\'s note is still never fetched', async () => {
    bot = await ownNumberBot({ model: catchUpModel, audio, options: { voiceNotes: 'transcript' }, config: { groups: { policy: 'open' } } }, [createVoicePlugin()]);
    await bot.send(selfLine('.watch Family'));
    await bot.push(groupLine(FAMILY, ALICE, 'Alice', '', { media: voice('family-1') }));
    await bot.push(groupLine(WORK, BOB, 'Bob', '', { media: voice('work-1') }));
    const [answer] = await bot.send(selfLine('catch me up'));
    expect(answer).to.include('[voice note, 1 s, transcript:] the plumber comes on Tuesday at nine');
    expect(downloads).to.deep.equal(['family-1']);
    expect(audio.uploads).to.have.length(1);
    // Read-only still: the note is not answered, reacted to or archived as a chat the bot takes part in.
    expect(actionsIn(bot, FAMILY)).to.deep.equal([]);
    expect(actionsIn(bot, WORK)).to.deep.equal([]);
    expect(bot.model.requests.map(lastText).join('\n')).to.not.match(/^the plumber/m);
  });

  it('with transcripts chosen but no audio key, the note is kept as not transcribed (said, never guessed)', async () => {
    bot = await ownNumberBot({ model: catchUpModel, options: { voiceNotes: 'transcript' }, config: { groups: { policy: 'open' } } }, [createVoicePlugin()]);
    await bot.send(selfLine('.watch Family'));
    await bot.push(groupLine(FAMILY, ALICE, 'Alice', 'listen to this', { media: voice('family-1') }));
    const [answer] = await bot.send(selfLine('catch me up'));
    expect(answer).to.include('[voice note, 1 s, not transcribed] listen to this');
    expect(downloads).to.deep.equal([]);
  });
});
