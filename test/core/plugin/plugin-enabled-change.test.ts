import { expect } from 'chai';
import { definePlugin, type PluginHost } from '../../../core/index.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

/**
 * `host.enabled()` and `host.onEnabledChange`: a plugin with work of its own (timers) learns when the owner switches
 * it off or on, as a dashboard save does (`bot.setConfig`), and a listener that throws harms nobody.
 */
describe('plugins hear when the owner switches them on or off', () => {
  let bot: TestBot | undefined;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });

  it('enabled() follows config.json; each change (and only a change) reaches every listener, a throwing one included', async () => {
    const heard: string[] = [];
    let host: PluginHost | undefined;
    let unsubscribe: (() => void) | undefined;
    const switchy = definePlugin({
      name: 'switchy',
      description: 'records being switched',
      setup(h) {
        host = h;
        heard.push(`setup enabled=${h.enabled()}`);
        h.onEnabledChange(() => {
          throw new Error('listener broke');
        });
        unsubscribe = h.onEnabledChange((on) => void heard.push(`changed to ${on}, enabled()=${h.enabled()}`));
        return { commands: [{ command: 'sw', run: (ctx) => ctx.reply('here') }], stop: unsubscribe };
      },
    });
    bot = await startTestBot(switchy);
    const config = bot.app.bot.config;
    const section = (enabled: boolean) => ({ ...config, plugins: { ...config.plugins, switchy: { ...config.plugins.switchy, enabled } } });

    bot.app.bot.setConfig(section(false));
    await new Promise((resolve) => setImmediate(resolve));
    expect(host!.enabled()).to.equal(false);
    expect((await bot.send('.sw'))[0]).to.match(/turned off|switched off/i);
    bot.app.bot.setConfig({ ...section(false), prefix: config.prefix });
    bot.app.bot.setConfig(section(true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(heard).to.deep.equal(['setup enabled=true', 'changed to false, enabled()=false', 'changed to true, enabled()=true']);
    expect(await bot.send('.sw')).to.deep.equal(['here']);
    const broke = bot.logs().filter((l) => l.level === 50 && l.plugin === 'switchy');
    expect(broke.map((l) => l.msg)).to.deep.equal(['plugin switchy failed to handle being switched off', 'plugin switchy failed to handle being switched on']);

    // A listener that unsubscribed hears nothing more.
    unsubscribe!();
    bot.app.bot.setConfig(section(false));
    await new Promise((resolve) => setImmediate(resolve));
    expect(heard).to.have.length(3);
  });
});
