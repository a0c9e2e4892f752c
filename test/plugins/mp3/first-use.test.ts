import { expect } from 'chai';
import { startTestBot, type BotAction, type TestBot } from '../../../app/testing/index.js';
import { createMp3Plugin } from '../../../plugins/mp3/index.js';

const ALICE = '62811111111@s.whatsapp.net';
const texts = (actions: BotAction[]) => actions.filter((a): a is Extract<BotAction, { type: 'text' }> => a.type === 'text').map((a) => a.text);

/** What .mp3 and .dl do loads at their first use (test/app/plugin-first-use.test.ts checks when, in a fresh process). */
describe('mp3: the commands load at their first use', function () {
  this.timeout(60_000);
  let t: TestBot | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  it('a load that fails is said in the reply and the log, the bot stays up, and the next command loads them again', async () => {
    let broken = true;
    let attempts = 0;
    let loads = 0;
    const mp3 = createMp3Plugin({
      load: async () => {
        attempts++;
        if (broken) throw new Error('commands.js could not be read');
        const module = await import('../../../plugins/mp3/commands.js');
        loads++;
        return module;
      },
    });
    t = await startTestBot(mp3);
    expect(attempts, 'nothing loads before the first command').to.equal(0);

    expect(texts(await t.transport.push({ senderId: ALICE, text: '.dl' }))).to.deep.equal(['Sorry, mp3 ran into an error and could not finish. The owner can find the details in the log.']);
    const failed = t.logs().find((l) => l.msg === 'plugin failed while handling a message');
    expect(failed?.plugin).to.equal('mp3');
    expect(JSON.stringify(failed?.err)).to.include('commands.js could not be read');

    broken = false;
    expect(texts(await t.transport.push({ senderId: ALICE, text: '.dl' }))).to.deep.equal(['Send .dl with a link, e.g. .dl https://youtu.be/… (or reply .dl to a message with a link).']);
    // Loaded once per running plugin: both commands share it.
    expect(texts(await t.transport.push({ senderId: ALICE, text: '.mp3' }))[0]).to.match(/^\*\.mp3\*: turn media into an MP3 audio file\./);
    expect(loads).to.equal(1);
    expect(attempts).to.equal(2);
  });
});
