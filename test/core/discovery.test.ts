import { expect } from 'chai';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { discoverPlugins } from '../../core/plugin/discover.js';
import { definePlugin, PluginDefinitionError } from '../../core/plugin/define-plugin.js';
import { createApp } from '../../core/app.js';
import { createLogger } from '../../core/log/logger.js';
import { MemoryTransport } from '../../core/transport/memory.js';
import { PassThrough } from 'node:stream';
import { ROOT, tempDir, writeConfig } from '../helpers/test-app.js';

function capture() {
  const sink = new PassThrough();
  let out = '';
  sink.on('data', (d) => (out += d));
  return { logger: createLogger({ pretty: false, destination: sink, secrets: ['sk-very-secret-key'] }), out: () => out };
}

describe('plugin discovery and the start-log report', () => {
  it('finds every plugins/*/index.js of the project', async () => {
    const found = await discoverPlugins(path.join(ROOT, 'dist', 'plugins'), [], ROOT);
    expect(found.failures).to.deep.equal([]);
    expect(found.plugins.map((p) => p.name)).to.include.members(['ping', 'premium']);
  });

  it('loads a plugin package named in config.json (a plain definition object is enough), and reports a missing one', async () => {
    const dir = await tempDir();
    const pkg = path.join(dir, 'node_modules', 'wa-plugin-hello');
    mkdirSync(pkg, { recursive: true });
    writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'wa-plugin-hello', type: 'module', main: 'index.js' }));
    writeFileSync(
      path.join(pkg, 'index.js'),
      "export default { name: 'hello', description: 'says hello', triggers: [{ command: 'hello' }], handle: (ctx) => ctx.reply('hello from a package') };\n",
    );
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'host', type: 'module' }));
    await writeConfig(dir, { pluginPackages: ['wa-plugin-hello', 'wa-plugin-missing'] });
    const { logger, out } = capture();
    const app = await createApp({ cwd: dir, env: { API_KEY: 'sk-very-secret-key', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm' }, logger, skipHealthProbe: true });
    const transport = new MemoryTransport();
    await app.connect(transport);
    try {
      await transport.push({ text: '.hello' });
      expect(transport.texts()).to.deep.equal(['hello from a package']);
      expect(app.pluginFailures).to.deep.equal([{ source: 'package wa-plugin-missing', reason: 'not installed: run npm install wa-plugin-missing' }]);
      expect(out()).to.include('NOT LOADED: not installed');
    } finally {
      await app.stop();
    }
  });

  it('prints one report: chain by name, capabilities and plugin states, never a key', async () => {
    const dir = await tempDir();
    await writeConfig(dir, { plugins: { premium: { enabled: false } } });
    const { logger, out } = capture();
    const app = await createApp({ cwd: dir, env: { PATH: process.env.PATH ?? '', API_KEY: 'sk-very-secret-key', BASE_URL: 'http://127.0.0.1:9', MODEL: 'main-m' }, logger });
    await app.healthChecked;
    await app.stop();
    const text = out();
    expect(text).to.include('provider chain: second');
    expect(text).to.match(/gateway second UNHEALTHY/);
    expect(text).to.match(/audio keys configured: 0/);
    expect(text).to.match(/CONFIG_TOKEN: not set/);
    for (const cap of ['chat', 'premium', 'vision', 'audio', 'search', 'python', 'ytdlp', 'ffmpeg', 'sandbox', 'publicUrl']) expect(text).to.match(new RegExp(`[✔⚠✘] ${cap}`));
    expect(text).to.match(/premium +disabled in config\.json/);
    expect(text).to.match(/ping +active/);
    expect(text).not.to.include('sk-very-secret-key');
  });

  it('does not wait for a hung gateway before answering: the probe finishes and is logged afterwards', async () => {
    const { HttpFake } = await import('../fakes/http-fake.js');
    const hung = await HttpFake.start({ 'GET /': 'hang' });
    const dir = await tempDir();
    await writeConfig(dir);
    const { logger, out } = capture();
    const app = await createApp({ cwd: dir, env: { API_KEY: 'k', BASE_URL: hung.url, MODEL: 'm', UPSTREAM_TIMEOUT_MS: '1500' }, logger });
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

  it('rejects a bad definition with a message naming the plugin and what to change', () => {
    expect(() => definePlugin({ name: 'x', description: 'd', triggers: [{ command: '.ping' }], handle: () => {} })).to.throw(PluginDefinitionError, /write 'ping', not '\.ping'/);
    expect(() => definePlugin({ name: 'Bad Name', description: 'd' })).to.throw(PluginDefinitionError, /lowercase/);
    expect(() => definePlugin({ name: 'y', description: 'd', triggers: [{ command: 'y' }] })).to.throw(PluginDefinitionError, /no handle\(ctx\)/);
  });

  it('refuses plugin options that break the plugin\'s own schema, naming the field', async () => {
    const dir = await tempDir();
    await writeConfig(dir, { plugins: { premium: { phrases: 'use premium' } } });
    const err = await createApp({ cwd: dir, env: { API_KEY: 'k', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm' }, logger: capture().logger, skipHealthProbe: true }).catch((e) => e);
    expect(err.message).to.match(/plugins\.premium\.phrases: must be array/);
  });
});
