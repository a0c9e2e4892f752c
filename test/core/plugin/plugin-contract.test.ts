import Router from '@koa/router';
import { expect } from 'chai';
import { readOptions } from '../../../web/dashboard/option-form.js';
import Koa from 'koa';
import { cpSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { definePlugin, PluginError, Store, Type, type Plugin } from '../../../core/index.js';
import { mountSites } from '../../../web/site-server.js';
import { contentOf, startTestBot, type TestBot } from '../../../app/testing/index.js';
import { discoverPlugins } from '../../../core/kernel/plugin/discover.js';
import { ROOT, tempDir } from '../../helpers/checkout.js';
import { csrfOf, login, request, sameOrigin, startWebTest, TOKEN } from '../../web/web-helpers.js';

/** A project folder where the fixture package is installed beside the bot, as `npm install wa-plugin-greeter` would. */
async function projectWithGreeter(): Promise<string> {
  const dir = await tempDir('plugin-package-');
  mkdirSync(path.join(dir, 'node_modules'));
  symlinkSync(ROOT, path.join(dir, 'node_modules', 'wa-assistant-bot'));
  // Copied, not linked: Node resolves a linked package from its real path, which is inside this repository.
  cpSync(path.join(ROOT, 'test', 'fixtures', 'wa-plugin-greeter'), path.join(dir, 'node_modules', 'wa-plugin-greeter'), { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module', dependencies: { 'wa-plugin-greeter': '1.0.0' } }));
  return dir;
}

function tool(name: string) {
  return { name, description: `the ${name} tool`, parameters: { type: 'object', properties: {} }, run: () => name };
}

describe('plugin contract v2', () => {
  describe('a plugin in its own package, importing only wa-assistant-bot/plugin', () => {
    let dir: string;
    let greeter: Plugin;
    let bot: TestBot | undefined;

    before(async () => {
      dir = await projectWithGreeter();
      const found = await discoverPlugins(path.join(dir, 'plugins'), ['wa-plugin-greeter'], dir);
      expect(found.failures).to.deep.equal([]);
      expect(found.plugins.map((p) => p.name)).to.deep.equal(['greeter']);
      greeter = found.plugins[0];
    });
    afterEach(async () => {
      await bot?.stop();
      bot = undefined;
    });
    after(() => rm(dir, { recursive: true, force: true }));

    it('answers its command with the option default, and with the configured option', async () => {
      bot = await startTestBot(greeter);
      expect(await bot.send('.greet Ana')).to.deep.equal(['Hello, Ana!']);
      expect(await bot.send('.greet')).to.deep.equal(['Hello, stranger!']);
      await bot.stop();
      bot = await startTestBot(greeter, { options: { greeting: 'Selamat pagi' } });
      expect(await bot.send('.GREET Budi')).to.deep.equal(['Selamat pagi, Budi!']);
    });

    it('hands its tool the typed options with defaults (not an empty object)', async () => {
      bot = await startTestBot(greeter, {
        options: { greeting: 'Howdy' },
        model: (request) => (request.messages.at(-1)?.role === 'tool' ? `the word is ${contentOf(String(request.messages.at(-1)?.content))}` : { tool: 'greeting_word', args: {} }),
      });
      expect(await bot.send('how do you greet people?')).to.deep.equal(['the word is Howdy']);
      expect(bot.model.requests[0].tools).to.include('greeting_word');
    });

    it('hands its site (served through the web server) the same options', async () => {
      bot = await startTestBot(greeter, { options: { greeting: 'Ahoy' } });
      const router = new Router();
      mountSites(bot.app, router);
      const server = new Koa().use(router.routes()).listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      try {
        const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/greeter/word`);
        expect(await response.text()).to.equal('Ahoy');
      } finally {
        server.close();
      }
    });

    it('refuses an option its schema rejects at start, naming the field', async () => {
      let error: Error | undefined;
      await startTestBot(greeter, { options: { greeting: '' } }).then((b) => (bot = b), (err: Error) => (error = err));
      expect(error?.message).to.include('plugins.greeter.greeting: must NOT have fewer than 1 characters');
    });

    it('is refused with PLUGIN_DUPLICATE_NAME when a plugin folder of the same name exists, naming both', async () => {
      cpSync(path.join(ROOT, 'test', 'fixtures', 'wa-plugin-greeter'), path.join(dir, 'plugins', 'greeter'), { recursive: true });
      const found = await discoverPlugins(path.join(dir, 'plugins'), ['wa-plugin-greeter'], dir);
      expect(found.plugins).to.have.length(1);
      expect(found.failures).to.have.length(1);
      expect(found.failures[0].source).to.equal('package wa-plugin-greeter');
      expect(found.failures[0].reason).to.match(/^PLUGIN_DUPLICATE_NAME: .*"greeter".*package wa-plugin-greeter.*plugins\/greeter/);
    });
  });

  describe('registration errors: the bot stays up, the later plugin stays off and the log and pluginFailures say why', () => {
    let t: TestBot | undefined;
    afterEach(async () => {
      await t?.stop();
      t = undefined;
    });

    const first = definePlugin({
      name: 'first',
      description: 'the first of two',
      setup: () => ({ commands: [{ command: 'hello', run: (ctx) => ctx.reply('first here') }], tools: [tool('lookup')] }),
    });

    it('PLUGIN_DUPLICATE_TOOL: two plugins offering the same tool name', async () => {
      const second = definePlugin({ name: 'second', description: 'clashes on a tool', setup: () => ({ commands: [{ command: 'second', run: (ctx) => ctx.reply('second here') }], tools: [tool('lookup')] }) });
      t = await startTestBot([first, second]);
      const failure = t.app.pluginFailures.find((f) => f.source === 'plugin second');
      expect(failure?.reason).to.match(/^PLUGIN_DUPLICATE_TOOL: plugin "second" offers tool "lookup", which plugin "first" already offers/);
      expect(t.app.bot.plugins().find((s) => s.plugin.name === 'second')).to.include({ enabled: false, started: false });
      expect(t.logs().some((l) => l.code === 'PLUGIN_DUPLICATE_TOOL' && l.level === 50)).to.equal(true);
      expect(((await t.transport.push({ text: '.hello' }))[0] as { text: string }).text).to.equal('first here');
      expect(((await t.transport.push({ text: '.second' }))[0] as { text: string }).text).to.match(/^Unknown command \.second/);
      const offered = t.app.bot.toolsFor((t.app.bot as unknown as { createContext: (m: unknown, text: string) => never }).createContext(t.transport.message({ text: 'x' }), 'x'));
      expect(offered.filter((o) => o.name === 'lookup')).to.have.length(1);
    });

    it('PLUGIN_DUPLICATE_TOOL: a plugin taking the core\'s remember tool', async () => {
      const thief = definePlugin({ name: 'thief', description: 'takes a core tool', setup: () => ({ tools: [tool('remember')] }) });
      t = await startTestBot(thief);
      expect(t.app.pluginFailures.map((f) => f.reason)).to.deep.equal([
        'PLUGIN_DUPLICATE_TOOL: plugin "thief" offers tool "remember", which the core already offers to the model; rename the tool (e.g. "thief_remember")',
      ]);
    });

    it('PLUGIN_DUPLICATE_COMMAND: two plugins answering the same command, or the core\'s .help', async () => {
      const echo = definePlugin({ name: 'echo', description: 'clashes on .hello', setup: () => ({ commands: [{ command: 'HELLO', run: (ctx) => ctx.reply('echo here') }] }) });
      const helper = definePlugin({ name: 'helper', description: 'clashes on .help', setup: () => ({ commands: [{ command: 'help', run: (ctx) => ctx.reply('mine') }] }) });
      t = await startTestBot([first, echo, helper]);
      const reasons = t.app.pluginFailures.map((f) => f.reason);
      expect(reasons[0]).to.match(/^PLUGIN_DUPLICATE_COMMAND: plugin "echo" answers \.hello, which plugin "first" already answers/);
      expect(reasons[1]).to.match(/^PLUGIN_DUPLICATE_COMMAND: plugin "helper" answers \.help, which the core already answers/);
      expect(((await t.transport.push({ text: '.hello' }))[0] as { text: string }).text).to.equal('first here');
      expect(((await t.transport.push({ text: '.help' }))[0] as { text: string }).text).to.include('here is what I can do');
    });

    it('PLUGIN_DUPLICATE_COMMAND: two plugins answering the same literal word, or the core\'s /help', async () => {
      const sites = definePlugin({ name: 'sites', description: 'answers /ws', setup: () => ({ literals: [{ literal: '/ws', run: (ctx) => ctx.reply('sites here') }] }) });
      const copy = definePlugin({ name: 'copy', description: 'clashes on /ws', setup: () => ({ literals: [{ literal: '/WS', run: (ctx) => ctx.reply('copy here') }] }) });
      const helpful = definePlugin({ name: 'helpful', description: 'clashes on /help', setup: () => ({ literals: [{ literal: '/help', run: (ctx) => ctx.reply('mine') }] }) });
      t = await startTestBot([sites, copy, helpful]);
      expect(t.app.pluginFailures.map((f) => f.reason)).to.deep.equal([
        'PLUGIN_DUPLICATE_COMMAND: plugin "copy" answers /ws, which plugin "sites" already answers; rename the command (or turn one of the plugins off)',
        'PLUGIN_DUPLICATE_COMMAND: plugin "helpful" answers /help, which the core already answers; rename the command (or turn one of the plugins off)',
      ]);
      expect(((await t.transport.push({ text: '/ws' }))[0] as { text: string }).text).to.equal('sites here');
      expect(((await t.transport.push({ text: '/help' }))[0] as { text: string }).text).to.include('here is what I can do');
    });

    it('PLUGIN_UNKNOWN_NEED: a typo in needs, in a plugin or in one of its tools', async () => {
      const typo = definePlugin({ name: 'typo', description: 'needs a misspelt capability', needs: ['pyhton'], setup: () => ({ commands: [{ command: 'find', run: (ctx) => ctx.reply('found') }] }) });
      const toolTypo = definePlugin({ name: 'tool-typo', description: 'a tool needs a misspelt capability', setup: () => ({ tools: [{ ...tool('look'), needs: ['ffmepg'] }] }) });
      t = await startTestBot([typo, toolTypo, first]);
      const reasons = t.app.pluginFailures.map((f) => f.reason);
      expect(reasons[0]).to.match(/^PLUGIN_UNKNOWN_NEED: plugin "typo" needs "pyhton", but no capability of that name exists \(known: [^)]*python[^)]*\)/);
      expect(reasons[1]).to.match(/^PLUGIN_UNKNOWN_NEED: plugin "tool-typo" needs "ffmepg"/);
      expect(((await t.transport.push({ text: '.find' }))[0] as { text: string }).text).to.match(/^Unknown command/);
      expect(((await t.transport.push({ text: '.hello' }))[0] as { text: string }).text).to.equal('first here');
    });

    it('PLUGIN_DUPLICATE_CAPABILITY: a plugin providing a capability the core (or an earlier plugin) has', async () => {
      const chatty = definePlugin({ name: 'chatty', description: 'provides chat again', provides: [{ name: 'chat', detect: () => true, missing: 'never' }], setup: () => ({}) });
      // The refused plugin's detection replaces neither the core's nor an earlier plugin's: the start-log table keeps theirs.
      const weather = definePlugin({ name: 'weather', description: 'owns weather', provides: [{ name: 'weather', detect: () => ({ ok: true, detail: 'weather service reachable' }), missing: 'no weather key' }], setup: () => ({}) });
      const copycat = definePlugin({ name: 'copycat', description: 'provides weather again', provides: [{ name: 'weather', detect: () => false, missing: 'copycat has no weather' }], setup: () => ({}) });
      t = await startTestBot([chatty, weather, copycat], { env: { API_KEY: 'test-key-123456', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm' } });
      const reasons = t.app.pluginFailures.map((f) => f.reason);
      expect(reasons[0]).to.match(/^PLUGIN_DUPLICATE_CAPABILITY: plugin "chatty" provides capability "chat", which the core already provides/);
      expect(reasons[1]).to.match(/^PLUGIN_DUPLICATE_CAPABILITY: plugin "copycat" provides capability "weather", which plugin "weather" already provides/);
      expect(t.app.capabilities.status('weather')).to.deep.equal({ ok: true, detail: 'weather service reachable' });
      expect(t.app.capabilities.status('chat').detail).not.to.equal('never');
      expect(t.app.capabilities.status('chat').ok).to.equal(true);
    });

    it('PLUGIN_REMOVED_PART: a plugin still offering patterns is refused in words, not started with handlers that never run', async () => {
      const weather = definePlugin({
        name: 'old-weather',
        description: 'written against the contract that had patterns',
        // The contract's types no longer have patterns, so a plugin compiled against them cannot offer them: an older build can.
        setup: () => ({ commands: [{ command: 'forecast', run: (ctx) => ctx.reply('forecast') }], ...({ patterns: [{ pattern: /^weather in (\w+)$/i, run: () => undefined }] } as object) }),
      });
      t = await startTestBot([weather, first]);
      const reasons = t.app.pluginFailures.map((f) => f.reason);
      expect(reasons).to.have.length(1);
      expect(reasons[0]).to.match(/^PLUGIN_REMOVED_PART: plugin "old-weather" offers patterns, which the plugin contract no longer has, so they would never run; make each one a predicate that tests the text/);
      expect(t.app.bot.plugins().find((s) => s.plugin.name === 'old-weather')).to.include({ enabled: false, started: false });
      expect(t.logs().some((l) => l.code === 'PLUGIN_REMOVED_PART' && l.level === 50)).to.equal(true);
      // Off as a whole: its command is not answered either, and the bot goes on answering the others.
      expect(((await t.transport.push({ text: '.forecast' }))[0] as { text: string }).text).to.match(/^Unknown command \.forecast/);
      expect(((await t.transport.push({ text: '.hello' }))[0] as { text: string }).text).to.equal('first here');
    });

    it('a provided capability is detected, shown in the start-log table, and needed by name by another plugin', async () => {
      const owner = definePlugin({ name: 'owner', description: 'owns a capability', provides: [{ name: 'weather', detect: () => false, missing: 'no WEATHER_API_KEY set' }], settings: [{ name: 'WEATHER_API_KEY', description: 'key of the weather service' }], setup: () => ({}) });
      const user = definePlugin({ name: 'user', description: 'needs it', needs: ['weather'], missing: 'No weather service is configured.', setup: () => ({ commands: [{ command: 'weather', run: (ctx) => ctx.reply('sunny') }] }) });
      t = await startTestBot([user, owner]);
      expect(t.app.pluginFailures).to.deep.equal([]);
      expect(t.app.capabilities.status('weather')).to.deep.equal({ ok: false, detail: 'no WEATHER_API_KEY set' });
      expect(((await t.transport.push({ text: '.weather' }))[0] as { text: string }).text).to.equal('No weather service is configured.');
      const lines = t.logs().map((l) => String(l.msg));
      expect(lines.some((m) => m.includes('✘ weather') && m.includes('no WEATHER_API_KEY set'))).to.equal(true);
      expect(lines.some((m) => m.includes('WEATHER_API_KEY') && m.includes('not set (owner: key of the weather service)'))).to.equal(true);
    });
  });

  describe('enabledByDefault: false', () => {
    let t: TestBot | undefined;
    afterEach(async () => {
      await t?.stop();
      t = undefined;
    });
    const shy = definePlugin({ name: 'shy', description: 'Stays off until the owner turns it on', enabledByDefault: false, setup: () => ({ commands: [{ command: 'shy', run: (ctx) => ctx.reply('hello from shy') }] }) });

    it('is off while config.json does not mention it, and on when config.json enables it', async () => {
      t = await startTestBot(shy, { enableGiven: false });
      expect(((await t.transport.push({ text: '.shy' }))[0] as { text: string }).text).to.match(/^\.shy is turned off: the owner switched off shy/);
      await t.stop();
      t = await startTestBot(shy, { enableGiven: false, config: { plugins: { shy: { enabled: true } } } });
      expect(((await t.transport.push({ text: '.shy' }))[0] as { text: string }).text).to.equal('hello from shy');
    });
  });

  describe('PLUGIN_BAD_OPTION_DEFAULT', () => {
    it('refuses options whose defaults their own schema rejects, or that have no default', () => {
      const bad = () => definePlugin({ name: 'dice', description: 'bad default', options: Type.Object({ sides: Type.Integer({ minimum: 2, default: 1 }) }), setup: () => ({}) });
      expect(bad).to.throw(PluginError, /^PLUGIN_BAD_OPTION_DEFAULT: plugin "dice": .*sides: must be >= 2.*give every option a default/);
      const none = () => definePlugin({ name: 'dice', description: 'no default', options: Type.Object({ sides: Type.Integer() }), setup: () => ({}) });
      expect(none).to.throw(PluginError, /PLUGIN_BAD_OPTION_DEFAULT: .*must have required property 'sides'/);
      try {
        bad();
      } catch (err) {
        expect((err as PluginError).code).to.equal('PLUGIN_BAD_OPTION_DEFAULT');
      }
    });
  });

  describe('options edited in the dashboard', () => {
    it('are validated against the same schema, with defaults filled in only for the check (the file keeps what the owner wrote)', () => {
      const dice = definePlugin({ name: 'dice', description: 'has a typed option', options: Type.Object({ sides: Type.Integer({ minimum: 2, default: 6 }) }, { additionalProperties: false }), setup: () => ({}) });
      // The plugin's card posts one field per option (`opt:<path>`), read back against the plugin's own schema.
      const read = (sides: string) => readOptions(new URLSearchParams({ 'opt:sides': sides }), dice.optionsSchema as never, { sides: 8 });
      expect(read('1').problems.map((p) => p.message)).to.deep.equal(['sides: must be >= 2']);
      expect(read('abc').problems.map((p) => p.field)).to.deep.equal(['sides']);
      const saved = read('12');
      expect(saved.problems).to.deep.equal([]);
      expect(saved.values).to.deep.equal({ sides: 12 });
      // Emptied: the option goes from the file and the default applies (filled in only for the check).
      expect(read('')).to.deep.equal({ values: {}, problems: [] });
    });
  });

  describe('on the dashboard (over HTTP): options edited, refusals explained', () => {
    const dice = definePlugin({
      name: 'dice',
      description: 'Rolls dice',
      options: Type.Object({ sides: Type.Integer({ minimum: 2, maximum: 100, default: 6 }) }),
      setup: (host) => ({ commands: [{ command: 'sides', run: (ctx) => ctx.reply(`sides=${host.options().sides}`) }] }),
    });
    const savePlugin = async (port: number, cookie: string, fields: Record<string, string>) => {
      const page = await request(port, { path: '/config/plugins', headers: { cookie } });
      const form = new URLSearchParams({ _csrf: csrfOf(page.body), access: 'everyone', ...fields });
      return request(port, { method: 'POST', path: '/config/plugins/save', headers: { cookie, ...sameOrigin(port) }, body: form.toString() });
    };

    it('an option saved on the plugins page reaches the running plugin at once; a bad one saves nothing; an empty field means the default', async () => {
      const w = await startWebTest({ token: TOKEN, plugins: [dice], config: { plugins: { dice: { enabled: true } } } });
      try {
        const { cookie } = await login(w.port, TOKEN);
        const roll = async () => ((await w.t.transport.push({ text: '.sides' }))[0] as { text: string }).text;
        expect(await roll()).to.equal('sides=6');
        expect((await savePlugin(w.port, cookie, { plugin: 'dice', enabled: 'on', 'opt:sides': '12' })).status).to.equal(303);
        expect(await roll()).to.equal('sides=12');
        const before = await w.readConfig();
        const bad = await savePlugin(w.port, cookie, { plugin: 'dice', enabled: 'on', 'opt:sides': '1' });
        expect(bad.status).to.equal(422);
        expect(bad.body).to.match(/sides: must be (&gt;|>)= 2/);
        expect(await w.readConfig()).to.equal(before);
        expect(await roll()).to.equal('sides=12');
        expect((await savePlugin(w.port, cookie, { plugin: 'dice', enabled: 'on', 'opt:sides': '' })).status).to.equal(303);
        expect(JSON.parse(await w.readConfig()).plugins.dice).to.deep.equal({ enabled: true });
        expect(await roll()).to.equal('sides=6');
      } finally {
        await w.stop();
      }
    });

    it('a plugin refused at registration says why on its card, and switching it on there leaves it off', async () => {
      const heard: boolean[] = [];
      let stops = 0;
      let secondHost: { enabled(): boolean } | undefined;
      const owner = definePlugin({ name: 'owner', description: 'offers lookup', setup: () => ({ tools: [tool('lookup')] }) });
      const second = definePlugin({
        name: 'second',
        description: 'clashes on a tool',
        setup: (host) => {
          secondHost = host;
          host.onEnabledChange((on) => void heard.push(on));
          return { commands: [{ command: 'second', run: (ctx) => ctx.reply('second here') }], tools: [tool('lookup')], stop: () => void stops++ };
        },
      });
      const w = await startWebTest({ token: TOKEN, plugins: [owner, second], config: { plugins: {} } });
      try {
        expect(stops, 'what its setup started is stopped when it is refused').to.equal(1);
        const { cookie } = await login(w.port, TOKEN);
        const card = (body: string) => /id="plugin-second"[\s\S]*?<\/details>/.exec(body)?.[0] ?? '';
        const page = await request(w.port, { path: '/config/plugins', headers: { cookie } });
        expect(card(page.body)).to.match(/off: PLUGIN_DUPLICATE_TOOL: plugin (&quot;|")second(&quot;|") offers tool (&quot;|")lookup(&quot;|")/);
        expect((await savePlugin(w.port, cookie, { plugin: 'second', enabled: 'on' })).status).to.equal(303);
        expect(card((await request(w.port, { path: '/config/plugins', headers: { cookie } })).body)).to.contain('off: PLUGIN_DUPLICATE_TOOL');
        expect(((await w.t.transport.push({ text: '.second' }))[0] as { text: string }).text).to.match(/^Unknown command \.second/);
        await new Promise((resolve) => setImmediate(resolve));
        expect(secondHost!.enabled()).to.equal(false);
        expect(heard).to.deep.equal([]);
      } finally {
        await w.stop();
      }
    });
  });

  describe('data files a plugin declares', () => {
    it('temporary files an interrupted write left in its data folder are removed at start; its data files stay', async () => {
      const dir = await tempDir();
      const folder = path.join(dir, 'data', 'dice');
      mkdirSync(folder, { recursive: true });
      writeFileSync(path.join(folder, 'stats.json'), '{"version":1,"rolls":3}');
      writeFileSync(path.join(folder, 'stats.json.tmp-4242-1'), '{"version":1,"ro');
      const stats = definePlugin({
        name: 'dice',
        description: 'keeps roll statistics',
        stores: [Store.doc('stats', Type.Object({}), () => ({}), { path: 'dice/stats.json', title: 'dice stats' })],
        setup: () => ({}),
      });
      const t = await startTestBot(stats, { dir });
      try {
        expect(readdirSync(folder)).to.deep.equal(['stats.json']);
        expect(t.logs().some((l) => /removed 1 temporary file/.test(String(l.msg)) && String(l.files).includes('stats.json.tmp-4242-1'))).to.equal(true);
      } finally {
        await t.stop();
        await rm(dir, { recursive: true, force: true });
      }
    });
  });

  describe('narrowed contexts', () => {
    it('a media handler always has the media; a command handler its arguments', async () => {
      const seen: string[] = [];
      const plugin = definePlugin({
        name: 'narrow',
        description: 'records what its handlers get',
        setup: () => ({
          media: [{ media: 'image', run: (ctx) => ctx.reply(`got a ${ctx.media.kind}`) }],
          commands: [{ command: 'weather', run: (ctx) => ctx.reply(`weather for ${ctx.args}`) }],
          observers: [(ctx) => void seen.push(ctx.text)],
        }),
      });
      const bot = await startTestBot(plugin);
      try {
        expect(await bot.send({ media: { kind: 'image', mimetype: 'image/jpeg', download: async () => Buffer.alloc(0) } })).to.deep.equal(['got a image']);
        expect(await bot.send('.weather   Bandung ')).to.deep.equal(['weather for Bandung']);
        expect(seen).to.deep.equal(['', '.weather   Bandung']);
      } finally {
        await bot.stop();
      }
    });
  });
});
