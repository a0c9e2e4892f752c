import { expect } from 'chai';
import { rm } from 'node:fs/promises';
import net from 'node:net';
import { loadSettings, SettingsError } from '../../../core/services/config/settings.js';
import { runChat, tempDir, writeConfig } from '../../helpers/checkout.js';
import { runScript } from '../../helpers/run-script.js';

const ENV = { API_KEY: 'sk-log-format-secret', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm', AUDIO_API_KEYS: '' };

describe('readable logs and clear start-up failures', function () {
  // Spawned npm scripts (a whole start of the bot): seconds on a quiet machine, but more than the suite's 20 s on a
  // loaded one. The limit is only a safety net.
  this.timeout(120_000);
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir();
    await writeConfig(dir);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('LOG_FORMAT=json: one JSON object a line, one line per capability and plugin (the tables at debug), the no-audio warning once', async () => {
    const run = await runChat('.ping\n', { cwd: dir, env: { ...ENV, LOG_FORMAT: 'json', LOG_LEVEL: 'debug' } });
    expect(run.code).to.equal(0);
    const lines = run.stderr.split('\n').filter(Boolean);
    const records = lines.map((l) => JSON.parse(l) as { msg?: string; capability?: string; plugin?: string; ok?: boolean });
    expect(records.every((r) => !String(r.msg ?? '').includes('\n'))).to.equal(true);
    const caps = records.filter((r) => r.capability);
    expect(caps.map((r) => r.capability)).to.include.members(['chat', 'audio', 'ffmpeg', 'ytdlp']);
    expect(caps.find((r) => r.capability === 'audio')?.ok).to.equal(false);
    expect(records.some((r) => r.plugin === 'ping' && /ping +active/.test(String(r.msg)))).to.equal(true);
    expect(records.filter((r) => /cannot hear voice notes|deaf/i.test(String(r.msg)))).to.have.length(1);
    expect(run.stderr).to.not.include('sk-log-format-secret');
  });

  it('LOG_FORMAT=pretty: readable lines (no JSON), the capability table as real lines', async () => {
    const run = await runChat('.ping\n', { cwd: dir, env: { ...ENV, LOG_FORMAT: 'pretty', LOG_LEVEL: 'debug' } });
    expect(run.code).to.equal(0);
    const lines = run.stderr.split('\n');
    expect(lines.some((l) => l.trimStart().startsWith('{'))).to.equal(false);
    expect(lines.filter((l) => /[✔✘] (chat|ffmpeg) /.test(l))).to.have.length(2);
    expect(lines.filter((l) => /– audio /.test(l))).to.have.length(1); // no audio key: off, not broken
    expect(lines.filter((l) => /cannot hear voice notes|deaf/i.test(l))).to.have.length(1);
    expect(run.stderr).to.not.include('\u001b['); // no colour codes into a pipe
    expect(run.lines[0]).to.match(/^bot> pong/);
  });

  it('refuses an unknown LOG_FORMAT, naming the values', () => {
    expect(() => loadSettings({ cwd: dir, env: { ...ENV, LOG_FORMAT: 'xml' } })).to.throw(SettingsError, /LOG_FORMAT must be pretty or json/);
    expect(loadSettings({ cwd: dir, env: { ...ENV, LOG_FORMAT: 'JSON' } }).logFormat).to.equal('json');
    expect(loadSettings({ cwd: dir, env: ENV }).logFormat).to.equal(undefined);
  });

  it('npm start on a port in use: one clear line naming the port and the fix, exit 1, no stack', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as net.AddressInfo).port;
    await writeConfig(dir, { port });
    try {
      const result = await runScript('start', [], { cwd: dir, env: { ...ENV, LOG_FORMAT: 'json' }, timeoutMs: 100_000 });
      expect(result.code).to.equal(1);
      const message = result.stderr.split('\n').filter((l) => l.startsWith('Cannot start'));
      expect(message).to.deep.equal([`Cannot start: port ${port} on 127.0.0.1 is already in use (is another copy of the bot running?). Stop the program that holds it, or set another "port" in config.json (0 picks a free one).`]);
      expect(result.stderr).to.not.match(/\n\s+at /);
      expect(result.stderr).to.not.include('EADDRINUSE');
    } finally {
      holder.close();
    }
  });

  it('npm run chat on a port in use falls back to a free port and keeps answering', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as net.AddressInfo).port;
    await writeConfig(dir, { port });
    try {
      const run = await runChat('.ping\n', { cwd: dir, env: { ...ENV, LOG_FORMAT: 'json' } });
      expect(run.code).to.equal(0);
      expect(run.lines[0]).to.match(/^bot> pong/);
      expect(run.stderr).to.include('the configured web port is in use');
    } finally {
      holder.close();
    }
  });
});
