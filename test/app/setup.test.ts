import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import dotenv from 'dotenv';
import { loadSettings } from '../../core/services/config/settings.js';
import { completion, failures, FakeGateway, lastUserText } from '../fakes/openai-gateway.js';
import { FakeSearchProvider } from '../fakes/search-provider.js';
import { startInPty } from '../helpers/pty.js';
import { runCommand, runScript, type ScriptRun } from '../helpers/run-script.js';
import { ROOT, tempDir } from '../helpers/checkout.js';
import { runConsoleChat } from '../helpers/console-chat.js';

const GOOD_KEY = 'sk-setup-good-key-0123456789';
const WRONG_KEY = 'sk-setup-wrong-key-9876543210';
const MODEL = 'gw-model';

/** Output of a run, both streams: what the owner saw. */
const said = (run: ScriptRun) => `${run.stdout}\n${run.stderr}`;

async function readJson(file: string): Promise<Record<string, any>> {
  return JSON.parse(await readFile(file, 'utf8'));
}

/** An account folder with a config.json of the owner's own (a field set-up does not ask about, a free web port). */
async function accountFolder(): Promise<string> {
  const dir = await tempDir('wabot-setup-');
  const example = JSON.parse(await readFile(path.join(ROOT, 'config.example.json'), 'utf8'));
  await writeFile(path.join(dir, 'config.json'), JSON.stringify({ ...example, port: 0, botName: 'Kept Bot', history: { maxMessages: 42 } }, null, 2));
  return dir;
}

