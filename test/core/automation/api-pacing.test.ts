import { expect } from 'chai';
import { startTestBot, type TestBot, type TestClock } from '../../../app/testing/index.js';
import { parseScopes } from '../../../core/services/automation/scopes.js';
import pingPlugin from '../../../plugins/ping/index.js';
import { ALICE, BOB } from '../../helpers/chat.js';

/** One message per 10 s per chat, no jitter: where each send lands is exact. */
const SENDING = { perChatPerMinute: 6, globalPerMinute: 60, jitterMs: 0 };

describe('API sends are paced by the outbox like every message the bot starts (fake clock)', function () {
  this.timeout(30_000);
  let t: TestBot;
  let clock: TestClock;

  beforeEach(async () => {
    t = await startTestBot([pingPlugin], { config: { owners: [ALICE.split('@')[0]!], access: { mode: 'everyone' }, sending: SENDING } });
    // Bob wrote to the bot (and was answered): the bot may write to him first.
    await t.send({ text: 'hello from Bob', chatId: BOB, senderId: BOB });
  });
  afterEach(async () => {
    clock?.restore();
    await t.stop();
  });

  const notes = () => t.transport.actions.filter((a) => a.type === 'text' && a.chatId === BOB && /^(api|plugin) \d$/.test(a.text)).map((a) => (a as { text: string }).text);

  it('spreads several sends to one chat one per 10 s, sharing the chat\'s pace with a plugin\'s host.send, in order', async () => {
    const token = t.app.automation.tokens.create('burst', parseScopes(`send:${BOB}`)).info;
    clock = t.useClock();
    const results = [
      t.app.automation.actions.send(token, BOB, 'api 1'),
      t.app.automation.actions.send(token, BOB, 'api 2'),
      t.app.bot.host('ping').send(BOB, 'plugin 3'),
      t.app.automation.actions.send(token, BOB, 'api 4'),
    ];
    await clock.tick(0);
    expect(notes(), 'only the first goes at once').to.deep.equal(['api 1']);
    await clock.tick(9_999);
    expect(notes(), 'the next waits its 10 s').to.deep.equal(['api 1']);
    await clock.tick(1);
    expect(notes()).to.deep.equal(['api 1', 'api 2']);
    await clock.tick(10_000);
    expect(notes(), "the plugin's send takes its turn in the same chat's pace").to.deep.equal(['api 1', 'api 2', 'plugin 3']);
    await clock.tick(10_000);
    expect(notes()).to.deep.equal(['api 1', 'api 2', 'plugin 3', 'api 4']);
    const [first, second, , fourth] = await Promise.all(results);
    for (const outcome of [first, second, fourth]) expect(outcome).to.include({ status: 'sent', to: BOB });
  });
});
