import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createApp } from '../../../app/app.js';
import { definePlugin, Type } from '../../../core/index.js';
import { createLogger } from '../../../core/services/log/logger.js';
import remindPlugin from '../../../plugins/remind/index.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { csrfOf, formFields, login, request, sameOrigin, startWebTest, TOKEN } from '../../web/web-helpers.js';
import { PassThrough } from 'node:stream';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

/** A plugin owning a top-level section, telling what it got. */
function sectionPlugin(name: string, key: string, schema = Type.String({ default: 'plain' })) {
  return definePlugin({
    name,
    description: `owns ${key}`,
    configSection: { key, schema, check: (value) => (value === 'forbidden' ? 'is forbidden here' : undefined) },
    setup: (host) => ({ commands: [{ command: name, run: (ctx) => ctx.reply(`${key}=${JSON.stringify(host.section())}`) }] }),
  });
}

const texts = async (t: TestBot, text: string) => (await t.transport.push({ text })).flatMap((a) => (a.type === 'text' ? [a.text] : []));

describe('a plugin\'s own top-level section of config.json (configSection)', () => {
  let t: TestBot | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  it('delivers the value typed to the plugin (remind reads its time zone from "timeZone" at the top)', async () => {
    t = await startTestBot(remindPlugin, { config: { timeZone: 'Asia/Jakarta' } });
    expect((await texts(t, '.timezone'))[0]).to.match(/^Your time zone: Asia\/Jakarta \(the bot's default\)/);
  });

  it('plugins.remind.timeZone, when set, wins over the top-level timeZone', async () => {
    t = await startTestBot(remindPlugin, { config: { timeZone: 'Asia/Jakarta', plugins: { remind: { timeZone: 'Europe/Berlin' } } } });
    expect((await texts(t, '.timezone'))[0]).to.match(/^Your time zone: Europe\/Berlin \(the bot's default\)/);
  });

  it('a plugins.remind.timeZone that is not a time zone falls back to the top-level timeZone, and is logged once', async () => {
    t = await startTestBot(remindPlugin, { config: { timeZone: 'Asia/Jakarta', plugins: { remind: { timeZone: 'Mars/Olympus' } } } });
    expect((await texts(t, '.timezone'))[0]).to.match(/^Your time zone: Asia\/Jakarta \(the bot's default\)/);
    expect((await texts(t, '.remind 1h tea'))[0]).to.match(/\(Asia\/Jakarta\): tea$/);
    const said = t.logs().filter((l) => l.level === 50 && String(l.msg).includes('"Mars/Olympus" is not a time zone'));
    expect(said.map((l) => l.msg)).to.deep.equal(['remind: option timeZone "Mars/Olympus" is not a time zone (use an IANA name such as Asia/Jakarta); using Asia/Jakarta']);
  });

  it('a bad value is named in the start log, the plugin gets the default, the rest of config.json loads and the file is left as written', async () => {
    t = await startTestBot([remindPlugin, sectionPlugin('echo', 'greeting')], { config: { botName: 'Kept Name', timeZone: 'Mars/Olympus', greeting: 42 } });
    const file = path.join(t.dir, 'config.json');
    const before = await readFile(file, 'utf8');
    const invalid = t.logs().filter((l) => /INVALID/.test(l.msg ?? '')).map((l) => l.msg);
    expect(invalid).to.have.length(2);
    expect(invalid[0]).to.contain('config.json timeZone (remind) INVALID: timeZone: is not a time zone (use an IANA name such as Asia/Jakarta); remind uses the default');
    expect(invalid[1]).to.contain('config.json greeting (echo) INVALID: greeting: must be string');
    expect(t.app.config.botName).to.equal('Kept Name');
    expect(await texts(t, '.echo')).to.deep.equal(['greeting="plain"']);
    expect((await texts(t, '.timezone'))[0]).not.to.contain('Mars');
    expect(await readFile(file, 'utf8')).to.equal(before);
    expect(JSON.parse(before).timeZone).to.equal('Mars/Olympus');
  });

  it('a top-level key no plugin declares is still refused as an unknown field', async () => {
    const dir = await tempDir();
    await writeConfig(dir, { colour: 'red', timeZone: 'Asia/Jakarta' });
    const err = await createApp({ cwd: dir, env: { API_KEY: 'k', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm' }, plugins: [remindPlugin], logger: quietLogger(), skipHealthProbe: true }).catch((e) => e);
    expect(err.message).to.contain('colour: unknown field').and.not.contain('timeZone');
  });

  it('PLUGIN_CONFIG_KEY_TAKEN: a key another plugin declared, or one the core owns; the later plugin stays off, the others run', async () => {
    t = await startTestBot([sectionPlugin('first', 'greeting'), sectionPlugin('second', 'greeting'), sectionPlugin('third', 'prefix')], { config: { greeting: 'hi' } });
    expect(t.app.pluginFailures.map((f) => f.reason)).to.deep.equal([
      'PLUGIN_CONFIG_KEY_TAKEN: plugin "second" declares the top-level config.json section "greeting", which plugin "first" already declares; use another key (e.g. "secondGreeting") or an option under plugins.second',
      'PLUGIN_CONFIG_KEY_TAKEN: plugin "third" declares the top-level config.json section "prefix", which the core owns; use another key (e.g. "thirdPrefix") or an option under plugins.third',
    ]);
    expect(await texts(t, '.first')).to.deep.equal(['greeting="hi"']);
    expect((await texts(t, '.second'))[0]).not.to.contain('greeting=');
    expect(t.logs().some((l) => /second +OFF: PLUGIN_CONFIG_KEY_TAKEN/.test(l.msg ?? ''))).to.equal(true);
  });

  it('refuses a section whose default its own schema or check rejects', () => {
    expect(() => sectionPlugin('x', 'greeting', Type.String({ default: 'forbidden' }))).to.throw(/PLUGIN_BAD_OPTION_DEFAULT: plugin "x".*greeting: is forbidden here/);
    expect(() => sectionPlugin('x', 'greeting', Type.String({ minLength: 3, default: '' }))).to.throw(/PLUGIN_BAD_OPTION_DEFAULT/);
    expect(() => definePlugin({ name: 'x', description: 'd', configSection: { key: 'bad key', schema: Type.String({ default: '' }) }, setup: () => ({}) })).to.throw(/PLUGIN_BAD_DEFINITION/);
  });
});

describe('a plugin\'s top-level section on the dashboard', () => {
  it('is shown, validated with the plugin\'s schema at every edit (a bad value saves nothing), and applied at once when good', async () => {
    const w = await startWebTest({ token: TOKEN, plugins: [remindPlugin], config: { timeZone: 'Asia/Jakarta' } });
    try {
      const { cookie, page } = await login(w.port, TOKEN);
      expect(page).to.contain('id="sections"').and.contain('name="section:timeZone" value="Asia/Jakarta"');
      const before = await w.readConfig();
      const save = (fields: URLSearchParams) => request(w.port, { method: 'POST', path: '/config/save', headers: { cookie, ...sameOrigin(w.port) }, body: fields.toString() });
      const fields = formFields(page);
      fields.set('section:timeZone', 'Mars/Olympus');
      const bad = await save(fields);
      expect(bad.status).to.equal(422);
      expect(bad.body).to.contain('timeZone: is not a time zone').and.contain('value="Mars/Olympus"');
      expect(await w.readConfig()).to.equal(before);

      fields.set('section:timeZone', 'Europe/Berlin');
      expect((await save(fields)).status).to.equal(303);
      const saved = JSON.parse(await w.readConfig());
      expect(saved.timeZone).to.equal('Europe/Berlin');
      expect(saved.botName).to.equal(JSON.parse(before).botName);
      expect((await w.t.transport.push({ text: '.timezone' })).map((a) => (a.type === 'text' ? a.text : ''))[0]).to.match(/^Your time zone: Europe\/Berlin/);

      // An empty field removes the key: the default applies.
      const again = formFields((await request(w.port, { path: '/config', headers: { cookie } })).body);
      again.set('section:timeZone', '');
      expect((await save(again)).status).to.equal(303);
      expect(JSON.parse(await w.readConfig())).not.to.have.property('timeZone');
    } finally {
      await w.stop();
    }
  });

  it('saving a plugin on the plugins page keeps the top-level section (and is not refused for it)', async () => {
    const w = await startWebTest({ token: TOKEN, plugins: [remindPlugin], config: { timeZone: 'Asia/Jakarta', plugins: { remind: { enabled: true } } } });
    try {
      const { cookie } = await login(w.port, TOKEN);
      const page = await request(w.port, { path: '/config/plugins', headers: { cookie } });
      const form = new URLSearchParams({ _csrf: csrfOf(page.body), plugin: 'remind', access: 'everyone', enabled: 'on', 'opt:maxPerUser': '5' });
      const res = await request(w.port, { method: 'POST', path: '/config/plugins/save', headers: { cookie, ...sameOrigin(w.port) }, body: form.toString() });
      expect(res.status, res.body.match(/Not saved[^<]*/)?.[0]).to.equal(303);
      const saved = JSON.parse(await w.readConfig());
      expect(saved.timeZone).to.equal('Asia/Jakarta');
      // Only the changed option is written: the access the card showed (the default) stays out of the file.
      expect(saved.plugins.remind).to.deep.equal({ enabled: true, maxPerUser: 5 });
      expect((await w.t.transport.push({ text: '.timezone' })).map((a) => (a.type === 'text' ? a.text : ''))[0]).to.match(/^Your time zone: Asia\/Jakarta/);
    } finally {
      await w.stop();
    }
  });

  it('shows why the value in the file is not used', async () => {
    const w = await startWebTest({ token: TOKEN, plugins: [remindPlugin], config: { timeZone: 'Mars/Olympus' } });
    try {
      const { page } = await login(w.port, TOKEN);
      expect(page).to.contain('In config.json now: timeZone: is not a time zone').and.contain('remind uses the default until it is fixed');
    } finally {
      await w.stop();
    }
  });
});

function quietLogger() {
  return createLogger({ pretty: false, destination: new PassThrough() });
}

// The file written by hand keeps a plugin's section through the bot's own writes (the LID added at login).
describe('the bot\'s own config.json writes keep plugins\' sections', () => {
  it('adding the own LID to targetUserIds keeps timeZone', async () => {
    const { addOwnLidToConfig } = await import('../../../cli/own-lid-config.js');
    const dir = await tempDir();
    await writeConfig(dir, { timeZone: 'Asia/Jakarta' });
    const app = await createApp({ cwd: dir, env: { API_KEY: 'k', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm' }, plugins: [remindPlugin], logger: quietLogger(), skipHealthProbe: true });
    try {
      const updated = await addOwnLidToConfig(app.configFile, app.config, '98765432@lid', app.log);
      expect(updated?.targetUserIds).to.include('98765432');
      const file = JSON.parse(await readFile(app.configFile, 'utf8'));
      expect(file.timeZone).to.equal('Asia/Jakarta');
    } finally {
      await app.stop();
    }
  });
});
