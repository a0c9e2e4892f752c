import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadSettings, SettingsError } from '../../../core/services/config/settings.js';
import { FakeGateway } from '../../fakes/openai-gateway.js';
import { ROOT, tempDir } from '../../helpers/checkout.js';
import { runConsoleChat } from '../../helpers/console-chat.js';

interface Run {
  code: number | null;
  lines: string[];
  stderr: string;
}

/**
 * The console chat (`npm run chat`) of the one installed copy (ROOT) run in this process, with only the given
 * environment (plus PATH and HOME). Its start refused as a process (exit code 1, the message on stderr) is tested by
 * config.test.ts.
 */
async function chatInProcess(input: string, env: Record<string, string>): Promise<Run> {
  const run = await runConsoleChat(input, { cwd: ROOT, env: { HOME: process.env.HOME ?? '/tmp', ...env } });
  return { code: run.code, stderr: run.stderr, lines: run.stdout.split('\n').filter((l) => l.startsWith('bot>')) };
}

/** One account folder as the systemd unit lays it out: .env, config.json, data/. */
async function accountFolder(root: string, name: string, gateway: FakeGateway, config: Record<string, unknown>): Promise<string> {
  const folder = path.join(root, name);
  await mkdir(folder, { recursive: true });
  const example = JSON.parse(await readFile(path.join(ROOT, 'config.example.json'), 'utf8'));
  await writeFile(path.join(folder, 'config.json'), JSON.stringify({ ...example, port: 0, ...config }, null, 2));
  await writeFile(path.join(folder, '.env'), `API_KEY=sk-${name}-key-123456\nBASE_URL=${gateway.url}\nMODEL=${name}-model\n`);
  return folder;
}

describe('several accounts from one installed copy (ENV_FILE, CONFIG_FILE, DATA_DIR)', () => {
  let root: string;
  let aliceGateway: FakeGateway;
  let bobGateway: FakeGateway;
  before(async () => {
    root = await tempDir('wabot-accounts-');
    aliceGateway = await FakeGateway.start('alice-gw');
    bobGateway = await FakeGateway.start('bob-gw');
  });
  after(async () => {
    await Promise.all([aliceGateway.close(), bobGateway.close()]);
    await rm(root, { recursive: true, force: true });
  });

  it('runs two accounts side by side, each with its own settings, config and data', async function () {
    // Two whole apps at once, on a possibly busy 2-core machine.
    this.timeout(60_000);
    const alice = await accountFolder(root, 'alice', aliceGateway, { botName: 'Alice', prefix: '.' });
    const bob = await accountFolder(root, 'bob', bobGateway, { botName: 'Bob', prefix: '!' });
    const files = (folder: string) => ({ ENV_FILE: path.join(folder, '.env'), CONFIG_FILE: path.join(folder, 'config.json'), DATA_DIR: path.join(folder, 'data') });
    const [a, b] = await Promise.all([
      chatInProcess('.help\nhello from alice\n', files(alice)),
      chatInProcess('!help\n.help\nhello from bob\n', files(bob)),
    ]);
    expect(a.code, a.stderr).to.equal(0);
    expect(b.code, b.stderr).to.equal(0);
    expect(a.lines[0]).to.match(/^bot> \*Alice\*: here is what I can do\./);
    expect(a.lines.at(-1)).to.equal('bot> alice-gw: hello from alice');
    expect(b.lines[0]).to.match(/^bot> \*Bob\*: here is what I can do\./);
    // Bob's prefix is "!": ".help" is free text for Bob, answered by Bob's own gateway.
    expect(b.lines[1]).to.equal('bot> bob-gw: .help');
    expect(b.lines.at(-1)).to.equal('bot> bob-gw: hello from bob');
    expect(aliceGateway.chats().map((r) => r.json?.model)).to.deep.equal(['alice-model']);
    expect(bobGateway.chats().map((r) => r.json?.model)).to.deep.equal(['bob-model', 'bob-model']);
    // Each account's data stays in its own folder; nothing was written into the installed copy.
    for (const [folder, said, other] of [[alice, 'hello from alice', 'hello from bob'], [bob, 'hello from bob', 'hello from alice']] as const) {
      const history = await readAll(path.join(folder, 'data'));
      expect(history, folder).to.contain(said);
      expect(history, folder).not.to.contain(other);
    }
    expect(a.stderr).to.contain(path.join(alice, 'config.json'));
  });

  it('refuses to start when ENV_FILE names a file that does not exist, naming it', async function () {
    this.timeout(60_000);
    const missing = path.join(root, 'nobody', '.env');
    expect(() => loadSettings({ cwd: root, env: { ENV_FILE: missing } })).to.throw(SettingsError, missing);
    const run = await chatInProcess('.ping\n', { ENV_FILE: missing });
    expect(run.code).to.equal(1);
    expect(run.stderr).to.contain(`ENV_FILE names ${missing}, which does not exist`);
  });

  it('resolves relative ENV_FILE, CONFIG_FILE and DATA_DIR against the working folder; .env there is then not read', async () => {
    const folder = path.join(root, 'relative');
    await mkdir(folder, { recursive: true });
    await writeFile(path.join(folder, '.env'), 'API_KEY=from-default-env-file\nBASE_URL=http://127.0.0.1:9\nMODEL=m\n');
    await writeFile(path.join(folder, 'carol.env'), 'API_KEY=from-carol-env-file\nBASE_URL=http://127.0.0.1:9\nMODEL=m\nCONFIG_FILE=carol/config.json\nDATA_DIR=carol/data\n');
    const settings = loadSettings({ cwd: folder, env: { ENV_FILE: 'carol.env' } });
    expect(settings.second.apiKey).to.equal('from-carol-env-file');
    expect(settings.envFile).to.equal(path.join(folder, 'carol.env'));
    expect(settings.configFile).to.equal(path.join(folder, 'carol', 'config.json'));
    expect(settings.dataDir).to.equal(path.join(folder, 'carol', 'data'));
    expect(loadSettings({ cwd: folder, env: {} }).configFile).to.equal(path.join(folder, 'config.json'));
  });
});

/** Every file under `dir`, concatenated (the histories). */
async function readAll(dir: string): Promise<string> {
  if (!existsSync(dir)) return '';
  let text = '';
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) text += await readFile(path.join(entry.parentPath, entry.name), 'utf8').catch(() => '');
  }
  return text;
}
