import { expect } from 'chai';
import { definePlugin, type PluginListing } from '../../../core/index.js';
import pingPlugin from '../../../plugins/ping/index.js';
import { FakeGateway } from '../../fakes/openai-gateway.js';
import { formToConfig } from '../../../web/dashboard/config-form.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { csrfOf, login, request, sameOrigin, startWebTest, TOKEN } from '../../web/web-helpers.js';

const OWNER = '62811111111';
const ownerText = (text: string) => ({ senderId: `${OWNER}@s.whatsapp.net`, text });
const firstText = (actions: unknown[]) => (actions[0] as { text: string }).text;

/** The built-ins (.status, …) are core plugins: made by definePlugin, listed and switched like any other plugin. */
describe('core plugins', () => {
  it('status is listed in the start-log plugin table and on the dashboard; the owner turns it off there and .status says so', async () => {
    const w = await startWebTest({ token: TOKEN, plugins: [pingPlugin], config: { owners: [OWNER] } });
    try {
      const row = w.t.logs().find((l) => l.plugin === 'status' && 'state' in l);
      expect(row).to.include({ state: 'active', core: true });
      expect(row?.msg).to.match(/^ {2}status +active \(core plugin\)$/);
      expect(w.t.logs().find((l) => l.plugin === 'ping' && 'state' in l)).to.not.have.property('core');
      expect(firstText(await w.t.transport.push(ownerText('.status')))).to.match(/status\* \(version/);

      const { cookie } = await login(w.port, TOKEN);
      const page = await request(w.port, { path: '/config/plugins', headers: { cookie } });
      expect(page.body).to.include('id="plugin-status"');
      const form = new URLSearchParams({ _csrf: csrfOf(page.body), plugin: 'status', access: 'everyone' });
      const saved = await request(w.port, { method: 'POST', path: '/config/plugins/save', headers: { cookie, ...sameOrigin(w.port) }, body: form.toString() });
      expect(saved.status).to.equal(303);
      expect(JSON.parse(await w.readConfig()).plugins.status).to.deep.equal({ enabled: false });
      expect(firstText(await w.t.transport.push(ownerText('.status')))).to.match(/^\.status is turned off: the owner switched off status/);
    } finally {
      await w.stop();
    }
  });

  it('a plugin taking a core plugin\'s name stays out with PLUGIN_DUPLICATE_NAME; the core\'s own keeps answering', async () => {
    const impostor = definePlugin({ name: 'status', description: 'a look-alike', setup: () => ({ commands: [{ command: 'status', run: (ctx) => ctx.reply('all fine, trust me') }] }) });
    const t = await startTestBot([impostor], { config: { owners: [OWNER] } });
    try {
      expect(t.app.pluginFailures.map((f) => f.reason)).to.deep.equal([
        'PLUGIN_DUPLICATE_NAME: a plugin named "status" from installed plugin status clashes with the one already loaded from the core (a core plugin); rename one of them (the one from installed plugin status stays off)',
      ]);
      expect(firstText(await t.transport.push(ownerText('.status')))).to.match(/status\* \(version/);
    } finally {
      await t.stop();
    }
  });

  it('help cannot be turned off: config.json\'s enabled: false is ignored with a start-log warning and the dashboard refuses it', async () => {
    const w = await startWebTest({ token: TOKEN, plugins: [pingPlugin], config: { owners: [OWNER], plugins: { help: { enabled: false }, ping: { enabled: false } } } });
    try {
      expect(w.t.logs().find((l) => l.plugin === 'help' && 'state' in l)?.msg).to.match(/^ {2}help +active \(core plugin, always on\)$/);
      const warning = w.t.logs().find((l) => l.ignored === 'plugins.help.enabled');
      expect(warning?.level).to.equal(40);
      expect(warning?.msg).to.include('config.json turns off help, a core plugin that cannot be turned off');
      expect(firstText(await w.t.transport.push({ text: '.help' }))).to.include('here is what I can do');
      expect(firstText(await w.t.transport.push({ text: '.nope' }))).to.equal('Unknown command .nope. Try .help for the list of commands.');
      expect(firstText(await w.t.transport.push({ text: '.ping' }))).to.match(/^\.ping is turned off: the owner switched off ping/);

      const { cookie } = await login(w.port, TOKEN);
      const page = await request(w.port, { path: '/config/plugins', headers: { cookie } });
      const card = page.body.slice(page.body.indexOf('id="plugin-help"'), page.body.indexOf('</article>', page.body.indexOf('id="plugin-help"')));
      expect(card).to.include('Always on: .help is how people find the commands');
      expect(card).to.not.include('id="en-help"');
      const before = await w.readConfig();
      const form = new URLSearchParams({ _csrf: csrfOf(page.body), plugin: 'help', access: 'everyone' });
      const refused = await request(w.port, { method: 'POST', path: '/config/plugins/save', headers: { cookie, ...sameOrigin(w.port) }, body: form.toString() });
      expect(refused.status).to.equal(422);
      expect(refused.body).to.include('Not saved: help is a core plugin that cannot be turned off');
      expect(await w.readConfig()).to.equal(before);

      // The settings page: no switch for help, and a form that turns it off anyway is refused, naming the field.
      const settings = await request(w.port, { path: '/config', headers: { cookie } });
      const row = settings.body.slice(settings.body.indexOf('data-plugin="help"'), settings.body.indexOf('</tr>', settings.body.indexOf('data-plugin="help"')));
      expect(row).to.include('always on: .help is how people find the commands');
      expect(row).to.not.include('type="checkbox" name="plugin:help:enabled"');
      const forged = new URLSearchParams({ prefix: '.', botName: 'B', port: '0', host: '127.0.0.1', 'plugin:help:present': '1', 'plugin:help:access': 'everyone', 'plugin:ping:present': '1', 'plugin:ping:access': 'everyone' });
      const draft = formToConfig(forged, JSON.parse(before), w.t.app.bot.plugins().map((s) => s.plugin));
      expect(draft.problems.map((p) => p.message)).to.deep.equal(['plugins.help.enabled: help is a core plugin that cannot be turned off (.help is how people find the commands, and unknown or turned-off commands point to it)']);
    } finally {
      await w.stop();
    }
  });

  it('host.plugins() is the public hook .help is built on: any plugin sees every plugin\'s commands and state, and no code', async () => {
    let seen: readonly PluginListing[] = [];
    const menu = definePlugin({
      name: 'menu',
      description: 'lists commands',
      setup: (host) => ({
        commands: [{ command: 'menu', run: (ctx) => {
          seen = host.plugins();
          return ctx.reply(seen.filter((p) => p.active && p.mayUse(ctx.message)).flatMap((p) => p.triggers.flatMap((t) => (t.kind === 'command' ? [`${p.name}:${t.command}`] : []))).join(' '));
        } }],
        predicates: [{ when: () => false, usage: '(never)', help: 'a predicate', run: () => undefined }],
      }),
    });
    const t = await startTestBot([menu, pingPlugin], { config: { owners: [OWNER] } });
    try {
      expect(firstText(await t.transport.push({ text: '.menu' })).split(' ')).to.have.members(['help:help', 'guard:yes', 'guard:no', 'status:status', 'profiles:profile', 'profiles:usage', 'profiles:why', 'menu:menu', 'ping:ping']);
      const own = seen.find((p) => p.name === 'menu');
      expect(own?.triggers).to.deep.equal([{ kind: 'command', command: 'menu', help: undefined, usage: undefined, needs: [] }, { kind: 'predicate', help: 'a predicate', usage: '(never)', needs: [] }]);
      expect(seen.filter((p) => p.core).map((p) => p.name)).to.have.members(['help', 'guard', 'status', 'profiles', 'chat']);
      t.app.bot.setConfig({ ...t.app.config, plugins: { ...t.app.config.plugins, ping: { enabled: false } } });
      expect(firstText(await t.transport.push({ text: '.menu' })).split(' ')).to.not.include('ping:ping');
      expect(seen.find((p) => p.name === 'ping')).to.include({ enabled: false, active: false, core: false });
    } finally {
      await t.stop();
    }
  });

  describe('chat, the fallback to the model', () => {
    let gw: FakeGateway;
    beforeEach(async () => {
      gw = await FakeGateway.start('primary');
    });
    afterEach(() => gw.close());

    it('the owner turns it off: free text is told so and reaches no model, commands and .help still answer; on again, the model answers', async () => {
      const t = await startTestBot([pingPlugin], { env: { API_KEY: 'key-123456', BASE_URL: gw.url, MODEL: 'main-model' }, config: { owners: [OWNER], targetUserIds: ['62899999999'], plugins: { chat: { enabled: false } } } });
      try {
        expect(t.logs().find((l) => l.plugin === 'chat' && 'state' in l)?.msg).to.match(/^ {2}chat +disabled in config\.json \(core plugin\)$/);
        expect(firstText(await t.transport.push({ text: 'hello there' }))).to.equal('I only answer commands here: the owner turned off answers by the AI. Send .help for what I can do.');
        expect(firstText(await t.transport.push({ text: '.ping' }))).to.match(/^pong/);
        const help = firstText(await t.transport.push({ text: '.help' }));
        expect(help.split('\n').at(-1)).to.equal('I answer only these commands here.');
        // A bare mention asks nothing: no "ask me anything" while the AI is off.
        expect(firstText(await t.transport.push({ text: '@62899999999', mentions: ['62899999999@s.whatsapp.net'] }))).to.equal('Yes? Send .help for my commands.');
        expect(gw.chats()).to.have.length(0);

        t.app.bot.setConfig({ ...t.app.config, plugins: { ...t.app.config.plugins, chat: { enabled: true } } });
        expect(firstText(await t.transport.push({ text: 'hello again' }))).to.equal('primary: hello again');
        expect(firstText(await t.transport.push({ text: '.help' })).split('\n').at(-1)).to.equal('Anything else is answered by the AI.');
        expect(gw.chats()).to.have.length(1);
        expect(firstText(await t.transport.push({ text: '@62899999999', mentions: ['62899999999@s.whatsapp.net'] }))).to.equal('Yes? Ask me anything, or send .help for my commands.');
      } finally {
        await t.stop();
      }
    });

    it('kept to the owners with plugins.chat.access: others are told, and their text reaches no model', async () => {
      const t = await startTestBot([pingPlugin], { env: { API_KEY: 'key-123456', BASE_URL: gw.url, MODEL: 'main-model' }, config: { owners: [OWNER], plugins: { chat: { access: 'owners' } } } });
      try {
        expect(firstText(await t.transport.push({ text: 'hi', senderId: '62822222222@s.whatsapp.net' }))).to.equal('Sorry, you are not allowed to use chat here.');
        expect(gw.chats()).to.have.length(0);
        expect(firstText(await t.transport.push(ownerText('hi')))).to.equal('primary: hi');
      } finally {
        await t.stop();
      }
    });
  });
});
