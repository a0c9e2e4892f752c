import { expect } from 'chai';
import { definePlugin } from '../../../core/index.js';
import { FakeModel, lastText, startTestBot, type ModelAnswer, type ModelRequest, type TestBot } from '../../../app/testing/index.js';
import react from '../../../plugins/react/index.js';

const ANN = '6281100000001@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';
const BOT = '10000000000@s.whatsapp.net';

/** "react <emoji>" makes the fake model call the react tool; after a tool it says what the tool answered. */
function answer(request: ModelRequest): ModelAnswer {
  if (request.messages.at(-1)?.role === 'tool') return `tool said: ${lastText(request)}`;
  const asked = /react (.+)$/.exec(lastText(request));
  if (asked) return { tool: 'react', args: { emoji: asked[1] } };
  return `model: ${lastText(request)}`;
}

/** `.later <text>`: runs the text as a scheduled turn does (host.promptAs, after this message's handling) and posts the answer. */
const scheduler = definePlugin({
  name: 'later',
  description: 'test: runs a prompt as a scheduled turn',
  setup: (host) => ({
    commands: [{ command: 'later', help: 'test', run: (ctx) => {
          const prompt = ctx.text.replace(/^\.later\s*/, '');
          setImmediate(() => void host.promptAs(ctx.chatId, ctx.senderId, prompt).then((text) => host.send(ctx.chatId, text)));
        } }],
  }),
});

describe('react: the model reacts to the message it answers (memory transport, fake model on 127.0.0.1)', function () {
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
  const start = () => startTestBot([react, scheduler], { model, ownIds: [BOT], config: { owners: [] } });

  it('puts the emoji on the message being answered, in a group too', async () => {
    t = await start();
    const actions = await t.transport.push({ id: 'MSG-ANN-1', text: 'thanks! react 👍', senderId: ANN, chatId: GROUP, mentions: [BOT] });
    expect(actions.filter((a) => a.type === 'react')).to.deep.equal([{ type: 'react', chatId: GROUP, messageId: 'MSG-ANN-1', emoji: '👍' }]);
    expect(lastText(model.requests.at(-1)!)).to.match(/^Reacted with 👍 to the message you are answering/);
  });

  it('refuses what is not one emoji, in words, and places nothing', async () => {
    t = await start();
    const actions = await t.transport.push({ text: 'react 👍👎', senderId: ANN });
    expect(actions.some((a) => a.type === 'react')).to.equal(false);
    expect(lastText(model.requests.at(-1)!)).to.equal('No reaction was placed: "👍👎" is not one emoji.');
  });

  it('refuses on a scheduled turn (no message to react to), in words the model reads', async () => {
    t = await start();
    await t.transport.push({ text: '.later react ❤️', senderId: ANN });
    const actions = t.transport.actions;
    await t.until(() => actions.some((a) => a.type === 'text'));
    expect(actions.some((a) => a.type === 'react')).to.equal(false);
    expect(lastText(model.requests.at(-1)!)).to.match(/^No reaction was placed: this turn is a scheduled task/);
    expect(actions.filter((a) => a.type === 'text').map((a) => (a as { text: string }).text).join('\n')).to.include('tool said: No reaction was placed');
  });
});
