import { expect } from 'chai';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createApp } from '../../app/app.js';
import { runDoctor, type DoctorCheck } from '../../cli/doctor/checks.js';
import { ConfigError } from '../../core/services/config/config-file.js';
import { SettingsError } from '../../core/services/config/settings.js';
import { createLogger } from '../../core/services/log/logger.js';
import { PassThrough } from 'node:stream';
import { openExample, tempDir } from '../helpers/checkout.js';

/** A gateway nobody listens on: the doctor's gateway line fails at once, and nothing here needs an answer. */
const ENV = 'API_KEY=sk-validator-key-0123456789\nBASE_URL=http://127.0.0.1:9/v1\nMODEL=m\nSTARTUP_PROBE=off\n';

async function account(configText: string, envText = ENV): Promise<string> {
  const dir = await tempDir('wabot-validator-');
  await writeFile(path.join(dir, 'config.json'), configText);
  await writeFile(path.join(dir, '.env'), envText, { mode: 0o600 });
  return dir;
}

/** Why start refuses this account (the ConfigError's or SettingsError's words), or undefined when it starts. */
async function startRefusal(dir: string): Promise<{ kind: string; message: string; problems?: string[] } | undefined> {
  const sink = new PassThrough();
  sink.resume();
  let app;
  try {
    app = await createApp({ cwd: dir, env: {}, logger: createLogger({ level: 'silent', destination: sink }), skipHealthProbe: true });
  } catch (err) {
    if (err instanceof ConfigError) return { kind: 'config', message: err.message, problems: err.problems };
    if (err instanceof SettingsError) return { kind: 'settings', message: err.message };
    throw err;
  }
  await app.stop();
  return undefined;
}

async function doctorLine(dir: string, name: string): Promise<DoctorCheck> {
  const { checks } = await runDoctor({ cwd: dir, env: {}, networkTimeoutMs: 2000, checkTimeoutMs: 10_000 });
  const check = checks.find((c) => c.name === name);
  if (!check) throw new Error(`no ${name} line in ${JSON.stringify(checks)}`);
  return check;
}

