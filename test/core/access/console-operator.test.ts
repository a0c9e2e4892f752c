import { expect } from 'chai';
import { definePlugin } from '../../../core/index.js';
import { lastText, MemoryTransport, startTestBot, type ModelRequest, type TestBot } from '../../../app/testing/index.js';
import polls from '../../../plugins/polls/index.js';
import type { IncomingMessage } from '../../../core/kernel/port/message.js';
import type { PushInput } from '../../../core/adapters/memory/memory-transport.js';

const OPERATOR = '10000000001@s.whatsapp.net';
const STRANGER = '6281300000021@s.whatsapp.net';

/** The console's shape on the memory transport: the person at the machine (in no owner list) types as an owner. */
class ConsoleLike extends MemoryTransport {
  operatorChatId(): string {
    return OPERATOR;
  }
  override message(input: PushInput): IncomingMessage {
    const message = super.message(input);
    if (message.senderId === OPERATOR) message.fromOperator = true;
    return message;
  }
}

/** A plugin asking the host who is an owner, as plugins do for people they act for outside a message. */
const ownerProbe = definePlugin({
  name: 'owner-probe',
  description: 'says whether the host counts someone as an owner',
  setup: (host) => ({ commands: [{ command: 'isowner', help: 'is <id> an owner?', run: (ctx) => ctx.reply(String(host.isOwner(ctx.args))) }] }),
});

function answer(request: ModelRequest) {
  if (request.messages.at(-1)?.role === 'tool') return 'the poll is up';
  if (lastText(request) === 'make a pie poll') return { tool: 'send_poll', args: { question: 'Which pie?', options: ['kiwi pie', 'mango tart'], answer_on_vote: true } };
  return `model: ${lastText(request)}`;
}

/** Shipped rules (pairing): whoever the operator is, the bot treats them as an owner in everything it does for them. */
describe('the console operator is an owner everywhere (memory transport shaped like the console)', function () {
  this.timeout(30_000);
  let t: TestBot | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  it("the operator's vote on a poll is answered as theirs, not held as a stranger's", async () => {
    t = await startTestBot([polls, ownerProbe], { model: answer, transport: new ConsoleLike(), config: { access: { mode: 'pairing', allow: [], block: [] } } });
    const made = await t.transport.push({ senderId: OPERATOR, text: 'make a pie poll' });
    const poll = made.find((a) => a.type === 'poll');
    expect(poll, JSON.stringify(made)).to.not.equal(undefined);
    const onVote = await t.transport.vote(poll!.id, OPERATOR, [2], 'user 10000000001');
    expect(onVote.filter((a) => a.type === 'text').map((a) => (a as { text: string }).text)).to.deep.equal(['model: user 10000000001 voted on the poll "Which pie?": mango tart']);
    expect(t.app.bot.access.pending()).to.deep.equal([]);
  });

  it('host.isOwner counts the operator, and no one else outside the owner list', async () => {
    t = await startTestBot(ownerProbe, { transport: new ConsoleLike(), config: { access: { mode: 'everyone', allow: [], block: [] } } });
    expect(await t.send({ senderId: OPERATOR, text: `.isowner ${OPERATOR}` })).to.deep.equal(['true']);
    expect(await t.send({ senderId: OPERATOR, text: `.isowner ${STRANGER}` })).to.deep.equal(['false']);
  });
});
