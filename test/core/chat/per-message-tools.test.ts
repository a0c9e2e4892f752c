import assert from 'node:assert/strict';
import { definePlugin } from '../../../core/index.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { FakeModel } from '../../../app/testing/fake-model.js';

const OWNER = '10000000001';
const STRANGER = '19990000002@s.whatsapp.net';

function tool(name: string, answer = name) {
  return { name, description: `the ${name} tool`, parameters: { type: 'object', properties: {} }, effects: { outsideText: false, acts: 'nothing' as const }, run: () => answer };
}

/** Tools given as a function of the message: offered per call, so a plugin can tie them to who asks or where. */
const perSender = definePlugin({
  name: 'per-sender',
  description: 'offers a tool to owners only, decided per message',
  setup: () => ({ tools: (ctx) => (ctx.isOwner ? [tool('owner_only', 'secret owner answer')] : []) }),
});

describe('plugin contract v2: tools given per message', function () {
  this.timeout(20_000);
  let bot: TestBot | undefined;
  let t: TestBot | undefined;
  let model: FakeModel | undefined;
  afterEach(async () => {
    await bot?.stop();
    await t?.stop();
    await model?.close();
    bot = t = model = undefined;
  });

  it('offers the tools the function gives for this message, and runs them with the plugin bound in', async () => {
    bot = await startTestBot(perSender, {
      config: { owners: [OWNER] },
      model: (r) => (r.messages.at(-1)?.role === 'tool' ? `got ${String(r.messages.at(-1)?.content)}` : r.tools.includes('owner_only') ? { tool: 'owner_only', args: {} } : `tools: ${r.tools.join(',')}`),
    });
    assert.deepEqual(await bot.send('hi'), ['got secret owner answer']);
    assert.deepEqual(await bot.send({ text: 'hi', senderId: STRANGER }), ['tools: remember']);
  });

  it("leaves out a per-message tool whose name another plugin already has, with a log line, and keeps the other's", async () => {
    const fixed = definePlugin({ name: 'fixed', description: 'a fixed tool', setup: () => ({ tools: [tool('shared_name', 'from fixed')] }) });
    const dynamic = definePlugin({ name: 'dynamic', description: 'a clashing per-message tool', setup: () => ({ tools: () => [tool('shared_name', 'from dynamic'), tool('remember'), tool('dynamic_only')] }) });
    model = await FakeModel.start((r) => (r.messages.at(-1)?.role === 'tool' ? `got ${String(r.messages.at(-1)?.content)}` : { tool: 'shared_name', args: {} }));
    t = await startTestBot([fixed, dynamic], { config: { owners: [OWNER] }, env: { BASE_URL: model.url } });
    const actions = await t.transport.push({ text: 'use the shared tool' });
    assert.deepEqual(actions.filter((a) => a.type === 'text').map((a) => (a as { text: string }).text), ['got from fixed']);
    assert.deepEqual([...model.requests[0].tools].sort(), ['dynamic_only', 'remember', 'shared_name']);
    const clashes = t.logs().filter((l) => /offers a tool "(shared_name|remember)" that .* already has; it is not offered/.test(String(l.msg)));
    assert.deepEqual(clashes.map((l) => l.tool).sort(), ['remember', 'shared_name']);
  });

  it('offers what the function gives for each message of the same sender, however often it changes, and leaves out a name another per-message tool took first', async () => {
    const base = tool('base_tool');
    const extra = tool('extra_tool');
    const changing = definePlugin({ name: 'changing', description: 'more tools when asked', setup: () => ({ tools: (ctx) => (ctx.text.includes('extra') ? [base, extra] : [base]) }) });
    const late = definePlugin({ name: 'late', description: 'a clash with a per-message tool', setup: () => ({ tools: () => [tool('extra_tool', 'from late'), tool('late_tool')] }) });
    // The model calls extra_tool when offered, and says whose answer came back.
    bot = await startTestBot([changing, late], { model: (r) => (r.messages.at(-1)?.role === 'tool' ? `got ${String(r.messages.at(-1)?.content)}` : { tool: 'extra_tool', args: {} }) });
    for (let i = 0; i < 2; i++) {
      assert.deepEqual(await bot.send('plain'), ['got from late']);
      // The late plugin's extra_tool is its own only while the changing plugin does not offer one.
      assert.deepEqual(await bot.send('with extra'), ['got extra_tool']);
    }
    const clashes = bot.logs().filter((l) => /offers a tool "extra_tool" that plugin "changing" already has; it is not offered/.test(String(l.msg)));
    assert.equal(clashes.length, 2);
  });

  it('offers a per-message tool the plugin gives as the same object as the same tool message after message (its JSON is made once)', async () => {
    const steady = tool('steady_tool');
    const plugin = definePlugin({ name: 'steady', description: 'the same tool object each message', setup: () => ({ tools: () => [steady] }) });
    bot = await startTestBot(plugin, { model: (r) => `tools: ${r.tools.join(',')}` });
    const chat = '10000000009@s.whatsapp.net';
    const ctx = (text: string) => ({ message: { id: text, chatId: chat, senderId: chat, text, isGroup: false }, chatId: chat, senderId: chat }) as never;
    const first = bot.app.bot.toolsFor(ctx('one')).find((x) => x.name === 'steady_tool');
    const second = bot.app.bot.toolsFor(ctx('two')).find((x) => x.name === 'steady_tool');
    assert.ok(first, 'the tool is offered');
    assert.equal(second, first);
    assert.deepEqual(await bot.send('hi'), ['tools: remember,steady_tool']);
  });

  it('offers none of a plugin\'s per-message tools when the function throws, and still answers', async () => {
    const broken = definePlugin({ name: 'broken', description: 'throws', setup: () => ({ tools: () => { throw new Error('boom'); } }) });
    bot = await startTestBot(broken, { model: (r) => `tools: ${r.tools.join(',')}` });
    assert.deepEqual(await bot.send('hi'), ['tools: remember']);
    assert.ok(bot.logs().some((l) => /plugin tools could not be listed/.test(String(l.msg))));
  });
});
