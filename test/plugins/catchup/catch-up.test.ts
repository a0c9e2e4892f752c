import { expect } from 'chai';
import { lastText, type ModelRequest } from '../../../app/testing/fake-model.js';
import type { TestBot } from '../../../app/testing/test-kit.js';
import { actionsIn, ALICE, BOB, FAMILY, groupLine, OWN, ownNumberBot, selfLine, WORK } from './helpers.js';

const HOUR = 60 * 60 * 1000;

/** A model that calls catch_up with `args` for the owner's question, then answers in its own words without sources. */
function summarisingModel(args: Record<string, unknown>) {
  return (request: ModelRequest) => {
    if (request.messages.at(-1)?.role === 'tool') return 'Alice asked about dinner; Bob wants wine.';
    if (request.tools.includes('catch_up') && /miss|invoice|answer/i.test(lastText(request))) return { tool: 'catch_up', args };
    return `model: ${lastText(request)}`;
  };
}

/** The catch_up tool's results the model received, in order. */
function toolResults(bot: TestBot): string[] {
  return bot.model.requests.filter((r) => r.messages.at(-1)?.role === 'tool').map((r) => lastText(r));
}

describe('catchup: "what did I miss?" from the watched chats, with sources (chat, person, time)', function () {
  this.timeout(30_000);
  let bot: TestBot | undefined;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });

  it('"what did I miss in Family since yesterday?" answers from Family only, since then, and names its sources when the answer does not', async () => {
    bot = await ownNumberBot({ model: summarisingModel({ chat: 'Family', sinceHours: 36 }) });
    await bot.send(selfLine('.watch Family'));
    await bot.send(selfLine('.watch Work'));
    await bot.push(groupLine(FAMILY, ALICE, 'Alice', 'old news from last week', { timestamp: Date.now() - 7 * 24 * HOUR }));
    await bot.push(groupLine(FAMILY, ALICE, 'Alice', 'Dinner at 7 on Sunday?'));
    await bot.push(groupLine(FAMILY, BOB, 'Bob', 'I bring wine'));
    await bot.push(groupLine(WORK, BOB, 'Bob', 'the deploy failed'));
    const [answer] = await bot.send(selfLine('what did I miss in Family since yesterday?'));
    const [result] = toolResults(bot);
    expect(result).to.include('Dinner at 7 on Sunday?').and.include('I bring wine').and.not.include('old news').and.not.include('deploy failed');
    expect(answer).to.match(/^Alice asked about dinner; Bob wants wine\.\n\nSources:\n\[1\] Family · Alice · \d{4}-\d\d-\d\d \d\d:\d\d UTC\n\[2\] Family · Bob · /);
    expect(actionsIn(bot, FAMILY).concat(actionsIn(bot, WORK))).to.deep.equal([]);
  });

  it('"anything about the invoice this week?" searches the words over every watched chat', async () => {
    bot = await ownNumberBot({ model: summarisingModel({ query: 'invoice', sinceHours: 168 }) });
    await bot.send(selfLine('.watch Family'));
    await bot.send(selfLine('.watch Work'));
    await bot.push(groupLine(WORK, BOB, 'Bob', 'the invoice 4711 is paid'));
    await bot.push(groupLine(FAMILY, ALICE, 'Alice', 'did the invoice for the car come?'));
    await bot.push(groupLine(FAMILY, ALICE, 'Alice', 'lunch?'));
    await bot.send(selfLine('anything about the invoice this week?'));
    const [result] = toolResults(bot);
    expect(result).to.include('Work · Bob').and.include('invoice 4711').and.include('Family · Alice').and.include('car come').and.not.include('lunch?');
  });

  it('"who asked me something I did not answer?" lists the questions the owner has not answered since', async () => {
    bot = await ownNumberBot({ model: summarisingModel({ unanswered: true, sinceHours: 48 }) });
    await bot.send(selfLine('.watch Family'));
    await bot.send(selfLine('.watch Work'));
    await bot.push(groupLine(FAMILY, ALICE, 'Alice', 'are you coming on Sunday?', { timestamp: Date.now() - 3 * HOUR }));
    await bot.push(groupLine(FAMILY, OWN, 'me', 'yes!', { fromMe: true, timestamp: Date.now() - 2 * HOUR }));
    await bot.push(groupLine(WORK, BOB, 'Bob', 'can you review my PR?', { timestamp: Date.now() - HOUR }));
    await bot.push(groupLine(WORK, BOB, 'Bob', 'thanks all', { timestamp: Date.now() - HOUR / 2 }));
    await bot.send(selfLine('who asked me something I did not answer?'));
    const [result] = toolResults(bot);
    expect(result).to.include('can you review my PR?').and.not.include('are you coming').and.not.include('thanks all');
  });

  it("a person's watched-chat messages are in their .mydata and gone after their .mydata delete; others' stay", async () => {
    bot = await ownNumberBot({ model: summarisingModel({ sinceHours: 24 }) });
    await bot.send(selfLine('.watch Family'));
    await bot.push(groupLine(FAMILY, ALICE, 'Alice', 'my locker code is 4471'));
    await bot.push(groupLine(FAMILY, BOB, 'Bob', 'see you at 8'));
    expect(JSON.stringify(await bot.app.bot.privacy.exportFor([ALICE]))).to.contain('my locker code is 4471');
    expect((await bot.send({ chatId: ALICE, senderId: ALICE, text: '.mydata delete' })).join('\n')).to.match(/chats the owner watches/);
    await bot.send({ chatId: ALICE, senderId: ALICE, text: '.mydata delete confirm' });
    await bot.app.bot.whenStoresIdle();
    expect(JSON.stringify(await bot.app.bot.privacy.exportFor([ALICE]))).to.not.contain('4471');
    await bot.send(selfLine('what did I miss?'));
    const [result] = toolResults(bot);
    expect(result).to.include('see you at 8').and.not.include('4471');
  });
});
