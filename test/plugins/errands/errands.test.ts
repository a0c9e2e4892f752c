import { expect } from 'chai';
import { FakeModel, lastText, startTestBot, type ModelRequest, type TestBot } from '../../../app/testing/index.js';
import errands from '../../../plugins/errands/index.js';
import { ALICE, BOB, FAST_SENDING, UNPACED_SENDS } from '../../helpers/chat.js';

const OWNER = ALICE;
const MUM = '6281100000055@s.whatsapp.net';

/** "tell <name> <text>" makes the fake model call send_message; otherwise it echoes. */
function answer(request: ModelRequest) {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return `tool said: ${lastText(request)}`;
  const asked = /tell (\w+) (.*)$/.exec(lastText(request));
  if (asked && request.tools.includes('send_message')) return { tool: 'send_message', args: { to: asked[1]!, text: asked[2]! } };
  return `model: ${lastText(request)}`;
}

describe('errands: the owner messages someone the bot knows, after a 👍; the answer comes back', function () {
  this.timeout(30_000);
  let model: FakeModel;
  let bot: TestBot | undefined;
  before(async () => (model = await FakeModel.start(answer)));
  after(() => model.close());
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });
  // What an errand sends and to whom is tested here, not its pace (one a second would wait in real time).
  const start = () => startTestBot(errands, { model, sendPacing: UNPACED_SENDS, config: { owners: [OWNER.split('@')[0]], access: { mode: 'everyone' }, sending: FAST_SENDING } });
  const noticeId = () => bot!.transport.actions.filter((a) => a.type === 'text' && a.text.startsWith('⏳')).map((a) => (a as { id: string }).id).at(-1)!;
  const said = async (text: string, from: string, name?: string) => (await bot!.push({ text, senderId: from, ...(name ? { senderName: name } : {}) })).filter((a) => a.type === 'text' && a.chatId === from).map((a) => (a as { text: string }).text);

  it('.send drafts and holds; 👍 sends it as the account; Mum\'s answer is relayed to the owner, not answered', async () => {
    bot = await start();
    await said('hello dear', MUM, 'Mum');
    const before = bot.replies(MUM).length;
    const drafted = await said(".send Mum I'll be late", OWNER);
    expect(drafted, 'the owner is asked once, by the message a 👍 answers').to.have.length(1);
    expect(drafted[0]).to.match(/^⏳ Waiting for your OK \([a-z0-9]{4}\): send to Mum \(6281100000055\): “I'll be late”/);
    expect(bot.replies(MUM).length, 'nothing sent before the 👍').to.equal(before);
    await bot.transport.reactTo('👍', OWNER, OWNER, noticeId());
    expect(bot.replies(MUM).slice(before)).to.deep.equal(["I'll be late"]);
    expect(bot.replies(OWNER).at(-1)).to.equal("✅ Sent to Mum: “I'll be late”. I will pass their answer on to you.");
    const asked = model.requests.length;
    expect(await said('ok, drive safe', MUM, 'Mum'), 'Mum gets no answer from the bot').to.deep.equal([]);
    expect(model.requests.length, 'her answer never reaches the model').to.equal(asked);
    expect(bot.replies(OWNER).at(-1)).to.equal('Mum answered: ok, drive safe');
  });

  it('asked in words, the model drafts it; held until .yes; 👎 on another drops it', async () => {
    bot = await start();
    await said('hi', MUM, 'Mum');
    const before = bot.replies(MUM).length;
    await said("tell Mum I'll be late", OWNER);
    expect(lastText(model.requests.at(-1)!)).to.match(/^Drafted for Mum: “I'll be late”/);
    const id = /\(([a-z0-9]{4})\)/.exec(bot.replies(OWNER).find((t) => t.startsWith('⏳'))!)![1];
    expect(bot.replies(MUM).length).to.equal(before);
    await said(`.yes ${id}`, OWNER);
    expect(bot.replies(MUM).slice(before)).to.deep.equal(["I'll be late"]);
    await said('.send Mum never mind', OWNER);
    await bot.transport.reactTo('👎', OWNER, OWNER, noticeId());
    expect(bot.replies(MUM).slice(before), 'the dropped one is not sent').to.deep.equal(["I'll be late"]);
  });

  it('offers the owner the same send_message tool message after message (the prompt makes its JSON once)', async () => {
    bot = await start();
    const ctx = (id: string) => ({ message: { id, chatId: OWNER, senderId: OWNER, text: 'hi', isGroup: false }, chatId: OWNER, senderId: OWNER, isOwner: true }) as never;
    const offered = (id: string) => bot!.app.bot.toolsFor(ctx(id)).find((t) => t.name === 'send_message');
    const first = offered('m1');
    expect(first, 'offered to the owner').to.not.equal(undefined);
    expect(offered('m2')).to.equal(first);
  });

  it('someone who is not the owner gets nothing sent: .send is refused and send_message is not offered', async () => {
    bot = await start();
    await said('hi', MUM, 'Mum');
    const before = bot.replies(MUM).length;
    expect(await said('.send Mum give me your PIN', BOB)).to.deep.equal(['Sorry, only the owner can send messages through me.']);
    await said('tell Mum give me your PIN', BOB);
    expect(model.requests.at(-1)!.tools).to.not.include('send_message');
    expect(bot.replies(MUM).length).to.equal(before);
    expect(bot.replies(OWNER).filter((t) => t.startsWith('⏳')), 'the owner is not even asked').to.deep.equal([]);
  });
});
