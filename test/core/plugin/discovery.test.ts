import { expect } from 'chai';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { discoverPlugins } from '../../../core/kernel/plugin/discover.js';
import { pathToFileURL } from 'node:url';
import { definePlugin, PluginError, Store, Type } from '../../../core/index.js';
import { createApp } from '../../../app/app.js';
import { createLogger } from '../../../core/services/log/logger.js';
import { MemoryTransport } from '../../../core/adapters/memory/memory-transport.js';
import { PassThrough } from 'node:stream';
import { ROOT, tempDir, writeConfig } from '../../helpers/checkout.js';
import { startWebServer } from '../../../web/server.js';
import { formFields, login, request, sameOrigin, TOKEN } from '../../web/web-helpers.js';

function capture(level = 'info') {
  const sink = new PassThrough();
  let out = '';
  sink.on('data', (d) => (out += d));
  return { logger: createLogger({ level, pretty: false, destination: sink, secrets: ['sk-very-secret-key'] }), out: () => out };
}

describe('plugin discovery and the start-log report', () => {
  it('finds every plugins/*/index.js of the project', async () => {
    const found = await discoverPlugins(path.join(ROOT, 'dist', 'plugins'), [], ROOT);
    expect(found.failures).to.deep.equal([]);
    expect(found.plugins.map((p) => p.name)).to.include.members(['ping', 'premium']);
  });

  it('loads a plugin package named in config.json, and reports a missing one and one written to the old contract, staying up', async () => {
    const dir = await tempDir();
    const publicEntry = pathToFileURL(path.join(ROOT, 'dist', 'core', 'index.js')).href;
    const writePackage = (name: string, source: string) => {
      const pkg = path.join(dir, 'node_modules', name);
      mkdirSync(pkg, { recursive: true });
      writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name, type: 'module', main: 'index.js' }));
      writeFileSync(path.join(pkg, 'index.js'), source);
    };
    writePackage(
      'wa-plugin-hello',
      `import { definePlugin } from ${JSON.stringify(publicEntry)};\n` +
        "export default definePlugin({ name: 'hello', description: 'says hello', setup: () => ({ commands: [{ command: 'hello', run: (ctx) => ctx.reply('hello from a package') }] }) });\n",
    );
    // The first contract's plain object: no longer run, refused with a code that names the package and the fix.
    writePackage('wa-plugin-old', "export default { name: 'old', description: 'old style', triggers: [{ command: 'old' }], handle: (ctx) => ctx.reply('old') };\n");
    writePackage('wa-plugin-nothing', 'export const x = 1;\n');
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'host', type: 'module' }));
    await writeConfig(dir, { pluginPackages: ['wa-plugin-hello', 'wa-plugin-missing', 'wa-plugin-old', 'wa-plugin-nothing'], plugins: { hello: { enabled: true } } });
    const { logger, out } = capture();
    const app = await createApp({ cwd: dir, env: { API_KEY: 'sk-very-secret-key', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm', CONFIG_TOKEN: TOKEN }, logger, skipHealthProbe: true });
    const transport = new MemoryTransport();
    await app.connect(transport);
    const web = await startWebServer(app, () => transport);
    try {
      await transport.push({ text: '.hello' });
      expect(transport.texts()).to.deep.equal(['hello from a package']);
      await transport.push({ text: '.old' });
      expect(transport.texts()[1]).not.to.equal('old');
      const [missing, old, nothing] = app.pluginFailures;
      expect(missing).to.deep.equal({
        source: 'package wa-plugin-missing',
        reason: "PLUGIN_NOT_FOUND: package wa-plugin-missing is not installed: run npm install --no-save wa-plugin-missing in the bot's folder (or put the plugin's folder in plugins.local/)",
      });
      expect(old.source).to.equal('package wa-plugin-old');
      expect(old.reason).to.match(/^PLUGIN_NOT_A_PLUGIN: package wa-plugin-old exports a plugin written to the old contract \(triggers and handle\)/);
      expect(old.reason).to.contain("import { definePlugin } from 'wa-assistant-bot/plugin'").and.contain('export default definePlugin({ name, description, setup:');
      expect(nothing.reason).to.match(/^PLUGIN_NOT_A_PLUGIN: package wa-plugin-nothing has no default export; /);
      expect(app.pluginFailures).to.have.length(3);
      expect(out()).to.include('NOT LOADED: PLUGIN_NOT_FOUND: package wa-plugin-missing is not installed').and.include('package wa-plugin-old NOT LOADED: PLUGIN_NOT_A_PLUGIN');
      // The dashboard says why too.
      const { page } = await login(web.port, TOKEN);
      expect(page).to.contain('Plugins that did not load').and.contain('<b>package wa-plugin-old</b>: PLUGIN_NOT_A_PLUGIN: package wa-plugin-old exports a plugin written to the old contract');
    } finally {
      await web.close();
      await app.stop();
    }
  });

  it('a plugin dropped into plugins.local/ or named in pluginPackages is off until the owner enables it: the start log says it is there and off, the dashboard turns it on; bundled plugins keep their defaults', async () => {
    const dir = await tempDir();
    const publicEntry = JSON.stringify(pathToFileURL(path.join(ROOT, 'dist', 'core', 'index.js')).href);
    const plugin = (name: string) => `import { definePlugin } from ${publicEntry};\nexport default definePlugin({ name: '${name}', description: 'a dropped-in plugin', enabledByDefault: true, setup: () => ({ commands: [{ command: '${name}', run: (ctx) => ctx.reply('${name} runs') }] }) });\n`;
    mkdirSync(path.join(dir, 'plugins.local', 'dropped'), { recursive: true });
    writeFileSync(path.join(dir, 'plugins.local', 'dropped', 'index.js'), plugin('dropped'));
    mkdirSync(path.join(dir, 'node_modules', 'wa-plugin-listed'), { recursive: true });
    writeFileSync(path.join(dir, 'node_modules', 'wa-plugin-listed', 'package.json'), JSON.stringify({ name: 'wa-plugin-listed', type: 'module', main: 'index.js' }));
    writeFileSync(path.join(dir, 'node_modules', 'wa-plugin-listed', 'index.js'), plugin('listed'));
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'host', type: 'module' }));
    await writeConfig(dir, { pluginPackages: ['wa-plugin-listed'], owners: ['15550100200'] });
    const { logger, out } = capture();
    const app = await createApp({ cwd: dir, env: { API_KEY: 'sk-very-secret-key', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm', CONFIG_TOKEN: TOKEN }, logger, skipHealthProbe: true });
    const transport = new MemoryTransport();
    await app.connect(transport);
    const web = await startWebServer(app, () => transport);
    try {
      // Neither runs, although each declares itself on by default; a bundled plugin (ping) is on as before.
      await transport.push({ text: '.dropped' });
      await transport.push({ text: '.listed' });
      await transport.push({ text: '.ping' });
      const [dropped, listed, ping] = transport.texts();
      expect(dropped).to.not.include('dropped runs');
      expect(listed).to.not.include('listed runs');
      expect(ping).to.match(/pong/i);
      expect(out()).to.include('installed, off until you enable it: dropped, listed (plugins.<name>.enabled: true in config.json, or the dashboard)');
      // The owner turns one on in the dashboard: it answers, without a restart.
      const { cookie } = await login(web.port, TOKEN);
      const fields = formFields((await request(web.port, { path: '/config/plugins', headers: { cookie } })).body, 'form-plugin-dropped');
      fields.set('enabled', 'on');
      const saved = await request(web.port, { method: 'POST', path: '/config/plugins/save', headers: { cookie, ...sameOrigin(web.port) }, body: fields.toString() });
      expect(saved.status).to.equal(303);
      await transport.push({ text: '.dropped' });
      await transport.push({ text: '.listed' });
      expect(transport.texts().slice(3)[0]).to.equal('dropped runs');
      expect(transport.texts().slice(3)[1]).to.not.include('listed runs');
    } finally {
      await web.close();
      await app.stop();
    }
  });

  it('says what really failed for each plugin of plugins.local/ and pluginPackages (not found, not importable with the cause, not a plugin), loading the others', async () => {
    const dir = await tempDir();
    const publicEntry = JSON.stringify(pathToFileURL(path.join(ROOT, 'dist', 'core', 'index.js')).href);
    const plugin = (name: string) => `import { definePlugin } from ${publicEntry};\nexport default definePlugin({ name: '${name}', description: 'a test plugin', setup: () => ({}) });\n`;
    const put = (file: string, text: string) => {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    };
    put('plugins.local/good/index.js', plugin('good'));
    // A dependency-free folder gets @wa-assistant-bot/plugin-api from the bot's node_modules (the workspace link): a
    // copy of the entry other than the one the bot runs, recognised by its Symbol.for mark.
    mkdirSync(path.join(dir, 'node_modules', '@wa-assistant-bot'), { recursive: true });
    symlinkSync(path.join(ROOT, 'packages', 'plugin-api'), path.join(dir, 'node_modules', '@wa-assistant-bot', 'plugin-api'));
    put('plugins.local/via-api/index.js', "import { definePlugin } from '@wa-assistant-bot/plugin-api';\nexport default definePlugin({ name: 'via-api', description: 'a test plugin', setup: () => ({}) });\n");
    // An ESM-only exports map (the import condition only) is found and loaded, in plugins.local/ and as a package.
    put('plugins.local/esm-folder/package.json', JSON.stringify({ name: 'esm-folder', type: 'module', exports: { '.': { import: './lib/entry.js' } } }));
    put('plugins.local/esm-folder/lib/entry.js', plugin('esm-folder'));
    put('node_modules/wa-plugin-esm/package.json', JSON.stringify({ name: 'wa-plugin-esm', type: 'module', exports: { '.': { import: './lib/entry.js' } } }));
    put('node_modules/wa-plugin-esm/lib/entry.js', plugin('esm-package'));
    put('plugins.local/syntax/index.js', `import { definePlugin } from ${publicEntry};\nexport default definePlugin({ name: 'syntax', \n`);
    put('plugins.local/throws/index.js', "throw new Error('JOTTER_URL is not set');\n");
    put('plugins.local/missing-dep/index.js', "import 'wa-no-such-package-anywhere';\nexport default 1;\n");
    put('plugins.local/unbuilt/index.ts', "export default 'not compiled';\n");
    put('plugins.local/wrong-entry/package.json', JSON.stringify({ name: 'wrong-entry', type: 'module', main: 'dist/index.js' }));
    put('plugins.local/not-a-plugin/index.js', 'export default { hello: 1 };\n');
    put('plugins.local/other-contract/index.js', "export default { [Symbol.for('wa-assistant-bot.plugin')]: 2, name: 'older', description: 'x', setup() { return {}; } };\n");
    put('package.json', JSON.stringify({ name: 'host', type: 'module' }));

    const found = await discoverPlugins(path.join(dir, 'no-plugins-here'), ['wa-plugin-esm', 'wa-plugin-absent'], dir);
    expect(found.plugins.map((p) => p.name).sort()).to.deep.equal(['esm-folder', 'esm-package', 'good', 'via-api']);
    const reason = Object.fromEntries(found.failures.map((f) => [f.source, f.reason]));
    expect(Object.keys(reason).sort()).to.deep.equal(
      ['package wa-plugin-absent', ...['missing-dep', 'not-a-plugin', 'other-contract', 'syntax', 'throws', 'unbuilt', 'wrong-entry'].map((d) => `plugins.local/${d}`)].sort(),
    );
    expect(reason['package wa-plugin-absent']).to.match(/^PLUGIN_NOT_FOUND: package wa-plugin-absent is not installed: run npm install --no-save wa-plugin-absent/);
    expect(reason['plugins.local/unbuilt']).to.match(/^PLUGIN_NOT_FOUND: plugins.local\/unbuilt holds index.ts but no built index.js/);
    expect(reason['plugins.local/wrong-entry']).to.match(/^PLUGIN_NOT_FOUND: plugins.local\/wrong-entry names dist\/index.js as its entry, which does not exist/);
    expect(reason['plugins.local/syntax']).to.match(/^PLUGIN_NOT_IMPORTABLE: plugins.local\/syntax was found \(.*index.js\) but importing it failed: SyntaxError: .*\(at .*plugins.local\/syntax\/index.js:\d+\)/);
    expect(reason['plugins.local/throws']).to.match(/^PLUGIN_NOT_IMPORTABLE: .* importing it failed: Error: JOTTER_URL is not set;/);
    expect(reason['plugins.local/missing-dep']).to.match(/^PLUGIN_NOT_IMPORTABLE: .* importing it failed: Error \(ERR_MODULE_NOT_FOUND\): Cannot find package 'wa-no-such-package-anywhere'/);
    expect(reason['plugins.local/not-a-plugin']).to.match(/^PLUGIN_NOT_A_PLUGIN: plugins.local\/not-a-plugin exports object, not a plugin/);
    expect(reason['plugins.local/other-contract']).to.match(/^PLUGIN_NOT_A_PLUGIN: .* made by definePlugin for plugin contract 2, but this bot runs contract 3/);
  });

  it('prints one report: chain by name, capabilities and plugin states (the tables at debug), never a key', async () => {
    const dir = await tempDir();
    await writeConfig(dir, { plugins: { premium: { enabled: false } } });
    const { logger, out } = capture('debug');
    const app = await createApp({ cwd: dir, env: { PATH: process.env.PATH ?? '', API_KEY: 'sk-very-secret-key', BASE_URL: 'http://127.0.0.1:9', MODEL: 'main-m' }, logger });
    await app.healthChecked;
    await app.stop();
    const text = out();
    expect(text).to.include('provider chain: second');
    expect(text).to.match(/gateway second UNHEALTHY/);
    expect(text).to.match(/audio keys configured: 0/);
    expect(text).to.match(/CONFIG_TOKEN: not set/);
    for (const cap of ['chat', 'premium', 'vision', 'audio', 'search', 'python', 'ytdlp', 'ffmpeg', 'sandbox', 'publicUrl']) expect(text).to.match(new RegExp(`[✔⚠–✘] ${cap}`));
    expect(text).to.match(/premium +disabled in config\.json/);
    expect(text).to.match(/ping +active/);
    expect(text).not.to.include('sk-very-secret-key');
  });

  it('does not wait for a hung gateway before answering: the probe finishes and is logged afterwards', async () => {
    const { HttpFake } = await import('../../../app/testing/http-fake.js');
    const hung = await HttpFake.start({ 'GET /': 'hang' });
    const dir = await tempDir();
    await writeConfig(dir);
    const { logger, out } = capture();
    const app = await createApp({ cwd: dir, env: { API_KEY: 'k', BASE_URL: hung.url, MODEL: 'm', UPSTREAM_TIMEOUT_MS: '5000' }, logger });
    try {
      expect(app.gatewayHealth).to.deep.equal([]);
      const transport = new MemoryTransport();
      await app.connect(transport);
      await transport.push({ text: '.ping' });
      expect(transport.texts()[0]).to.match(/^pong/);
      expect(out()).not.to.include('gateway second');
      await app.healthChecked;
      expect(app.gatewayHealth).to.deep.equal([{ name: 'second', url: `${hung.url}/`, healthy: false, detail: 'timed out' }]);
      expect(out()).to.include('gateway second UNHEALTHY');
    } finally {
      await app.stop();
      await hung.close();
    }
  });

  it('rejects a bad definition with a coded message naming the plugin and what to change', () => {
    const refused = (spec: unknown) => {
      try {
        definePlugin(spec as Parameters<typeof definePlugin>[0]);
      } catch (err) {
        return err as PluginError;
      }
      throw new Error('accepted');
    };
    const badName = refused({ name: 'Bad Name', description: 'd', setup: () => ({}) });
    expect(badName).to.be.instanceOf(PluginError);
    expect(badName.code).to.equal('PLUGIN_BAD_DEFINITION');
    expect(badName.message).to.match(/plugin "Bad Name": the name must be lowercase/);
    expect(refused({ name: 'y', description: 'd' }).message).to.match(/^PLUGIN_BAD_DEFINITION: plugin "y": it has no setup\(host\) function/);
    expect(refused({ name: 'z', setup: () => ({}) }).message).to.match(/plugin "z": it has no description/);
    expect(refused({ name: 'n', description: 'd', needs: [''], setup: () => ({}) }).message).to.match(/^PLUGIN_BAD_DEFINITION: plugin "n": needs must be a list of capability names/);
    expect(refused({ name: 'n', description: 'd', needs: [42], setup: () => ({}) }).code).to.equal('PLUGIN_BAD_DEFINITION');
    // A store's earlier file outside DATA_DIR would be checked by the doctor and named in backups: refused.
    const schema = { name: 'dice stats', version: 1, schema: { type: 'object' } };
    const stats = (earlierFiles: unknown) => Store.doc('stats', Type.Object({}), () => ({}), { earlierFiles } as never);
    for (const where of ['../outside.json', 'dice/../../outside.json', '/etc/dice.json', '']) {
      expect(refused({ name: 'f', description: 'd', stores: [stats([{ path: where, schema }])], setup: () => ({}) }).message, where).to.match(/^PLUGIN_BAD_DEFINITION: plugin "f": each of the store "stats"'s earlierFiles must be \{ path: relative to DATA_DIR/);
    }
    expect(refused({ name: 'f', description: 'd', stores: [stats([{ path: 'dice/stats.json', schema: { name: 'dice stats', version: '1' } }])], setup: () => ({}) }).code).to.equal('PLUGIN_BAD_DEFINITION');
    expect(() => definePlugin({ name: 'f', description: 'd', stores: [stats([{ path: 'dice/stats.json', schema }])], setup: () => ({}) })).not.to.throw();
  });

  it('refuses at registration what setup offers wrongly (a command written with its prefix, an unknown media kind), and the other plugins run', async () => {
    const prefixed = definePlugin({ name: 'prefixed', description: 'd', setup: () => ({ commands: [{ command: '.ping', run: () => undefined }] }) });
    let stopped = false;
    const media = definePlugin({ name: 'media', description: 'd', setup: () => ({ media: [{ media: 'gif' as never, run: () => undefined }], stop: () => void (stopped = true) }) });
    const hello = definePlugin({ name: 'hello', description: 'd', setup: () => ({ commands: [{ command: 'hello', run: (ctx) => ctx.reply('hi') }] }) });
    const { logger, out } = capture();
    const dir = await tempDir();
    await writeConfig(dir);
    const app = await createApp({ cwd: dir, env: { API_KEY: 'k', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm' }, plugins: [prefixed, media, hello], logger, skipHealthProbe: true });
    const transport = new MemoryTransport();
    await app.connect(transport);
    try {
      expect(app.pluginFailures.map((f) => f.reason)).to.deep.equal([
        `PLUGIN_BAD_DEFINITION: plugin "prefixed": commands[0]: command ".ping" must be a single word without the prefix (write 'ping', not '.ping')`,
        'PLUGIN_BAD_DEFINITION: plugin "media": media[0]: media "gif" is not one of voice, audio, image, video, document, sticker',
      ]);
      expect(stopped, 'setup already ran: its resources are released').to.equal(true);
      expect(await transport.push({ text: '.hello' })).to.have.length(1);
      expect(out()).to.match(/off: plugin prefixed: PLUGIN_BAD_DEFINITION/);
    } finally {
      await app.stop();
    }
  });

  it('refuses plugin options that break the plugin\'s own schema, naming the field', async () => {
    const dir = await tempDir();
    await writeConfig(dir, { plugins: { premium: { phrases: 'use premium' } } });
    const err = await createApp({ cwd: dir, env: { API_KEY: 'k', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm' }, logger: capture().logger, skipHealthProbe: true }).catch((e) => e);
    expect(err.message).to.match(/plugins\.premium\.phrases: must be array/);
  });
});
