import { expect } from 'chai';
import { startTestBot, type TestBot, type TestClock } from '../../../app/testing/index.js';
import { messageContent } from '../../../core/kernel/automation/message-content.js';
import { parseScopes } from '../../../core/services/automation/scopes.js';
import pingPlugin from '../../../plugins/ping/index.js';
import { ALICE, BOB } from '../../helpers/chat.js';

/** A real 1×1 PNG, base64. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
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

  /** What reached Bob after his hello, in order: texts as they are, a poll and a picture by their words. */
  const notes = () =>
    t.transport.actions
      .filter((a) => a.chatId === BOB && a.type !== 'typing' && !(a.type === 'text' && a.text.includes('hello from Bob')))
      .map((a) => (a.type === 'text' ? a.text : a.type === 'poll' ? `poll: ${a.poll.question}` : a.type === 'media' ? `${a.media.kind}: ${a.media.caption}` : a.type));

  it("spreads several sends to one chat one per 10 s (texts, a poll, a picture), sharing the chat's pace with a plugin's host.send, in order", async () => {
    const token = t.app.automation.tokens.create('burst', parseScopes(`send:${BOB}`)).info;
    // The media type reader is loaded now (a real file read): under the fake clock the picture is then queued at once.
    await messageContent({ media: { kind: 'image', data: PNG } });
    clock = t.useClock();
    const results = [t.app.automation.actions.send(token, BOB, 'api 1'), t.app.automation.actions.send(token, BOB, { poll: { question: 'api 2?', options: ['yes', 'no'] } })];
    await clock.tick(0);
    expect(notes(), 'only the first goes at once').to.deep.equal(['api 1']);
    const plugin = t.app.bot.host('ping').send(BOB, 'plugin 3');
    results.push(t.app.automation.actions.send(token, BOB, { media: { kind: 'image', data: PNG, caption: 'api 4' } }));
    await clock.tick(9_999);
    expect(notes(), 'the next waits its 10 s').to.deep.equal(['api 1']);
    await clock.tick(1);
    expect(notes()).to.deep.equal(['api 1', 'poll: api 2?']);
    await clock.tick(10_000);
    expect(notes(), "the plugin's send takes its turn in the same chat's pace").to.deep.equal(['api 1', 'poll: api 2?', 'plugin 3']);
    await clock.tick(9_999);
    expect(notes()).to.have.length(3);
    await clock.tick(1);
    // Its file is written at its turn (real disk): awaited as the bot's next action.
    await t.until(() => notes().length === 4);
    expect(notes()).to.deep.equal(['api 1', 'poll: api 2?', 'plugin 3', 'image: api 4']);
    await plugin;
    for (const outcome of await Promise.all(results)) expect(outcome).to.include({ status: 'sent', to: BOB });
  });
});
