import { expect } from 'chai';
import { definePlugin } from '../../../core/index.js';
import type { Plugin } from '../../../core/kernel/plugin/spec.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

/** Three plugins whose triggers overlap, in this routing order: which handler answers shows the order held. */
function overlapping(): Plugin[] {
  return [
    definePlugin({
      name: 'jam-command',
      description: 'a command that a later predicate also matches',
      order: 10,
      setup: () => ({ commands: [{ command: 'jam', run: (ctx) => ctx.reply(`command jam ${ctx.args}`) }] }),
    }),
    definePlugin({
      name: 'jam-predicate',
      description: 'a predicate, with a literal and a media handler before it in order',
      order: 20,
      setup: () => ({
        literals: [{ literal: '/Jar', run: (ctx) => ctx.reply('literal /jar') }],
        media: [{ media: 'image', run: (ctx) => ctx.reply(`image ${ctx.text}`) }],
        predicates: [{ when: (ctx) => /jam/i.test(ctx.text), run: (ctx) => ctx.reply('predicate jam') }],
      }),
    }),
    definePlugin({
      name: 'late',
      description: 'a predicate and a command of a later plugin',
      order: 30,
      setup: () => ({
        commands: [{ command: 'late', run: (ctx) => ctx.reply('command late') }],
        predicates: [{ when: (ctx) => ctx.text.endsWith('!'), run: (ctx) => ctx.reply('predicate !') }],
      }),
    }),
  ];
}

describe('routing: the first handler in routing order answers, whatever kind of trigger it has', () => {
  let t: TestBot | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });
  const say = async (input: Parameters<TestBot['transport']['push']>[0]) =>
    (await t!.transport.push(input)).filter((a) => a.type === 'text').map((a) => (a as { text: string }).text);

  it('commands (any case), literals, media and predicates, in plugin order; a switched-off plugin steps aside at once', async () => {
    t = await startTestBot(overlapping());
    expect(await say({ text: '.JAM please' })).to.deep.equal(['command jam please']);
    expect(await say({ text: 'strawberry jam' })).to.deep.equal(['predicate jam']);
    expect(await say({ text: '/jar' })).to.deep.equal(['literal /jar']);
    // The literal's plugin comes before the predicate's: "/JAR now!" is the literal's.
    expect(await say({ text: '/JAR now!' })).to.deep.equal(['literal /jar']);
    expect(await say({ text: 'really!' })).to.deep.equal(['predicate !']);
    expect(await say({ text: '.late' })).to.deep.equal(['command late']);
    // An earlier plugin's predicate comes before a later plugin's command.
    expect(await say({ text: '.late for the jam' })).to.deep.equal(['predicate jam']);
    // A photo whose caption the earlier predicate matches goes to the media handler (media and predicate are in one plugin, media first).
    const photo = { kind: 'image' as const, mimetype: 'image/jpeg', download: async () => Buffer.from('') };
    expect(await say({ text: 'jam on toast', media: photo })).to.deep.equal(['image jam on toast']);
    // The same command word with a photo meets the media handler of an earlier plugin first (without one, the command).
    expect(await say({ text: '.late', media: photo })).to.deep.equal(['image .late']);
    expect(await say({ text: '.late' })).to.deep.equal(['command late']);
    expect(await say({ text: '.jamboree' })).to.deep.equal(['predicate jam']);

    const config = t.app.bot.config;
    t.app.bot.setConfig({ ...config, plugins: { ...config.plugins, 'jam-command': { enabled: false } } });
    // The command's plugin is off: the predicate behind it now takes its command word too.
    expect(await say({ text: '.jam please' })).to.deep.equal(['predicate jam']);
    t.app.bot.setConfig({ ...config, plugins: { ...config.plugins, 'jam-predicate': { enabled: false } } });
    expect(await say({ text: '.jam please' })).to.deep.equal(['command jam please']);
    expect(await say({ text: 'jam!' })).to.deep.equal(['predicate !']);
    // A prefix change reaches the commands at once.
    t.app.bot.setConfig({ ...t.app.bot.config, prefix: '!' });
    expect(await say({ text: '!late' })).to.deep.equal(['command late']);
  });
});
