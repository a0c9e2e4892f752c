import { expect } from 'chai';
import remind from '../../../plugins/remind/index.js';
import { contentOf, lastText, type ModelRequest } from '../../../app/testing/fake-model.js';
import type { TestBot } from '../../../app/testing/test-kit.js';
import { actionsIn, ALICE, FAMILY, groupLine, OWN, ownNumberBot, selfLine } from './helpers.js';

/** The model of a digest run: it reads the watched chats, then answers with what it read. */
function digestModel(request: ModelRequest) {
  if (request.messages.at(-1)?.role === 'tool') return `Your digest:\n${contentOf(lastText(request))}`;
  if (lastText(request).startsWith('Digest:') && request.tools.includes('catch_up')) return { tool: 'catch_up', args: { sinceHours: 24 } };
  return `model: ${lastText(request)}`;
}

describe('catchup: a daily digest as a scheduled task of the remind plugin (template "digest", fake clock)', function () {
  this.timeout(30_000);
  let bot: TestBot | undefined;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });

  it('.schedule every day 07:00 digest in "Message yourself" posts the watched chats\' news there at 07:00, with sources, and nothing elsewhere', async () => {
    // No jitter: the posted digest goes out at its time, on the faked clock.
    bot = await ownNumberBot({ model: digestModel, config: { sending: { jitterMs: 0 } } }, [remind]);
    await bot.send(selfLine('.watch Family'));
    const clock = bot.useClock();
    const [confirm] = await bot.send(selfLine('.schedule every day 07:00 digest'));
    expect(confirm).to.match(/^🗓️ Task scheduled every day at 07:00 .*each time I will answer: Digest: catch me up on my watched chats/);
    await bot.push(groupLine(FAMILY, ALICE, 'Alice', 'Grandma lands at 10 tomorrow', { timestamp: clock.now() }));
    // The clock goes to 07:00 (the bot's zone: the machine's) and stops there while the run talks to the model over
    // real HTTP: moved on past it, the faked clock would expire the request's own timeouts (the model client's and the
    // socket's, armed on the faked setTimeout) on a machine fast enough to have it in flight during the tick.
    const due = new Date(clock.now());
    due.setHours(7, 0, 0, 0);
    if (due.getTime() <= clock.now()) due.setDate(due.getDate() + 1);
    await clock.tick(due.getTime() - clock.now() - 1);
    expect(bot.model.requests, 'nothing runs before its time').to.have.length(0);
    await clock.tick(1);
    const digest = await bot.until(() => bot!.replies(OWN).find((r) => r.startsWith('🗓️ Scheduled')));
    expect(digest).to.include('Your digest:').and.include('Grandma lands at 10 tomorrow').and.match(/Family · Alice · \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    expect(actionsIn(bot, FAMILY)).to.deep.equal([]);
    expect(bot.transport.actions.filter((a) => a.chatId !== OWN)).to.deep.equal([]);
  });
});
