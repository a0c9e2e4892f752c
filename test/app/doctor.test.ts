import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { completion, failures, FakeGateway, lastUserText } from '../fakes/openai-gateway.js';
import { HttpFake } from '../../app/testing/http-fake.js';
import { runCommand, runScript, type ScriptRun } from '../helpers/run-script.js';
import { ffmpegCheck } from '../../cli/doctor/checks.js';
import { ROOT, tempDir } from '../helpers/checkout.js';

const KEY = 'sk-doctor-key-0123456789abcdef';
const AUDIO_KEY = 'gsk-doctor-audio-key-0123456789';

const said = (run: ScriptRun) => `${run.stdout}\n${run.stderr}`;
/** The report line of one check (`✔ gateway primary  …`). */
const line = (run: ScriptRun, name: string) => run.stdout.split('\n').find((l) => l.slice(2).startsWith(`${name} `)) ?? `(no line for ${name})\n${run.stdout}`;

/** An account set up as `npm run setup` leaves it: .env with the gateway (and an audio key), config.json with an owner. */
async function account(gatewayUrl: string, extraEnv = ''): Promise<string> {
  const dir = await tempDir('wabot-doctor-');
  const example = JSON.parse(await readFile(path.join(ROOT, 'config.example.json'), 'utf8'));
  await writeFile(path.join(dir, 'config.json'), JSON.stringify({ ...example, port: 0, owners: ['15550100200'] }, null, 2));
  await writeFile(
    path.join(dir, '.env'),
    `PRIMARY_GATEWAY_API_KEY=${KEY}\nPRIMARY_GATEWAY_BASE_URL=${gatewayUrl}/v1\nPRIMARY_GATEWAY_MODEL=doc-model\nAUDIO_API_KEYS=${AUDIO_KEY}\nAUDIO_BASE_URL=${gatewayUrl}\nAUDIO_CHAT_MODEL=doc-model\n${extraEnv}`,
    { mode: 0o600 },
  );
  return dir;
}

