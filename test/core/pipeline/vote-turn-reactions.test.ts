import { expect } from 'chai';
import { definePlugin } from '../../../core/index.js';
import { startFakeSocketBot, type FakeSocketBot } from '../../../app/testing/fake-socket-bot.js';
import { BOT_LID, sentPoll, waPollVote, waText, type SentRecord } from '../../../app/testing/fake-baileys-socket.js';
import { FAST_SENDING, UNPACED_SENDS } from '../../helpers/chat.js';

const ALICE = '6281200000001@s.whatsapp.net';

/** A command that asks a question by poll, the vote answered as a turn of the voter (`answerOnVote`). */
const asker = definePlugin({
  name: 'asker',
  description: 'asks by poll (test)',
  setup: () => ({
    commands: [{ command: 'ask', help: 'asks which day', run: async (ctx) => void (await ctx.sendPoll({ question: 'Which day?', options: ['Monday', 'Tuesday'], multiple: false }, { answerOnVote: true })) }],
  }),
});

const reactionsIn = (sent: SentRecord[]) => sent.map((s) => (s.content as { react?: { text: string; key: { id: string } } }).react).filter((r) => r !== undefined);

describe('A poll vote answered as a turn reacts to no message that does not exist (fake socket, real proto)', function () {
  this.timeout(30_000);
  let bot: FakeSocketBot | undefined;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });

  it('with acknowledgement reactions on, a typed message gets 👀 and ✅, the vote turn none (its id names no chat message)', async () => {
    bot = await startFakeSocketBot(asker, { model: () => 'noted', sendPacing: UNPACED_SENDS, config: { access: { mode: 'everyone' }, sending: FAST_SENDING, conversation: { debounceMs: 0, ackReactions: true } } });
    const asked = await bot.deliver(waText('.ask', { from: ALICE, id: 'ASK-1' }));
    expect(reactionsIn(asked).map((r) => `${r!.text} ${r!.key.id}`)).to.include.members(['👀 ASK-1']);
    const pollRecord = asked.find((s) => s.message?.pollCreationMessageV3 || s.message?.pollCreationMessage)!;
    const poll = sentPoll(pollRecord);
    const voted = await bot.deliver(waPollVote({ ...poll, chat: ALICE }, ['Tuesday'], { from: ALICE, creatorJid: `${BOT_LID}@lid`, voterJid: ALICE }));
    // The vote was a turn: the model answered it.
    expect(voted.some((s) => (s.content as { text?: string }).text === 'noted')).to.equal(true);
    expect(reactionsIn(voted)).to.deep.equal([]);
  });
});
