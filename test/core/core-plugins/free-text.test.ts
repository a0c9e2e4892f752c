import { expect } from 'chai';
import { definePlugin, type Plugin } from '../../../core/index.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

/** The last line of the first text reply. */
const lastLine = (actions: unknown[]) => String((actions.find((a) => (a as { type?: string }).type === 'text') as { text?: string } | undefined)?.text ?? '').split('\n').at(-1);
const texts = (actions: unknown[]) => actions.filter((a) => (a as { type?: string }).type === 'text').map((a) => (a as { text: string }).text);

/** A plugin that repeats any text; `declares` says whether it declares that it answers free text. */
function parrot(declares: boolean): Plugin {
  return definePlugin({
    name: 'parrot',
    description: 'Repeats what you say.',
    order: 1002,
    ...(declares ? { answersFreeText: true } : {}),
    setup: () => ({ predicates: [{ when: (ctx) => ctx.text.length > 0, run: (ctx) => ctx.reply(`parrot: ${ctx.text}`) }] }),
  });
}

/** Who answers free text is a declaration (answersFreeText), not a plugin name the kernel knows. */
describe('free text: answered by the plugin that declares it does', () => {
  let t: TestBot | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  it('with the chat plugin off, a plugin declaring answersFreeText answers free text and .help says so', async () => {
    t = await startTestBot(parrot(true), { config: { plugins: { chat: { enabled: false } } } });
    expect(texts(await t.transport.push({ text: 'hello there' }))).to.deep.equal(['parrot: hello there']);
    expect(lastLine(await t.transport.push({ text: '.help' }))).to.equal('Anything else is answered by parrot (repeats what you say).');
    // Unknown commands are still the help plugin's, which comes before it.
    expect(texts(await t.transport.push({ text: '.nosuch' }))[0]).to.match(/^Unknown command \.nosuch/);
    // Turned off by the owner, it no longer counts: help says only commands are answered.
    t.app.bot.setConfig({ ...t.app.bot.config, plugins: { ...t.app.bot.config.plugins, parrot: { enabled: false } } });
    expect(lastLine(await t.transport.push({ text: '.help' }))).to.equal('I answer only these commands here.');
  });

  it('a plugin that answers free text without declaring it is not announced by .help', async () => {
    t = await startTestBot(parrot(false), { config: { plugins: { chat: { enabled: false } } } });
    expect(texts(await t.transport.push({ text: 'hello there' }))).to.deep.equal(['parrot: hello there']);
    expect(lastLine(await t.transport.push({ text: '.help' }))).to.equal('I answer only these commands here.');
  });

  it('the core chat plugin declares it too: with it on, .help says the AI answers', async () => {
    t = await startTestBot([], { env: { API_KEY: 'test-key-123456', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm' } });
    expect(t.app.bot.plugins().find((s) => s.plugin.answersFreeText)?.core).to.not.equal(undefined);
    expect(lastLine(await t.transport.push({ text: '.help' }))).to.equal('Anything else is answered by the AI.');
  });
});