describe('npm run doctor', function () {
  this.timeout(120_000);
  let gateway: FakeGateway;
  before(async () => {
    gateway = await FakeGateway.start('doc-gw', (req) => {
      const auth = req.headers.authorization;
      if (auth !== `Bearer ${KEY}` && auth !== `Bearer ${AUDIO_KEY}`) return failures.badKey;
      // A gateway that echoes the key in its error text: the doctor must still never print it.
      if (req.json?.model !== 'doc-model') return { status: 404, json: { error: { code: 'model_not_found', message: `model ${req.json?.model} not found for key ${auth}` } } };
      return { status: 200, json: completion(`doc-gw: ${lastUserText(req)}`) };
    });
  });
  after(async () => gateway.close());

  it('a healthy account: every leg answers, exit 0, and no key is printed', async () => {
    const dir = await account(gateway.url);
    const before = gateway.chats().length;
    // The one doctor run as its own process (the others run the same command in this one): its exit code and output.
    const run = await runScript('doctor', [], { cwd: dir });
    expect(run.code, said(run)).to.equal(0);
    expect(line(run, 'gateway primary')).to.match(/^✔ .*key accepted, model doc-model answered/);
    // A root that answers says nothing worth a word (gateways often answer 404 at /).
    expect(line(run, 'gateway primary')).to.not.match(/root/);
    expect(line(run, 'audio keys')).to.match(/^✔ audio keys +1 key\(s\) at /);
    expect(line(run, 'config.json')).to.match(/^✔ .*valid \(1 owner/);
    expect(line(run, 'session')).to.match(/^⚠ session +not linked yet/);
    expect(line(run, 'running')).to.match(/no bot is running/);
    expect(said(run)).to.not.include(KEY);
    expect(said(run)).to.not.include(AUDIO_KEY);
    // One real request per leg, with that leg's key; the doctor wrote nothing into the account.
    expect(gateway.chats().slice(before).map((r) => r.headers.authorization).sort()).to.deep.equal([`Bearer ${AUDIO_KEY}`, `Bearer ${KEY}`].sort());
    expect(existsSync(path.join(dir, 'data', '.instance.lock'))).to.equal(false);
  });

  it('a dead gateway: named with the fix, exit 1; --json says the same', async () => {
    const dead = await FakeGateway.start('dead');
    const deadUrl = dead.url;
    await dead.close();
    const dir = await account(deadUrl);
    const run = await runCommand('doctor', [], { cwd: dir });
    expect(run.code).to.equal(1);
    expect(line(run, 'gateway primary')).to.match(/^✘ .*cannot reach .*ECONNREFUSED.*→ correct PRIMARY_GATEWAY_API_KEY/);
    expect(said(run)).to.match(/problem\(s\) to fix/);
    expect(said(run)).to.not.include(KEY);

    const json = await runCommand('doctor', ['--json'], { cwd: dir });
    expect(json.code).to.equal(1);
    const report = JSON.parse(json.stdout) as { ok: boolean; checks: Array<{ name: string; status: string; detail: string }> };
    expect(report.ok).to.equal(false);
    expect(report.checks.find((c) => c.name === 'gateway primary')).to.include({ status: 'fail' });
    expect(json.stdout).to.not.include(KEY);
  });

  it('a hung gateway is reported as not answering, within the upstream timeout', async () => {
    const hung = await HttpFake.start({ 'GET /': 'hang', 'POST /v1/chat/completions': 'hang' });
    try {
      const dir = await account(hung.url, 'UPSTREAM_TIMEOUT_MS=1500\n');
      const run = await runCommand('doctor', [], { cwd: dir });
      expect(run.code).to.equal(1);
      expect(line(run, 'gateway primary')).to.match(/^✘ .*no answer from .* within 2 s/);
    } finally {
      await hung.close();
    }
  });

  it('a rejected key, an unknown model, a bad config field, a broken data file and a corrupt session are each named, and the echoed key is not printed', async () => {
    const dir = await account(gateway.url);
    // The second gateway leg with a wrong model, the audio key replaced by a wrong one.
    await writeFile(path.join(dir, '.env'), `${await readFile(path.join(dir, '.env'), 'utf8')}API_KEY=${KEY}\nBASE_URL=${gateway.url}\nMODEL=no-such-model\nAUDIO_API_KEYS=gsk-wrong-audio-key-12345678\n`);
    const config = JSON.parse(await readFile(path.join(dir, 'config.json'), 'utf8'));
    await writeFile(path.join(dir, 'config.json'), JSON.stringify({ ...config, history: { maxMessages: 'lots' } }));
    await mkdir(path.join(dir, 'data', 'history'), { recursive: true });
    await writeFile(path.join(dir, 'data', 'history', '15550100200@s.whatsapp.net.json'), '{"version":1,"messages":[{"role":');
    await mkdir(path.join(dir, 'data', 'session_auth'), { recursive: true });
    await writeFile(path.join(dir, 'data', 'session_auth', 'creds.json'), '{"noiseKey": null}');

    const run = await runCommand('doctor', [], { cwd: dir });
    expect(run.code).to.equal(1);
    expect(line(run, 'gateway second')).to.match(/^✘ .*does not know the model "no-such-model"/);
    expect(line(run, 'audio keys')).to.match(/^✘ .*key 1 .*rejected the key/);
    expect(line(run, 'config.json')).to.match(/^✘ .*history\.maxMessages: must be integer/);
    expect(line(run, 'data files')).to.match(/^✘ .*history\/15550100200@s\.whatsapp\.net\.json is not valid JSON/);
    expect(line(run, 'session')).to.match(/^✘ .*creds\.json is corrupt .*noiseKey/);
    expect(said(run)).to.not.include(KEY);
    expect(said(run)).to.not.include('gsk-wrong-audio-key-12345678');
  });

  it('ffmpeg: the bundled 2018 build is ⚠ with the reason and the fix; the system\'s is ✔', () => {
    const bundled = ffmpegCheck({ path: '/bot/node_modules/@ffmpeg-installer/linux-x64/ffmpeg', source: '@ffmpeg-installer/ffmpeg (bundled 2018 build: install the system ffmpeg for untrusted media)' }, 'ffmpeg version N-92722-gf22fcd4483 Copyright');
    expect(bundled.status).to.equal('warn');
    expect(bundled.detail).to.match(/bundled with the bot, from 2018: it has decoder bugs fixed since/);
    expect(bundled.fix).to.match(/apt-get install ffmpeg/);
    expect(ffmpegCheck({ path: '/usr/bin/ffmpeg', source: 'the system' }, 'ffmpeg version 5.1.6-0+deb12u1 Copyright').status).to.equal('ok');
  });

  it('no key at all: .env is ✘ with the fix', async () => {
    const dir = await tempDir('wabot-doctor-');
    const run = await runCommand('doctor', [], { cwd: dir });
    expect(run.code).to.equal(1);
    expect(line(run, '.env')).to.match(/^✘ .*No AI provider key is configured.*→ run npm run setup/);
  });
});
