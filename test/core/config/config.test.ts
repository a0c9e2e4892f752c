import { expect } from 'chai';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { ConfigError, loadConfigFile, saveConfigFile } from '../../../core/services/config/config-file.js';
import { ensureDataDir, loadSettings, SettingsError } from '../../../core/services/config/settings.js';
import { createLogger } from '../../../core/services/log/logger.js';
import { safeFileName } from '../../../core/api/file-name.js';
import { runChat, tempDir, writeConfig, ROOT } from '../../helpers/checkout.js';
import { runConsoleChat } from '../../helpers/console-chat.js';

describe('configuration', function () {
  // One spawned console chat (a whole start of the bot): seconds on a quiet machine, but more than the suite's 20 s on a
  // loaded one. The limit is only a safety net.
  this.timeout(120_000);
  it('creates config.json from config.example.json when it is missing', async () => {
    const dir = await tempDir();
    const loaded = await loadConfigFile(dir);
    expect(loaded.created).to.equal(true);
    expect(readFileSync(path.join(dir, 'config.json'), 'utf8')).to.equal(readFileSync(path.join(ROOT, 'config.example.json'), 'utf8'));
    expect(loaded.config.prefix).to.equal('.');
    expect(loaded.config.port).to.equal(3000);
  });

  const bad: Array<[string, string, RegExp]> = [
    ['not JSON', '{ "prefix": ".", ', /not valid JSON/],
    ['a missing comma', '{\n  "prefix": "."\n  "port": 1\n}', /not valid JSON: Expected ',' or '}' after property value \(line 3, column 3\)/],
    ['an empty file', '', /empty/],
    ['a port of the wrong type', JSON.stringify({ prefix: '.', botName: 'b', targetUserIds: [], port: 'eighty' }), /port: must be integer/],
    ['an empty prefix', JSON.stringify({ prefix: '' }), /prefix: must NOT have fewer than 1 characters/],
    ['an unknown field', JSON.stringify({ prefix: '.', botName: 'b', targetUserIds: [], port: 1, colour: 'red' }), /colour: unknown field/],
    ['a non-digit id', JSON.stringify({ prefix: '.', botName: 'b', targetUserIds: ['+62 812'], port: 1 }), /targetUserIds\.0: must be digits only/],
    ['read receipts not given as true/false', JSON.stringify({ whatsapp: { readReceipts: 'yes' } }), /whatsapp\.readReceipts: must be boolean/],
    ['an unknown whatsapp option', JSON.stringify({ whatsapp: { presense: true } }), /whatsapp\.presense: unknown field/],
    ['a bad plugin access value', JSON.stringify({ prefix: '.', botName: 'b', targetUserIds: [], port: 1, plugins: { ping: { access: 'admins' } } }), /plugins\.ping\.access/],
  ];
  for (const [label, content, reason] of bad) {
    it(`refuses ${label}, naming the file, the field and the reason`, async () => {
      const dir = await tempDir();
      await writeFile(path.join(dir, 'config.json'), content);
      const err = await loadConfigFile(dir).catch((e) => e);
      expect(err).to.be.instanceOf(ConfigError);
      expect(err.message).to.include(path.join(dir, 'config.json'));
      expect(err.message).to.match(reason);
    });
  }

  it('fills every field it does not find with its documented default', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'config.json'), '{ "botName": "Only a name" }');
    const { config } = await loadConfigFile(dir);
    expect(config).to.deep.include({ prefix: '.', botName: 'Only a name', targetUserIds: [], port: 3000, host: '127.0.0.1', owners: [] });
    expect(config.whatsapp).to.deep.equal({ readReceipts: true, presence: true });
  });

  it('saving an invalid config leaves the file untouched; a valid one keeps a backup', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'config.json');
    await loadConfigFile(dir);
    const before = readFileSync(file, 'utf8');
    const err = await saveConfigFile(file, { prefix: '', botName: 'x', targetUserIds: [], port: 1 }).catch((e) => e);
    expect(err).to.be.instanceOf(ConfigError);
    expect(readFileSync(file, 'utf8')).to.equal(before);
    await saveConfigFile(file, { ...JSON.parse(before), botName: 'Renamed' });
    expect(JSON.parse(readFileSync(file, 'utf8')).botName).to.equal('Renamed');
    expect(readFileSync(`${file}.bak`, 'utf8')).to.equal(before);
  });

  it('reads .env, and real environment variables override it', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, '.env'), 'API_KEY=from-file\nBASE_URL=http://127.0.0.1:1\nMODEL=file-model\nDATA_DIR=mydata\n');
    const fromFile = loadSettings({ cwd: dir, env: {} });
    expect(fromFile.second).to.include({ apiKey: 'from-file', model: 'file-model' });
    expect(fromFile.dataDir).to.equal(path.join(dir, 'mydata'));
    const overridden = loadSettings({ cwd: dir, env: { MODEL: 'env-model' } });
    expect(overridden.second.model).to.equal('env-model');
  });

  it('refuses a gateway key without its base URL, naming the variable', () => {
    expect(() => loadSettings({ cwd: '/nonexistent', env: { API_KEY: 'k', MODEL: 'm' } })).to.throw(/BASE_URL/);
  });

  it('refuses settings that cannot work, naming the variable', () => {
    const base = { API_KEY: 'k', BASE_URL: 'http://127.0.0.1:1', MODEL: 'm' };
    expect(() => loadSettings({ cwd: '/nonexistent', env: { ...base, LOG_LEVEL: 'bogus' } })).to.throw(SettingsError, /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace/);
    expect(() => loadSettings({ cwd: '/nonexistent', env: { ...base, BASE_URL: 'notaurl' } })).to.throw(SettingsError, /BASE_URL must be an http\(s\) URL/);
    expect(() => loadSettings({ cwd: '/nonexistent', env: { API_KEY: 'k' } })).to.throw(SettingsError, /no BASE_URL and no MODEL/);
  });

  it('refuses a DATA_DIR that cannot hold data instead of losing history silently', async () => {
    const dir = await tempDir();
    writeFileSync(path.join(dir, 'a-file'), 'x');
    expect(() => ensureDataDir('/proc/nope')).to.throw(SettingsError, /DATA_DIR \/proc\/nope cannot hold/);
    expect(() => ensureDataDir(path.join(dir, 'a-file', 'sub'))).to.throw(SettingsError, /is not a folder/);
    ensureDataDir(path.join(dir, 'fresh', 'data'));
    expect(existsSync(path.join(dir, 'fresh', 'data'))).to.equal(true);
  });

  it('redacts every secret from the log, whatever field it hides in', () => {
    const sink = new PassThrough();
    let out = '';
    sink.on('data', (d) => (out += d));
    const log = createLogger({ pretty: false, destination: sink, secrets: loadSettings({ cwd: '/nonexistent', env: { API_KEY: 'sk-live-abcdef123456', BASE_URL: 'http://x', MODEL: 'm', AUDIO_API_KEYS: 'gsk_one111,gsk_two222', CONFIG_TOKEN: 'f'.repeat(64) } }).secrets });
    log.error({ err: new Error('401 for key sk-live-abcdef123456'), headers: { authorization: 'Bearer gsk_two222' } }, `token ${'f'.repeat(64)} and gsk_one111`);
    expect(out).to.include('[redacted]');
    for (const secret of ['sk-live-abcdef123456', 'gsk_one111', 'gsk_two222', 'f'.repeat(64)]) expect(out).not.to.include(secret);
  });

  it('redacts a secret escaped or encoded too: in a JSON log line, URL-encoded, base64 (alone or inside a Basic credential)', () => {
    const sink = new PassThrough();
    let out = '';
    sink.on('data', (d) => (out += d));
    const KEY = 'sk-"quoted"/slash\\back-é-7788';
    const log = createLogger({ pretty: false, destination: sink, secrets: loadSettings({ cwd: '/nonexistent', env: { API_KEY: KEY, BASE_URL: 'http://x', MODEL: 'm' } }).secrets });
    const basic = (user: string) => Buffer.from(`${user}:${KEY}`).toString('base64');
    const echoes = [
      KEY,
      JSON.stringify({ key: KEY }),
      JSON.stringify({ key: KEY }).replace(/\//g, '\\/'),
      JSON.stringify(KEY).replace(/é/g, '\\u00e9'),
      `https://cb.example/?key=${encodeURIComponent(KEY)}`,
      Buffer.from(KEY).toString('base64'),
      Buffer.from(KEY).toString('base64url'),
      `Authorization: Basic ${basic('a')} / ${basic('ab')} / ${basic('abc')}`,
    ];
    for (const echo of echoes) log.error({ upstream: echo }, `upstream said ${echo}`);
    const lines = out.trim().split('\n');
    expect(lines).to.have.length(echoes.length);
    const forms = [KEY, JSON.stringify(KEY).slice(1, -1), encodeURIComponent(KEY), Buffer.from(KEY).toString('base64').slice(0, 20), Buffer.from(KEY).toString('base64url').slice(0, 20)];
    lines.forEach((line, i) => {
      expect(line, `echo ${i}`).to.include('[redacted]');
      for (const form of forms) expect(line, `echo ${i}`).not.to.include(form);
      // What the line carries, decoded, holds the key nowhere either.
      const decoded = JSON.parse(line) as { msg: string };
      for (const b64 of decoded.msg.match(/[A-Za-z0-9+/_-]{16,}={0,2}/g) ?? []) expect(Buffer.from(b64, 'base64').toString('utf8'), `echo ${i}`).not.to.include('slash');
    });
  });

  it('turns hostile chat ids into file names that stay in their folder', () => {
    for (const id of ['../../etc/passwd', '..', '.', '', 'a/b\\c', '\u0000x']) {
      const name = safeFileName(id);
      expect(name).not.to.match(/[\/\\\u0000]/);
      expect(['.', '..', '']).not.to.include(name);
    }
    expect(safeFileName('628123@s.whatsapp.net')).to.equal('628123@s.whatsapp.net');
  });

  it('the service does not start on an invalid config.json and says which file, field and reason', async () => {
    const dir = await tempDir();
    await writeConfig(dir, { port: -5 });
    const run = await runChat('.ping\n', { cwd: dir, env: { API_KEY: 'x', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm' } });
    expect(run.code).to.equal(1);
    expect(run.stdout).to.equal('');
    expect(run.stderr).to.include(path.join(dir, 'config.json'));
    expect(run.stderr).to.match(/port: must be >= 0/);
  });

  it('the service does not start without any provider key and names the variables to set', async () => {
    const dir = await tempDir();
    await writeConfig(dir);
    // The console chat in this process (the invalid config.json above is the spawned one: the exit code of the process).
    const run = await runConsoleChat('.ping\n', { cwd: dir, env: {} });
    expect(run.code).to.equal(1);
    expect(run.stderr).to.match(/PRIMARY_GATEWAY_API_KEY/);
    expect(run.stderr).to.match(/AUDIO_API_KEYS/);
    expect(existsSync(path.join(dir, 'data'))).to.equal(false);
  });
});
