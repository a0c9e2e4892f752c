import assert from 'node:assert/strict';
import { definePlugin } from '../../../core/index.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

const OWNER = '10000000001';
const STRANGER = '19990000002@s.whatsapp.net';

function tool(name: string, needs?: string[]) {
  return { name, description: `the ${name} tool`, parameters: { type: 'object', properties: {} }, ...(needs ? { needs } : {}), effects: { outsideText: false, acts: 'nothing' as const }, run: () => name };
}

const lookup = definePlugin({ name: 'lookup', description: 'a fixed tool', setup: () => ({ tools: [tool('lookup_tool')] }) });
const speech = definePlugin({ name: 'speech', description: 'a tool needing a capability', setup: () => ({ tools: [tool('speak_tool', ['python'])] }) });

/** The tool list is kept between messages; whatever changes which tools a chat gets must show on the very next one. */
describe('tool offers: the kept tool list follows every change at once', function () {
  this.timeout(20_000);
  let bot: TestBot | undefined;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });

  const offered = (text: string, senderId?: string) => bot!.send(senderId ? { text, senderId } : text);
  const start = (plugins = [lookup]) => startTestBot(plugins, { config: { owners: [OWNER], access: { mode: 'everyone' } } as never, model: (r) => `tools: ${[...r.tools].sort().join(',')}` });

  it('stops offering a plugin\'s tools on the next message after the owner disables it, and offers them again when enabled', async () => {
    bot = await start();
    assert.deepEqual(await offered('one'), ['tools: lookup_tool,remember']);
    assert.deepEqual(await offered('two'), ['tools: lookup_tool,remember']);
    const config = bot.app.bot.config;
    bot.app.bot.setConfig({ ...config, plugins: { ...config.plugins, lookup: { enabled: false } } });
    assert.deepEqual(await offered('three'), ['tools: remember']);
    bot.app.bot.setConfig({ ...config, plugins: { ...config.plugins, lookup: { enabled: true } } });
    assert.deepEqual(await offered('four'), ['tools: lookup_tool,remember']);
  });

  it('stops offering a plugin\'s tools to a sender on the next message after its access becomes owners only, and keeps them for the owner', async () => {
    bot = await start();
    assert.deepEqual(await offered('one', STRANGER), ['tools: lookup_tool,remember']);
    assert.deepEqual(await offered('two', STRANGER), ['tools: lookup_tool,remember']);
    const config = bot.app.bot.config;
    bot.app.bot.setConfig({ ...config, plugins: { ...config.plugins, lookup: { access: 'owners' } } });
    assert.deepEqual(await offered('three', STRANGER), ['tools: remember']);
    assert.deepEqual(await offered('four'), ['tools: lookup_tool,remember']);
  });

  it('keeps each sender\'s own list: an owner-only tool offered to the owner is not offered to a stranger next', async () => {
    bot = await start();
    const config = bot.app.bot.config;
    bot.app.bot.setConfig({ ...config, plugins: { ...config.plugins, lookup: { access: [OWNER] } } });
    assert.deepEqual(await offered('one'), ['tools: lookup_tool,remember']);
    assert.deepEqual(await offered('two', STRANGER), ['tools: remember']);
    assert.deepEqual(await offered('three'), ['tools: lookup_tool,remember']);
  });

  it('stops offering a tool on the next message after a capability it needs is lost at run time, and offers it when back', async () => {
    bot = await start([lookup, speech]);
    let voice = true; // python's check, made live here: a capability that changes while the bot runs
    bot.app.bot.capabilities.setLive('python', () => ({ ok: voice, detail: voice ? 'on' : 'off' }) as never, () => voice);
    assert.deepEqual(await offered('one'), ['tools: lookup_tool,remember,speak_tool']);
    voice = false;
    assert.deepEqual(await offered('two'), ['tools: lookup_tool,remember']);
    voice = true;
    assert.deepEqual(await offered('three'), ['tools: lookup_tool,remember,speak_tool']);
  });

  it('stops offering a plugin\'s tools on the next message after the plugin leaves the active ones with the config unchanged', async () => {
    bot = await start();
    assert.deepEqual(await offered('one'), ['tools: lookup_tool,remember']);
    // What the registry does when it refuses a plugin: it is off and not started, whatever config.json says.
    const state = bot.app.bot.plugins().find((s) => s.plugin.name === 'lookup')!;
    state.started = false;
    assert.deepEqual(await offered('two'), ['tools: remember']);
    state.started = true;
    assert.deepEqual(await offered('three'), ['tools: lookup_tool,remember']);
  });

  it('hands out the same frozen list while nothing changed, so no caller can change what the next message gets', async () => {
    bot = await start();
    const chat = '10000000009@s.whatsapp.net';
    const ctx = (text: string) => ({ message: { id: text, chatId: chat, senderId: chat, text, isGroup: false }, chatId: chat, senderId: chat }) as never;
    const first = bot.app.bot.toolsFor(ctx('one'));
    assert.equal(bot.app.bot.toolsFor(ctx('two')), first);
    assert.throws(() => first.push(first[0]));
  });
});