describe('npm run setup', function () {
  this.timeout(120_000);
  let gateway: FakeGateway;

  before(async () => {
    // A gateway that knows one key and one model, and lists its models.
    gateway = await FakeGateway.start(
      'setup-gw',
      (req) => {
        if (req.headers.authorization !== `Bearer ${GOOD_KEY}`) return failures.badKey;
        if (req.json?.model !== MODEL) return failures.unknownModel;
        return { status: 200, json: completion(`setup-gw: ${lastUserText(req)}`, { model: MODEL }) };
      },
      { models: [MODEL, 'gw-other-model'], modelsKey: GOOD_KEY },
    );
  });
  after(async () => gateway.close());

  const flags = (key = GOOD_KEY, extra: string[] = []) => ['--base-url', `${gateway.url}/v1`, '--api-key', key, '--model', MODEL, ...extra];

  it('from flags: checks the key with a real request, writes .env (0600) and config.json keeping the rest, and the bot answers with them', async () => {
    const dir = await accountFolder();
    const before = gateway.chats().length;
    // The one set-up run as its own process (the others run the same command in this one): its exit code and output.
    const run = await runScript('setup', [...flags(GOOD_KEY, ['--owner', '+1 555 0100 200', '--access', 'everyone', '--yes'])], { cwd: dir });
    expect(run.code, said(run)).to.equal(0);
    expect(said(run)).to.not.include(GOOD_KEY);
    // The key was checked with one real request, with that key.
    const checks = gateway.chats().slice(before);
    expect(checks).to.have.length(1);
    expect(checks[0].headers.authorization).to.equal(`Bearer ${GOOD_KEY}`);

    const envFile = path.join(dir, '.env');
    expect((await stat(envFile)).mode & 0o777).to.equal(0o600);
    const settings = loadSettings({ cwd: dir, env: {} });
    expect(settings.primary).to.include({ apiKey: GOOD_KEY, baseUrl: `${gateway.url}/v1`, model: MODEL });
    const config = await readJson(path.join(dir, 'config.json'));
    expect(config.owners).to.deep.equal(['15550100200']);
    expect(config.access.mode).to.equal('everyone');
    expect(config).to.include({ botName: 'Kept Bot', port: 0 });
    expect(config.history).to.deep.equal({ maxMessages: 42 });
    // A new .env starts from the documented example: its explanations are there for the owner.
    expect(await readFile(envFile, 'utf8')).to.include('# --- Audio provider');
    expect(said(run)).to.match(/Next: npm start/);

    // The bot (the console chat, with nothing but the written files) answers through the gateway set up.
    const chat = await runConsoleChat('hello from setup\n', { cwd: dir, env: { HOME: process.env.HOME ?? '/tmp' } });
    expect(chat.code, chat.stderr).to.equal(0);
    expect(chat.lines).to.include('bot> setup-gw: hello from setup');
  });

  it('run again, keeps the key and every other line of .env when no key is given', async () => {
    const dir = await accountFolder();
    expect((await runCommand('setup', flags(GOOD_KEY, ['--owner', '15550100200', '--yes']), { cwd: dir })).code).to.equal(0);
    const envFile = path.join(dir, '.env');
    await writeFile(envFile, `${await readFile(envFile, 'utf8')}# my own note\nLOG_LEVEL=warn\n`);
    const before = gateway.chats().length;

    const again = await runCommand('setup', ['--owner', '15550100299', '--yes'], { cwd: dir });
    expect(again.code, said(again)).to.equal(0);
    expect(said(again)).to.not.include(GOOD_KEY);
    const env = dotenv.parse(await readFile(envFile, 'utf8'));
    expect(env).to.include({ PRIMARY_GATEWAY_API_KEY: GOOD_KEY, PRIMARY_GATEWAY_MODEL: MODEL, LOG_LEVEL: 'warn' });
    expect(await readFile(envFile, 'utf8')).to.include('# my own note');
    expect((await readJson(path.join(dir, 'config.json'))).owners).to.deep.equal(['15550100299']);
    // The kept key was checked again, as it is.
    expect(gateway.chats().slice(before).map((r) => r.headers.authorization)).to.deep.equal([`Bearer ${GOOD_KEY}`]);
  });

  it('a rejected key: says the key is wrong, exits 1 and writes nothing', async () => {
    const dir = await accountFolder();
    const configBefore = await readFile(path.join(dir, 'config.json'), 'utf8');
    const run = await runCommand('setup', flags(WRONG_KEY, ['--owner', '15550100200', '--yes']), { cwd: dir });
    expect(run.code).to.equal(1);
    expect(said(run)).to.match(/rejected the key \(HTTP 401\): wrong key/);
    expect(said(run)).to.match(/Nothing was written/);
    expect(said(run)).to.not.include(WRONG_KEY);
    expect(existsSync(path.join(dir, '.env'))).to.equal(false);
    expect(await readFile(path.join(dir, 'config.json'), 'utf8')).to.equal(configBefore);
  });

  it('a rejected key on a working account leaves both files as they were', async () => {
    const dir = await accountFolder();
    expect((await runCommand('setup', flags(GOOD_KEY, ['--yes']), { cwd: dir })).code).to.equal(0);
    const envBefore = await readFile(path.join(dir, '.env'), 'utf8');
    const configBefore = await readFile(path.join(dir, 'config.json'), 'utf8');
    const run = await runCommand('setup', ['--api-key', WRONG_KEY, '--owner', '15550100777', '--yes'], { cwd: dir });
    expect(run.code).to.equal(1);
    expect(await readFile(path.join(dir, '.env'), 'utf8')).to.equal(envBefore);
    expect(await readFile(path.join(dir, 'config.json'), 'utf8')).to.equal(configBefore);
  });

  it('says which part is wrong: a model the gateway does not know, an address nothing answers at', async () => {
    const dir = await accountFolder();
    const model = await runCommand('setup', ['--base-url', gateway.url, '--api-key', GOOD_KEY, '--model', 'no-such-model', '--yes'], { cwd: dir });
    expect(model.code).to.equal(1);
    expect(said(model)).to.match(/does not know the model "no-such-model"/);
    const dead = await FakeGateway.start('dead');
    const deadUrl = dead.url;
    await dead.close();
    const url = await runCommand('setup', ['--base-url', deadUrl, '--api-key', GOOD_KEY, '--model', MODEL, '--yes'], { cwd: dir });
    expect(url.code).to.equal(1);
    expect(said(url)).to.match(/cannot reach .*ECONNREFUSED.*wrong base URL/);
    expect(existsSync(path.join(dir, '.env'))).to.equal(false);
  });

  it('without --model: a wrong key or an address nothing answers at is named at once from the model list, and the only listed model is taken', async () => {
    const wrong = await accountFolder();
    const before = gateway.chats().length;
    const rejected = await runCommand('setup', ['--base-url', `${gateway.url}/v1`, '--api-key', WRONG_KEY, '--yes'], { cwd: wrong });
    expect(rejected.code, said(rejected)).to.equal(1);
    expect(rejected.stdout).to.match(/^✘ gateway .*: the gateway rejected the key \(HTTP 401\): wrong key$/m);
    expect(said(rejected)).to.not.match(/--model/).and.not.include(WRONG_KEY);
    expect(gateway.chats().length, 'nothing else was asked of the gateway').to.equal(before);
    expect(existsSync(path.join(wrong, '.env'))).to.equal(false);

    const dead = await FakeGateway.start('dead');
    const deadUrl = dead.url;
    await dead.close();
    const unreachable = await runCommand('setup', ['--base-url', deadUrl, '--api-key', GOOD_KEY, '--yes'], { cwd: wrong });
    expect(unreachable.code).to.equal(1);
    expect(unreachable.stdout).to.match(/^✘ gateway .*cannot reach .*\/v1\/models \(ECONNREFUSED\): wrong base URL, or the gateway is down$/m);

    const single = await FakeGateway.start('single', (req) => ({ status: 200, json: completion(`single: ${req.json?.model}`, { model: req.json?.model }) }), { models: ['only-model'] });
    try {
      const dir = await accountFolder();
      const run = await runCommand('setup', ['--base-url', `${single.url}/v1`, '--api-key', GOOD_KEY, '--yes'], { cwd: dir });
      expect(run.code, said(run)).to.equal(0);
      expect(run.stdout).to.include('✔ model only-model: the only one the gateway lists');
      expect(dotenv.parse(await readFile(path.join(dir, '.env'), 'utf8')).PRIMARY_GATEWAY_MODEL).to.equal('only-model');
      // Two models: the owner has to choose, and is told which.
      const two = await runCommand('setup', ['--base-url', `${gateway.url}/v1`, '--api-key', GOOD_KEY, '--yes'], { cwd: await accountFolder() });
      expect(two.code).to.equal(2);
      expect(said(two)).to.include(`give --model: the gateway lists 2 models (gw-model, gw-other-model)`);
    } finally {
      await single.close();
    }
  });

  it('checks an audio key and a search key given as flags, and refuses a rejected one', async () => {
    const search = await FakeSearchProvider.start();
    try {
      const dir = await accountFolder();
      // The audio legs' chat model is one this gateway knows (an .env line set-up does not ask about).
      await writeFile(path.join(dir, '.env'), `AUDIO_CHAT_MODEL=${MODEL}\n`);
      const audio = ['--audio-base-url', gateway.url, '--audio-keys', `${GOOD_KEY}, ${WRONG_KEY}`];
      const bad = await runCommand('setup', flags(GOOD_KEY, [...audio, '--yes']), { cwd: dir });
      expect(bad.code).to.equal(1);
      expect(said(bad)).to.match(/✘ audio key 2 .*rejected the key/);
      expect(said(bad)).to.match(/✔ audio key 1 /);
      expect(said(bad)).to.not.include(WRONG_KEY);
      search.next({ status: 401, json: { detail: { error: 'Unauthorized: missing or invalid API key.' } } });
      const badSearch = await runCommand('setup', flags(GOOD_KEY, ['--search-base-url', search.url, '--search-key', 'tvly-wrong-123456', '--yes']), { cwd: dir });
      expect(badSearch.code).to.equal(1);
      expect(said(badSearch)).to.match(/search provider rejected the key/);
      const good = await runCommand('setup', flags(GOOD_KEY, ['--audio-base-url', gateway.url, '--audio-keys', GOOD_KEY, '--search-base-url', search.url, '--search-key', 'tvly-good-123456', '--yes']), { cwd: dir });
      expect(good.code, said(good)).to.equal(0);
      const settings = loadSettings({ cwd: dir, env: {} });
      expect(settings.audio.keys).to.deep.equal([GOOD_KEY]);
      expect(settings.env.SEARCH_API_KEY).to.equal('tvly-good-123456');
      expect(search.searches().at(-1)?.headers.authorization).to.equal('Bearer tvly-good-123456');
    } finally {
      await search.close();
    }
  });

  it('writes the files ENV_FILE and CONFIG_FILE name, and the next step names them', async () => {
    const dir = await tempDir('wabot-setup-');
    const account = path.join(dir, 'accounts', 'alice');
    await mkdir(account, { recursive: true });
    const env = { ENV_FILE: path.join(account, 'alice.env'), CONFIG_FILE: path.join(account, 'alice.json') };
    const run = await runCommand('setup', flags(GOOD_KEY, ['--owner', '15550100200', '--yes']), { cwd: dir, env });
    expect(run.code, said(run)).to.equal(0);
    expect(existsSync(path.join(dir, '.env')) || existsSync(path.join(dir, 'config.json'))).to.equal(false);
    expect((await stat(env.ENV_FILE)).mode & 0o777).to.equal(0o600);
    expect(loadSettings({ cwd: dir, env }).primary.apiKey).to.equal(GOOD_KEY);
    expect((await readJson(env.CONFIG_FILE)).owners).to.deep.equal(['15550100200']);
    expect(run.stdout).to.include(`Next: ENV_FILE=${env.ENV_FILE} CONFIG_FILE=${env.CONFIG_FILE} npm start`);
  });

  it('refuses a bad flag value with the reason and writes nothing', async () => {
    const dir = await accountFolder();
    const run = await runCommand('setup', flags(GOOD_KEY, ['--owner', 'call me', '--yes']), { cwd: dir });
    expect(run.code).to.equal(2);
    expect(said(run)).to.match(/"call me" is not a phone number/);
    expect(existsSync(path.join(dir, '.env'))).to.equal(false);
  });

  it('npm start on a fresh clone in a terminal asks the set-up questions first, then starts with the answers; without a terminal it refuses, naming the variables', async () => {
    const dir = await accountFolder();
    const noTerminal = await runScript('start', [], { cwd: dir });
    expect(noTerminal.code).to.equal(1);
    expect(noTerminal.stderr).to.match(/Cannot start: No AI provider key is configured.*PRIMARY_GATEWAY_API_KEY.*API_KEY.*AUDIO_API_KEYS/s);
    expect(said(noTerminal)).to.not.include('set-up questions');
    expect(existsSync(path.join(dir, '.env'))).to.equal(false);

    const dead = await FakeGateway.start('no-whatsapp');
    const nowhere = dead.url.replace('http:', 'ws:');
    await dead.close();
    const t = startInPty([process.execPath, path.join(ROOT, 'dist', 'cli', 'start.js')], { cwd: dir, env: { HOME: process.env.HOME ?? '/tmp', WA_WEBSOCKET_URL: nowhere, STARTUP_PROBE: 'off' } });
    await t.waitFor(/Nothing is configured yet: the set-up questions come first/);
    const DOWN = '\x1b[B';
    await t.answer(/Which AI gateway/, DOWN.repeat(5));
    await t.answer(/● another gateway/, '\r');
    await t.answer(/Base URL of the gateway/, `${gateway.url}/v1\r`);
    await t.answer(/API key for/, `${GOOD_KEY}\r`);
    await t.answer(/◆\s+Model/, '\r');
    await t.answer(/Transcribe voice notes\?/, '\r');
    await t.answer(/Search the web/, '\r');
    await t.answer(/Your own WhatsApp number/, '6281234567890\r');
    await t.answer(/Who may chat with the bot privately\?/, '\r');
    await t.answer(/Turn on the \/config dashboard/, DOWN + '\r'); // No
    await t.answer(/How will you link the phone\?/, '\r');
    await t.waitFor(/Starting the bot now\./);
    // The same process goes on and starts the bot with what set-up wrote.
    await t.waitFor(/start report: works: .*chat \(primary\)[\s\S]*web server listening on/, 60_000);
    expect(dotenv.parse(await readFile(path.join(dir, '.env'), 'utf8')).PRIMARY_GATEWAY_API_KEY).to.equal(GOOD_KEY);
    t.type('\x03');
    const code = await t.exited;
    expect(code, t.screen().slice(-3000)).to.equal(0);
    expect(t.screen()).to.not.include(GOOD_KEY);
  });

  it('in a terminal: asks step by step, hides the key, offers the listed models, says a wrong key is wrong, shows the dashboard token once', async () => {
    const dir = await accountFolder();
    const t = startInPty([process.execPath, path.join(ROOT, 'dist', 'cli', 'setup.js')], { cwd: dir, env: { HOME: process.env.HOME ?? '/tmp' } });
    const DOWN = '\x1b[B';
    await t.answer(/Which AI gateway/, DOWN.repeat(5)); // the last choice: another gateway
    await t.answer(/● another gateway/, '\r');
    await t.answer(/Base URL of the gateway/, `${gateway.url}/v1\r`);
    await t.answer(/API key for/, `${WRONG_KEY}\r`);
    // The wrong key is named at once, from the model list's 401: no model question comes before it.
    await t.waitFor(/rejected the key \(HTTP 401\): wrong key/);
    expect(t.screen()).to.not.match(/◆\s+Model|gw-other-model/);
    await t.answer(/What now\?[\s\S]*type the key again/, '\r');
    await t.answer(/API key for/, `${GOOD_KEY}\r`);
    await t.waitFor(/gw-other-model/); // with the right key, the gateway's own list is offered
    t.type('\r');
    await t.answer(/Transcribe voice notes\?/, '\r'); // No
    await t.answer(/Search the web/, '\r'); // No
    await t.answer(/Your own WhatsApp number/, '+62 812 3456 789\r');
    await t.answer(/Who may chat with the bot privately\?/, '\r');
    await t.answer(/Turn on the \/config dashboard/, '\r'); // Yes
    await t.answer(/How will you link the phone\?/, '\r'); // QR
    expect(await t.exited).to.equal(0);

    const screen = t.screen();
    expect(screen).to.not.include(GOOD_KEY);
    expect(screen).to.not.include(WRONG_KEY);
    expect(screen).to.match(/Next: npm start/);
    const env = dotenv.parse(await readFile(path.join(dir, '.env'), 'utf8'));
    expect(env.PRIMARY_GATEWAY_API_KEY).to.equal(GOOD_KEY);
    expect(env.PRIMARY_GATEWAY_MODEL).to.equal(MODEL);
    expect(env.CONFIG_TOKEN).to.match(/^[0-9a-f]{64}$/);
    expect(screen.split(env.CONFIG_TOKEN).length - 1).to.equal(1);
    expect((await stat(path.join(dir, '.env'))).mode & 0o777).to.equal(0o600);
    const config = await readJson(path.join(dir, 'config.json'));
    expect(config.owners).to.deep.equal(['628123456789']);
    expect(config.botName).to.equal('Kept Bot');

    // Run again: every question offers what is set (the key masked); Enter keeps it all, the token too.
    const again = startInPty([process.execPath, path.join(ROOT, 'dist', 'cli', 'setup.js')], { cwd: dir, env: { HOME: process.env.HOME ?? '/tmp' } });
    await again.answer(/Which AI gateway[\s\S]*keep http/, '\r');
    await again.answer(/Enter keeps the current key …6789/, '\r');
    await again.answer(/◆\s+Model/, '\r');
    await again.answer(/Transcribe voice notes\?/, '\r');
    await again.answer(/Search the web/, '\r');
    await again.answer(/Your own WhatsApp number/, '\r');
    await again.answer(/Who may chat with the bot privately\?/, '\r');
    await again.answer(/The \/config dashboard has a token/, '\r'); // keep it
    await again.answer(/How will you link the phone\?/, '\r');
    expect(await again.exited).to.equal(0);
    expect(again.screen()).to.not.include(GOOD_KEY);
    expect(again.screen()).to.not.include(env.CONFIG_TOKEN);
    const kept = dotenv.parse(await readFile(path.join(dir, '.env'), 'utf8'));
    expect(kept).to.include({ PRIMARY_GATEWAY_API_KEY: GOOD_KEY, CONFIG_TOKEN: env.CONFIG_TOKEN, PRIMARY_GATEWAY_MODEL: MODEL });
    expect((await readJson(path.join(dir, 'config.json'))).owners).to.deep.equal(['628123456789']);
  });
});
