import { expect } from 'chai';
import { definePlugin, Type, type MessageContext } from '../../../core/index.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

/** The context a message gets and what each plugin sees of it: its own options and logger, the message's replies. */
describe('a message context as plugins see it', () => {
  let t: TestBot | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  const seen: Array<{ plugin: string; ctx: MessageContext<{ sides: number }> }> = [];
  const dice = definePlugin({
    name: 'dice',
    description: 'rolls with its own sides',
    options: Type.Object({ sides: Type.Integer({ minimum: 2, default: 6 }) }),
    setup: () => ({
      observers: [(ctx) => void seen.push({ plugin: 'dice', ctx })],
      commands: [{
        command: 'roll',
        run: async (ctx) => {
          seen.push({ plugin: 'dice-handler', ctx });
          ctx.log.info({ sides: ctx.host.options().sides }, 'rolling');
          // Taken off the context: a reply function works without its object.
          const { reply, react } = ctx;
          await react('🎲');
          await reply(`d${ctx.host.options().sides} ${ctx.args}`, { quote: true });
          await ctx.history.recordIncoming('.roll (recorded)');
          await ctx.history.recordIncoming('twice');
        },
      }],
    }),
  });
  const coin = definePlugin({
    name: 'coin',
    description: 'a second plugin with an option of the same name',
    options: Type.Object({ sides: Type.Integer({ minimum: 2, default: 2 }) }),
    setup: () => ({ observers: [(ctx) => void seen.push({ plugin: 'coin', ctx })] }),
  });

  it('each plugin sees its own options and logger on the same message; replies, reactions and history are bound to the chat', async () => {
    seen.length = 0;
    t = await startTestBot([dice, coin], { config: { plugins: { dice: { enabled: true, sides: 20 }, coin: { enabled: true } } } });
    const actions = await t.transport.push({ chatId: 'chat-a@s.whatsapp.net', text: '.roll  twice ' });
    const replies = actions.filter((a) => a.type === 'text') as Array<{ chatId: string; text: string; quotedId?: string }>;
    expect(replies.map((r) => [r.chatId, r.text])).to.deep.equal([['chat-a@s.whatsapp.net', 'd20 twice']]);
    expect(replies[0].quotedId).to.be.a('string').and.not.equal('');
    expect(actions.filter((a) => a.type === 'react').map((a) => [(a as { chatId: string }).chatId, (a as { messageId: string }).messageId])).to.deep.equal([['chat-a@s.whatsapp.net', replies[0].quotedId]]);

    const byPlugin = new Map(seen.map((s) => [s.plugin, s.ctx]));
    expect(byPlugin.get('dice')!.host.options().sides).to.equal(20);
    expect(byPlugin.get('coin')!.host.options().sides).to.equal(2);
    // Two plugins' views of one message: the same message underneath.
    expect(byPlugin.get('dice')!.message).to.equal(byPlugin.get('coin')!.message);
    for (const ctx of byPlugin.values()) expect([ctx.chatId, ctx.text]).to.deep.equal(['chat-a@s.whatsapp.net', '.roll  twice']);

    const rolling = t.logs().find((l) => l.msg === 'rolling');
    expect(rolling).to.include({ plugin: 'dice', chat: 'chat-a@s.whatsapp.net', sides: 20 });
    // Recorded once, as the plugin said it; the core does not record the message again.
    const history = await t.app.bot.histories.recent('chat-a@s.whatsapp.net');
    expect(history.filter((e) => e.role === 'user').map((e) => e.text)).to.deep.equal(['.roll (recorded)']);
  });

  it('two messages get two contexts: nothing of one reaches the other', async () => {
    seen.length = 0;
    t = await startTestBot([dice, coin], { config: { plugins: { dice: { enabled: true }, coin: { enabled: true } } } });
    await t.transport.push({ chatId: 'chat-a@s.whatsapp.net', text: '.roll one' });
    await t.transport.push({ chatId: 'chat-b@s.whatsapp.net', text: '.roll two' });
    const handlers = seen.filter((s) => s.plugin === 'dice-handler').map((s) => s.ctx);
    expect(handlers.map((c) => c.chatId)).to.deep.equal(['chat-a@s.whatsapp.net', 'chat-b@s.whatsapp.net']);
    expect(handlers[0].message).to.not.equal(handlers[1].message);
    const observers = seen.filter((s) => s.plugin === 'dice').map((s) => s.ctx);
    expect(observers[0]).to.not.equal(observers[1]);
    expect(observers[1].text).to.equal('.roll two');
  });
});