describe('one validator: the doctor refuses exactly what start refuses, in the same words', function () {
  this.timeout(60_000);

  const withExample = async (change: (config: Record<string, any>) => void) => {
    const config = structuredClone(await openExample());
    config.port = 0;
    change(config);
    return JSON.stringify(config, null, 2);
  };

  // Every way config.json can be refused: JSON, the core's schema (unknown key at the top and inside, type, range,
  // enum, digits), a plugin's options, and a top-level key no plugin owns.
  const table: Array<{ what: string; config: () => Promise<string>; expected: RegExp }> = [
    { what: 'a misspelt top-level key', config: () => withExample((c) => (c.histroy = { maxMessages: 10 })), expected: /^histroy: unknown field \(did you mean "history"\?\)$/ },
    { what: 'an unknown top-level key that is no typo', config: () => withExample((c) => (c.colourScheme = 'dark')), expected: /^colourScheme: unknown field$/ },
    { what: 'an unknown key inside a section', config: () => withExample((c) => (c.history = { maxMesages: 10 })), expected: /^history\.maxMesages: unknown field$/ },
    { what: 'a wrong type', config: () => withExample((c) => (c.history = { maxMessages: 'lots' })), expected: /^history\.maxMessages: must be integer$/ },
    { what: 'a number out of range', config: () => withExample((c) => (c.port = 70_000)), expected: /^port: must be <= 65535$/ },
    { what: 'a value outside the choices', config: () => withExample((c) => (c.access = { mode: 'strangers' })), expected: /^access\.mode: must be one of / },
    { what: 'an owner that is not digits', config: () => withExample((c) => (c.owners = ['+1 555 0100'])), expected: /^owners\.0: must be digits only/ },
    { what: "a plugin's option of the wrong type", config: () => withExample((c) => (c.plugins = { ...c.plugins, premium: { phrases: 'use the big one' } })), expected: /^plugins\.premium\.phrases: must be array$/ },
    { what: "an option the plugin does not have", config: () => withExample((c) => (c.plugins = { ...c.plugins, premium: { phrase: ['x'] } })), expected: /^plugins\.premium\.phrase: unknown option$/ },
    { what: 'broken JSON', config: async () => '{\n  "port": 0,\n  "owners": ["1555"]\n  "botName": "x"\n}\n', expected: /^not valid JSON: .*\(line 4, column 3\)$/ },
    { what: 'a list instead of an object', config: async () => '[]\n', expected: /^must be a JSON object$/ },
  ];

  for (const row of table) {
    it(`${row.what}: start refuses it, and the doctor's config.json line is ✘ with the same problem`, async () => {
      const dir = await account(await row.config());
      const refusal = await startRefusal(dir);
      expect(refusal, 'start should refuse').to.not.equal(undefined);
      expect(refusal!.kind).to.equal('config');
      expect(refusal!.problems!.some((p) => row.expected.test(p)), refusal!.message).to.equal(true);
      const line = await doctorLine(dir, 'config.json');
      expect(line.status).to.equal('fail');
      expect(line.detail).to.equal(`${path.join(dir, 'config.json')}: ${refusal!.problems!.join('; ')}`);
    });
  }

  it('a config.json start accepts is ✔ in the doctor', async () => {
    const dir = await account(await withExample((c) => (c.owners = ['15550100200'])));
    expect(await startRefusal(dir)).to.equal(undefined);
    expect((await doctorLine(dir, 'config.json')).status).to.equal('ok');
  });

  const settingsTable = [
    { what: 'a log level that does not exist', env: `${ENV}LOG_LEVEL=loud\n` },
    { what: 'a gateway key without its model', env: 'API_KEY=sk-validator-key-0123456789\nBASE_URL=http://127.0.0.1:9/v1\n' },
    { what: 'no provider key', env: 'LOG_LEVEL=info\n' },
  ];
  for (const row of settingsTable) {
    it(`.env with ${row.what}: start refuses it, and the doctor's .env line is ✘ with the same words`, async () => {
      const dir = await account(await withExample(() => undefined), row.env);
      const refusal = await startRefusal(dir);
      expect(refusal?.kind).to.equal('settings');
      const line = await doctorLine(dir, '.env');
      expect(line.status).to.equal('fail');
      expect(line.detail).to.equal(`${path.join(dir, '.env')}: ${refusal!.message}`);
    });
  }

  it('.env names the bot does not read and lines that are not settings are ⚠ with the setting meant; start logs the same', async () => {
    const dir = await account(await withExample((c) => (c.owners = ['15550100200'])), `${ENV}PRIMARY_GATWAY_MODEL=gpt\nSEARCH_APIKEY=tvly-key-0123456789\nFAVOURITE_COLOUR=blue\nsk-pasted-key-without-a-name\nAUDIO_API_KEY_2=gsk-second-0123456789\nIMAGE_MODEL=img\n`);
    const line = await doctorLine(dir, '.env names');
    expect(line.status).to.equal('warn');
    expect(line.detail).to.equal(
      `${path.join(dir, '.env')}: line 5: PRIMARY_GATWAY_MODEL is not a setting the bot reads (did you mean PRIMARY_GATEWAY_MODEL?); ` +
        'line 6: SEARCH_APIKEY is not a setting the bot reads (did you mean SEARCH_API_KEY?); line 7: FAVOURITE_COLOUR is not a setting the bot reads; ' +
        'line 8 is not NAME=value and is ignored',
    );
    // Never the junk line's text (it may be a pasted key).
    expect(line.detail).to.not.include('sk-pasted');
    const sink = new PassThrough();
    let log = '';
    sink.on('data', (d) => (log += d));
    const app = await createApp({ cwd: dir, env: {}, logger: createLogger({ level: 'warn', destination: sink, pretty: false }), skipHealthProbe: true });
    await app.stop();
    expect(log).to.include('line 5: PRIMARY_GATWAY_MODEL is not a setting the bot reads (did you mean PRIMARY_GATEWAY_MODEL?)').and.include('line 8 is not NAME=value and is ignored');
  });

  it('the doctor checks the installed plugins: a pluginPackages entry not installed and an unbuilt plugins.local folder are ✘, an installed one is said to be off until enabled', async () => {
    const dir = await account(await withExample((c) => {
      c.owners = ['15550100200'];
      c.pluginPackages = ['wa-plugin-absent'];
    }));
    await mkdir(path.join(dir, 'plugins.local', 'unbuilt'), { recursive: true });
    await writeFile(path.join(dir, 'plugins.local', 'unbuilt', 'index.ts'), 'export default 1;\n');
    await mkdir(path.join(dir, 'plugins.local', 'hello'), { recursive: true });
    const entry = JSON.stringify(new URL('../../core/index.js', import.meta.url).href);
    await writeFile(path.join(dir, 'plugins.local', 'hello', 'index.js'), `import { definePlugin } from ${entry};\nexport default definePlugin({ name: 'hello', description: 'x', setup: () => ({}) });\n`);
    const { checks } = await runDoctor({ cwd: dir, env: {}, networkTimeoutMs: 2000, checkTimeoutMs: 10_000 });
    const byName = (name: string) => checks.find((c) => c.name === name);
    expect(byName('plugin wa-plugin-absent')).to.include({ status: 'fail' });
    expect(byName('plugin wa-plugin-absent')!.detail).to.match(/^PLUGIN_NOT_FOUND: package wa-plugin-absent is not installed/);
    expect(byName('plugin plugins.local/unbuilt')).to.include({ status: 'fail' });
    expect(byName('plugin plugins.local/unbuilt')!.detail).to.match(/holds index\.ts but no built index\.js/);
    expect(byName('plugins')).to.deep.include({ status: 'ok', detail: 'installed but off until you enable them: hello (plugins.<name>.enabled: true in config.json, or the dashboard)' });
  });
});
