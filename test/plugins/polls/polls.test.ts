import { expect } from 'chai';
import { FakeModel, lastText, startTestBot, type ModelAnswer, type ModelRequest, type TestBot } from '../../../app/testing/index.js';
import polls from '../../../plugins/polls/index.js';
import { ALICE as ANN, BOB, BOT, GROUP } from '../../helpers/chat.js';

/** "poll <json args>" makes the fake model call send_poll with them; otherwise it says what it read last. */
function answer(request: ModelRequest): ModelAnswer {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return `tool said: ${lastText(request)}`;
  const asked = /^(?:[^:]+: )?poll (.*)$/.exec(lastText(request));
  if (asked) return { tool: 'send_poll', args: JSON.parse(asked[1]) as Record<string, unknown> };
  return `model: ${lastText(request)}`;
}

const PIES = { question: 'Which pie?', options: ['kiwi pie', 'mango tart', 'apple crumble'] };
const allContent = (r: ModelRequest) => r.messages.map((m) => String(m.content ?? '')).join('\n');

describe('polls: send_poll over the memory transport, votes back to the model (fake model on 127.0.0.1)', function () {
  this.timeout(20_000);
  let model: FakeModel;
  let t: TestBot | undefined;
  before(async () => {
    model = await FakeModel.start(answer);
  });
  after(() => model.close());
  afterEach(async () => {
    await t?.stop();
    t = undefined;
    model.requests.length = 0;
  });
  const start = () => startTestBot(polls, { ownIds: [BOT], model });

  it('sends the poll the model asks for; a vote is context the model reads at the next turn', async () => {
    t = await start();
    const actions = await t.transport.push({ text: `poll ${JSON.stringify(PIES)}`, senderId: ANN, chatId: GROUP, mentions: [BOT], senderName: 'Ann' });
    const poll = actions.find((a) => a.type === 'poll');
    expect(poll, JSON.stringify({ actions, requests: model.requests.map(lastText) })).to.deep.include({ chatId: GROUP, poll: { ...PIES, multiple: false } });
    expect(lastText(model.requests[1])).to.match(/^The poll is in the chat with 3 options/);

    const onVote = await t.transport.vote(poll!.id, BOB, [2], 'Bob');
    expect(onVote, 'a vote on a plain poll is not answered').to.deep.equal([]);
    await t.transport.push({ text: 'so what do we eat?', senderId: ANN, chatId: GROUP, mentions: [BOT], senderName: 'Ann' });
    // Ann asked for the poll: its words are hers, quoted as content in Bob's vote (never as Bob's own words).
    expect(allContent(model.requests.at(-1)!)).to.include("Bob voted on a poll made at someone else's request").and.include('<<<CONTENT\nPoll: Which pie?\nChosen: mango tart\nCONTENT>>>');
  });

  it('a vote on a poll sent to settle a question is a turn of the voter that the model answers', async () => {
    t = await start();
    const actions = await t.transport.push({ text: `poll ${JSON.stringify({ ...PIES, multiple: true, answer_on_vote: true })}`, senderId: ANN });
    const poll = actions.find((a) => a.type === 'poll')!;
    const asked = model.requests.length;
    const reply = await t.transport.vote(poll.id, ANN, [1, 3], 'Ann');
    expect(model.requests.length).to.equal(asked + 1);
    expect(lastText(model.requests.at(-1)!)).to.equal('Ann voted on the poll "Which pie?": kiwi pie, apple crumble');
    expect(reply.filter((a) => a.type === 'text').map((a) => (a as { text: string }).text)).to.deep.equal(['model: Ann voted on the poll "Which pie?": kiwi pie, apple crumble']);
  });

  it('a vote that comes after a restart on a poll sent to settle a question is still answered; a person\'s delete forgets their polls', async () => {
    t = await start();
    const actions = await t.transport.push({ text: `poll ${JSON.stringify({ ...PIES, answer_on_vote: true })}`, senderId: ANN });
    const poll = actions.find((a) => a.type === 'poll')!;
    t = await t.restart();
    // The phone still shows the poll: the new transport knows it as the network would.
    t.transport.actions.push(poll);
    const asked = model.requests.length;
    const reply = await t.transport.vote(poll.id, ANN, [2], 'Ann');
    expect(model.requests.length, 'the vote is a turn the model answers').to.equal(asked + 1);
    expect(reply.filter((a) => a.type === 'text').map((a) => (a as { text: string }).text)).to.deep.equal(['model: Ann voted on the poll "Which pie?": mango tart']);
    expect(JSON.stringify(await t.app.bot.privacy.exportFor([ANN]))).to.include(poll.id);
    await t.app.bot.privacy.deleteFor([ANN]);
    expect(JSON.stringify(await t.app.bot.privacy.exportFor([ANN]))).to.not.include(poll.id);
    const after = model.requests.length;
    await t.transport.vote(poll.id, ANN, [1], 'Ann');
    expect(model.requests.length, 'once forgotten, a vote is context only').to.equal(after);
  });

  it('a poll that does not fit is not sent, and the model is told why', async () => {
    t = await start();
    const twice = await t.transport.push({ text: `poll ${JSON.stringify({ question: 'Pie?', options: ['kiwi', 'Kiwi '] })}`, senderId: ANN });
    expect(twice.some((a) => a.type === 'poll')).to.equal(false);
    expect(lastText(model.requests.at(-1)!)).to.equal('The poll was not sent: two options are the same.');
    const thirteen = await t.transport.push({ text: `poll ${JSON.stringify({ question: 'N?', options: Array.from({ length: 13 }, (_, i) => `n${i}`) })}`, senderId: ANN });
    expect(thirteen.some((a) => a.type === 'poll')).to.equal(false);
    expect(lastText(model.requests.at(-1)!)).to.match(/^Error: send_poll was not run: .*options/);
  });
});
