import { expect } from 'chai';
import { definePlugin, defineTool, Type } from '../../../core/index.js';
import { FakeModel, lastText, startTestBot, type ModelRequest, type TestBot } from '../../../app/testing/index.js';
import { EFFECT_KINDS, type EffectKind } from '../../../core/kernel/guard/policy.js';
import { ALICE, BOB, CAROL, FAST_SENDING, UNPACED_SENDS } from '../../helpers/chat.js';

const OWNER = ALICE;
const OWNER_DIGITS = ALICE.split('@')[0]!;
const done: Array<{ kind: string; by: string; to?: string; approved: boolean }> = [];

/**
 * A plugin with one declared effect per kind: `.do <kind> [to]` asks the guard for it (and says what became of it);
 * `tool-<kind>` is a tool declaring that kind (the model calls it with "call <kind>").
 */
const effector = definePlugin({
  name: 'effector',
  description: 'test effects',
  setup(host) {
    for (const kind of EFFECT_KINDS) host.effects.declare(kind, kind, (data: { to?: string }, run) => void done.push({ kind, by: run.actor.id, approved: run.approved, ...(data?.to ? { to: data.to } : {}) }));
    host.effects.declare('greet', 'message', async (data: { to: string }) => void (await host.send(data.to, 'hello from the owner')));
    return {
      commands: [
        {
          command: 'do',
          run: async (ctx) => {
            const [kind, to] = ctx.args.split(/\s+/);
            const outcome = await ctx.host.effects.act({ effect: kind!, summary: `${kind} for the test${to ? ` to ${to}` : ''}`, ...(to ? { to, data: { to } } : {}) }, ctx);
            await ctx.reply(outcome.status === 'held' ? `held ${outcome.id}` : outcome.status === 'denied' ? `denied: ${outcome.reason}` : 'done');
          },
        },
        {
          command: 'tell',
          run: async (ctx) => {
            const [to, ...words] = ctx.args.split(/\s+/);
            const sent = await ctx.host.send(to!, words.join(' ')).then(() => 'sent', (err: { code?: string }) => `refused: ${err.code}`);
            await ctx.reply(sent);
          },
        },
      ],
      tools: EFFECT_KINDS.map((kind) =>
        defineTool({
          name: `tool_${kind}`,
          description: `does ${kind}`,
          parameters: Type.Object({ what: Type.String() }),
          effects: { outsideText: false, acts: 'ownFiles', kind },
          run: ({ what }, call) => {
            done.push({ kind: `tool_${kind}`, by: call.senderId, approved: call.ctx.message.scheduled === true });
            return `did ${what}`;
          },
        }),
      ),
    };
  },
});

const answer = (request: ModelRequest) => {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return `tool said: ${lastText(request)}`;
  const asked = /call (\w+)/.exec(lastText(request));
  return asked ? { tool: `tool_${asked[1]}`, args: { what: 'it' } } : `model: ${lastText(request)}`;
};

const heldId = (text: string | undefined) => /\(([a-z0-9]{4})\)/.exec(text ?? '')?.[1];

describe('effect guard: every effect kind passes one guard (allow / hold for the owner / deny)', function () {
  this.timeout(20_000);
  let model: FakeModel;
  let bot: TestBot | undefined;
  before(async () => (model = await FakeModel.start(answer)));
  after(() => model.close());
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
    done.length = 0;
  });
  // Who receives what is tested here, not the pace of the holds' notices (one a second would wait in real time).
  const start = (guard?: Record<string, unknown>) => startTestBot(effector, { model, sendPacing: UNPACED_SENDS, config: { owners: [OWNER_DIGITS], access: { mode: 'everyone' }, sending: FAST_SENDING, ...(guard ? { guard } : {}) } });
  const noticeId = () => bot!.transport.actions.filter((a) => a.type === 'text' && a.text.startsWith('⏳')).map((a) => (a as { id: string }).id).at(-1)!;
  /** What the bot answered `from` in their own chat. */
  const say = async (text: string, from: string) => (await bot!.push({ text, senderId: from })).filter((a) => a.type === 'text' && a.chatId === from).map((a) => (a as { text: string }).text).join('\n');
  const ownerNotices = () => bot!.replies(OWNER).filter((r) => r.startsWith('⏳'));

  it('an owner\'s effect in their own chat runs at once, for every kind, by command and by tool', async () => {
    bot = await start();
    for (const kind of EFFECT_KINDS) expect(await bot.send({ text: `.do ${kind}`, senderId: OWNER })).to.deep.equal(['done']);
    for (const kind of EFFECT_KINDS) await bot.send({ text: `call ${kind}`, senderId: OWNER });
    expect(done.map((d) => d.kind)).to.deep.equal([...EFFECT_KINDS, ...EFFECT_KINDS.map((k) => `tool_${k}`)]);
    expect(ownerNotices()).to.deep.equal([]);
  });

  it('someone else reaching another chat is denied: nothing runs and nobody is messaged there', async () => {
    bot = await start();
    expect(await say(`.do message ${CAROL}`, BOB)).to.match(/^denied: /);
    expect(done).to.deep.equal([]);
    expect(bot.replies(CAROL)).to.deep.equal([]);
    expect(ownerNotices()).to.deep.equal([]);
  });

  it('a per-kind rule makes every kind stricter: denied (command and tool) when set to deny, held when set to hold', async () => {
    bot = await start({ kinds: Object.fromEntries(EFFECT_KINDS.map((k) => [k, 'deny'])) });
    for (const kind of EFFECT_KINDS) {
      expect(await say(`.do ${kind}`, OWNER), kind).to.match(/^denied: the owner's rules do not let an owner do this/);
      await bot.send({ text: `call ${kind}`, senderId: OWNER });
      expect(lastText(model.requests.at(-1)!), kind).to.match(new RegExp(`^Refused: tool_${kind} was not run`));
    }
    expect(done, 'nothing ran').to.deep.equal([]);
    await bot.stop();
    bot = await start({ kinds: { publish: 'hold', mcpTool: 'hold' } });
    expect(await say('.do publish', OWNER)).to.match(/\nheld [a-z0-9]{4}$/);
    await bot.send({ text: 'call mcpTool', senderId: OWNER });
    expect(lastText(model.requests.at(-1)!)).to.match(/^Held: tool_mcpTool waits for the owner's OK \([a-z0-9]{4}\)/);
    expect(await say('.do schedule', OWNER), 'a kind without a rule keeps the policy').to.equal('done');
    expect(done.map((d) => d.kind)).to.deep.equal(['schedule']);
    expect(ownerNotices()).to.have.length(2);
  });

  it('a hold tells the owner once what would happen; 👍 on that message runs it, once', async () => {
    bot = await start();
    expect(await say(`.do message ${CAROL}`, OWNER)).to.match(/⏳ Waiting for your OK \([a-z0-9]{4}\)[^]*\nheld [a-z0-9]{4}$/);
    const notice = ownerNotices();
    expect(notice).to.have.length(1);
    expect(notice[0]).to.include(`message for the test to ${CAROL}`).and.include('👍').and.include('.yes');
    expect(done).to.deep.equal([]);
    await bot.transport.reactTo('👍', OWNER, OWNER, noticeId());
    expect(done).to.deep.equal([{ kind: 'message', by: OWNER, to: CAROL, approved: true }]);
    expect(bot.replies(OWNER).at(-1)).to.match(/^✅ Done \([a-z0-9]{4}\)/);
    const again = await bot.transport.reactTo('👍', OWNER, OWNER, noticeId());
    expect(done, 'a second 👍 runs nothing').to.have.length(1);
    expect(again).to.deep.equal([]);
  });

  it('👎 on the message, or .no <id>, drops it; .yes <id> runs it; only an owner answers', async () => {
    bot = await start({ kinds: { publish: 'hold', schedule: 'hold', sendFile: 'hold' } });
    await bot.send({ text: '.do publish', senderId: BOB });
    await bot.transport.reactTo('👎', OWNER, OWNER);
    expect(bot.replies(OWNER).at(-1)).to.match(/^👎 Dropped/);
    await bot.send({ text: '.do schedule', senderId: BOB });
    const schedule = heldId(ownerNotices().at(-1));
    expect(await bot.send({ text: `.yes ${schedule}`, senderId: BOB }), 'a non-owner').to.deep.equal(['Sorry, only the owner answers held actions.']);
    expect(await bot.send({ text: `.no ${schedule}`, senderId: OWNER })).to.deep.equal([`👎 Dropped (${schedule}): schedule for the test`]);
    await bot.send({ text: '.do sendFile', senderId: BOB });
    const send = heldId(ownerNotices().at(-1));
    expect(await bot.send({ text: `.yes ${send}`, senderId: OWNER })).to.deep.equal([`✅ Done (${send}): sendFile for the test`]);
    expect(done).to.deep.equal([{ kind: 'sendFile', by: BOB, approved: true }]);
    expect(await bot.send({ text: `.yes ${schedule}`, senderId: OWNER }), 'a dropped one is gone').to.deep.equal([`Nothing is waiting under ${schedule}.`]);
  });

  it('a held tool call runs, once approved, as its person in its chat', async () => {
    bot = await start({ kinds: { deleteFiles: 'hold' } });
    await bot.send({ text: 'call deleteFiles', senderId: BOB });
    const id = heldId(ownerNotices().at(-1));
    const [told] = await bot.send({ text: `.yes ${id}`, senderId: OWNER });
    expect(told).to.equal('✅ Done: tool_deleteFiles: did it');
    expect(done).to.deep.equal([{ kind: 'tool_deleteFiles', by: BOB, approved: true }]);
  });

  it('a hold that lapses does nothing, even when approved afterwards', async () => {
    bot = await start({ holdMinutes: 5 });
    const clock = bot.useClock(['Date']);
    await bot.send({ text: `.do message ${CAROL}`, senderId: OWNER });
    const id = heldId(ownerNotices().at(-1));
    await clock.tick(5 * 60_000 + 1);
    const [told] = await bot.send({ text: `.yes ${id}`, senderId: OWNER });
    expect(told).to.match(new RegExp(`^${id} lapsed before your answer: nothing was done`));
    expect(done).to.deep.equal([]);
    expect(bot.replies(CAROL)).to.deep.equal([]);
  });

  it('a hold outlives a restart; the approved action is checked again when it runs (a policy now denying it wins)', async () => {
    bot = await start({ kinds: { publish: 'hold', schedule: 'hold' } });
    await bot.send({ text: '.do publish', senderId: BOB });
    const publish = heldId(ownerNotices().at(-1));
    await bot.send({ text: '.do schedule', senderId: BOB });
    const schedule = heldId(ownerNotices().at(-1));
    bot = await bot.restart({ config: { owners: [OWNER_DIGITS], access: { mode: 'everyone' }, sending: FAST_SENDING, guard: { kinds: { publish: 'hold', schedule: 'deny' } } } });
    expect((await bot.send({ text: `.yes ${publish}`, senderId: OWNER }))[0]).to.equal(`✅ Done (${publish}): publish for the test`);
    expect((await bot.send({ text: `.yes ${schedule}`, senderId: OWNER }))[0]).to.match(new RegExp(`^Not done \\(${schedule}\\): the owner's rules do not let`));
    expect(done.map((d) => d.kind)).to.deep.equal(['publish']);
  });

  it('a message the bot starts goes only to an owner, a let-in chat that wrote, or a recipient the owner approved', async () => {
    bot = await start();
    const stranger = '6281100000077@s.whatsapp.net';
    expect(await say(`.tell ${stranger} hi`, OWNER), 'a chat that never wrote').to.equal('refused: PLUGIN_RECIPIENT_REFUSED');
    expect(await say(`.tell ${OWNER} note to self`, BOB), 'an owner').to.equal('sent');
    expect(await say(`.tell ${CAROL} hi`, BOB), 'Carol has not written yet').to.equal('refused: PLUGIN_RECIPIENT_REFUSED');
    await bot.send({ text: '.ping', senderId: CAROL });
    expect(await say(`.tell ${CAROL} hi`, BOB), 'Carol wrote and is let in').to.equal('sent');
    bot = await bot.restart({ config: { owners: [OWNER_DIGITS], access: { mode: 'owners' }, sending: FAST_SENDING } });
    expect(await say(`.tell ${CAROL} hi`, OWNER), 'Carol is no longer let in').to.equal('refused: PLUGIN_RECIPIENT_REFUSED');
    // The owner approves the stranger as a recipient by saying 👍 to a message to them.
    await bot.app.bot.host('effector').effects.act({ effect: 'greet', to: stranger, summary: 'greet the stranger', data: { to: stranger } }, { senderId: OWNER, chatId: OWNER, isOwner: true });
    expect(bot.replies(stranger), 'held: nothing sent yet').to.deep.equal([]);
    await bot.transport.reactTo('👍', OWNER, OWNER, noticeId());
    expect(bot.replies(stranger)).to.deep.equal(['hello from the owner']);
    expect(await say(`.tell ${stranger} and again`, OWNER), 'an approved recipient').to.equal('sent');
    expect(bot.replies(stranger)).to.deep.equal(['hello from the owner', 'and again']);
  });

  it('an effect a plugin did not declare is refused', async () => {
    bot = await start();
    const said = await bot.send({ text: '.do launch', senderId: OWNER });
    expect(said).to.deep.equal(['Sorry, effector ran into an error and could not finish. The owner can find the details in the log.']);
    expect(done).to.deep.equal([]);
  });
});

export type { EffectKind };
