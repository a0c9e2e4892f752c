import { expect } from 'chai';
import pingPlugin from '../../plugins/ping/index.js';
import voicePlugin from '../../plugins/voice/index.js';
import searchPlugin from '../../plugins/search/index.js';
import { FakeGateway, completion, failures } from '../fakes/openai-gateway.js';
import { FakeSearchProvider } from '../fakes/search-provider.js';
import { HttpFake, type RecordedRequest } from '../../app/testing/http-fake.js';
import { FakeAudio, startTestBot, type TestBot } from '../../app/testing/index.js';
import { startWebServer, type WebServer } from '../../web/server.js';
import { TOKEN, login, request } from '../web/web-helpers.js';

const GOOD_KEY = 'sk-good-key-123456';
const KNOWN_MODEL = 'known-model';

/** A gateway that checks key and model of the start probe as a real one does (401 wrong key, 404 unknown model). */
function strictProbe(gw: FakeGateway): FakeGateway {
  return gw.answerProbe((req: RecordedRequest) => {
    if (req.headers.authorization !== `Bearer ${GOOD_KEY}`) return failures.badKey;
    if (req.json?.model !== KNOWN_MODEL) return failures.unknownModel;
    return { status: 200, json: completion('O', { model: req.json?.model }) };
  });
}

/** The lines of the start check, in order. */
const checkLines = (t: TestBot) => t.logs().filter((l) => typeof l.msg === 'string' && l.msg.startsWith('start check'));

describe('the start report and the start check of each upstream', function () {
  this.timeout(20000);
  let t: TestBot | undefined;
  const closing: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await t?.stop();
    t = undefined;
    for (const c of closing.splice(0)) await c.close();
  });

  it('says at start, before any message, that a gateway rejects its key, with the setting to correct; the fallback still answers', async () => {
    const primary = strictProbe(await FakeGateway.start('primary'));
    const second = strictProbe(await FakeGateway.start('second'));
    closing.push(primary, second);
    t = await startTestBot(pingPlugin, { env: { PRIMARY_GATEWAY_API_KEY: 'sk-wrong-key-999999', PRIMARY_GATEWAY_BASE_URL: primary.url, PRIMARY_GATEWAY_MODEL: KNOWN_MODEL, API_KEY: GOOD_KEY, BASE_URL: second.url, MODEL: KNOWN_MODEL }, healthProbe: true });
    await t.app.healthChecked;
    const lines = checkLines(t);
    const primaryLine = lines.find((l) => l.upstream === 'primary');
    expect(primaryLine?.level).to.equal(40);
    expect(primaryLine?.msg).to.equal(
      `start check ✘ primary (${KNOWN_MODEL}): the gateway rejected the key (HTTP 401): wrong key, or a key of another provider — fix: correct PRIMARY_GATEWAY_API_KEY in .env (npm run setup)`,
    );
    expect(lines.find((l) => l.upstream === 'second')?.msg).to.equal(`start check ✔ second (${KNOWN_MODEL}): key accepted, model ${KNOWN_MODEL} answered`);
    expect(lines.at(-1)?.msg).to.equal('start check done: 1 of 2 upstream(s) answer');
    expect(t.app.startChecks.map((c) => [c.name, c.ok, c.problem])).to.deep.equal([
      ['primary', false, 'rejected-key'],
      ['second', true, undefined],
    ]);
    // The probe is one tiny request per leg, marked as the probe, and never counted among users' requests.
    for (const gw of [primary, second]) {
      expect(gw.probes()).to.have.length(1);
      expect(gw.probes()[0].json.max_tokens).to.equal(1);
      expect(gw.probes()[0].headers['x-wa-bot-probe']).to.equal('startup');
      expect(gw.chats()).to.deep.equal([]);
    }
    expect(JSON.stringify(t.logs())).not.to.include('sk-wrong-key-999999').and.not.to.include(GOOD_KEY);
  });

  it('skips a leg whose key the start check saw rejected: the first reply comes from the next leg, and .status and the dashboard show ✘ with the fix', async () => {
    const OWNER = '15550100200';
    const primary = strictProbe(await FakeGateway.start('primary'));
    const second = strictProbe(await FakeGateway.start('second'));
    closing.push(primary, second);
    t = await startTestBot(pingPlugin, {
      env: { PRIMARY_GATEWAY_API_KEY: 'sk-wrong-key-999999', PRIMARY_GATEWAY_BASE_URL: primary.url, PRIMARY_GATEWAY_MODEL: KNOWN_MODEL, API_KEY: GOOD_KEY, BASE_URL: second.url, MODEL: KNOWN_MODEL, CONFIG_TOKEN: TOKEN },
      config: { owners: [OWNER], port: 0 },
      healthProbe: true,
    });
    const web: WebServer = await startWebServer(t.app, () => t?.transport);
    closing.push(web);
    await t.app.healthChecked;
    const fix = 'correct PRIMARY_GATEWAY_API_KEY in .env (npm run setup)';
    // The owners are told at start, before any user's request fails (the notice goes out on its own, not with a reply).
    const notice = `⚠️ The AI provider "primary" rejected its key (HTTP 401 at the start check). It is skipped until the bot restarts: ${fix}.`;
    await t.until(() => t!.transport.texts().includes(notice));

    const replies = await t.transport.push({ senderId: `${OWNER}@s.whatsapp.net`, text: 'hello there' });
    expect(replies.flatMap((r) => ('text' in r ? [r.text] : []))).to.deep.equal(['second: hello there']);
    // The bad leg got its one probe and nothing after it: no user request was spent on it first.
    expect(primary.probes()).to.have.length(1);
    expect(primary.chats()).to.deep.equal([]);
    expect(second.chats()).to.have.length(1);

    const status = (await t.transport.push({ senderId: `${OWNER}@s.whatsapp.net`, text: '.status' })).flatMap((r) => ('text' in r ? [r.text] : [])).join('\n');
    const lines = status.split('\n');
    const primaryAt = lines.findIndex((l) => l.includes('primary (known-model)'));
    expect(lines[primaryAt]).to.match(/^🔴 primary \(known-model\): rejected: /);
    expect(lines[primaryAt + 1]).to.equal(`   start check ✘ the gateway rejected the key (HTTP 401): wrong key, or a key of another provider — fix: ${fix}`);
    expect(lines[lines.findIndex((l) => l.includes('second (known-model)')) + 1]).to.equal(`   start check ✔ key accepted, model ${KNOWN_MODEL} answered`);

    const { cookie } = await login(web.port, TOKEN);
    const page = (await request(web.port, { path: '/config/providers', headers: { cookie } })).body;
    const card = page.slice(page.indexOf('data-leg="primary"'), page.indexOf('data-leg="second"'));
    expect(card).to.include('data-start-check="failed"').and.include(`start check ✘ the gateway rejected the key (HTTP 401)`).and.include(`fix: ${fix}`);
    expect(page.slice(page.indexOf('data-leg="second"'))).to.include('data-start-check="ok"');
    for (const text of [status, page, JSON.stringify(t.logs())]) expect(text).not.to.include('sk-wrong-key-999999').and.not.to.include(GOOD_KEY);
  });

  it('names an unknown model and the setting that holds it', async () => {
    const gw = strictProbe(await FakeGateway.start('second'));
    closing.push(gw);
    t = await startTestBot(pingPlugin, { env: { API_KEY: GOOD_KEY, BASE_URL: gw.url, MODEL: 'no-such-model' }, healthProbe: true });
    await t.app.healthChecked;
    const line = checkLines(t).find((l) => l.upstream === 'second');
    expect(line?.problem).to.equal('unknown-model');
    expect(line?.msg).to.match(/^start check ✘ second \(no-such-model\): the key works, but the gateway does not know the model "no-such-model" \(HTTP 404/);
    expect(line?.msg).to.match(/— fix: set MODEL in \.env to a model the gateway knows/);
    expect(checkLines(t).at(-1)?.msg).to.match(/^start check done: 0 of 1 upstream\(s\) answer: AI answers will fail until this is fixed/);
    // A model the gateway does not know is not tried again with a user's message: the leg rests from the start.
    await t.transport.push({ text: 'hello there' });
    expect(gw.chats()).to.deep.equal([]);
    expect(t.app.chain.health()[0]).to.deep.include({ state: 'cooling-down', startCheck: { ok: false, problem: 'unknown-model', detail: line?.msg.split(': ').slice(1).join(': ').split(' — fix: ')[0], fix: 'set MODEL in .env to a model the gateway knows (npm run setup lists them)' } });
  });

  it('names a dead base URL, a rejected audio key and a rejected search key, each with its own setting', async () => {
    const dead = await HttpFake.start({});
    const deadUrl = dead.url;
    await dead.close();
    const audio = await FakeAudio.start();
    audio.http.probeAnswers.set('POST /v1/chat/completions', failures.badKey);
    const search = await FakeSearchProvider.start();
    search.http.probeAnswers.set('POST /search', { status: 401, json: { error: 'bad key' } });
    closing.push(audio, search);
    t = await startTestBot(pingPlugin, { env: { API_KEY: GOOD_KEY, BASE_URL: deadUrl, MODEL: KNOWN_MODEL, AUDIO_API_KEYS: 'gsk_audio_key_1234', AUDIO_BASE_URL: audio.url, SEARCH_API_KEY: 'tvly-key-123456', SEARCH_BASE_URL: search.url }, healthProbe: true });
    await t.app.healthChecked;
    const byName = Object.fromEntries(checkLines(t).filter((l) => l.upstream).map((l) => [l.upstream, l]));
    expect(byName.second.problem).to.equal('unreachable');
    expect(byName.second.msg).to.include(`cannot reach ${deadUrl}/v1/chat/completions (ECONNREFUSED)`).and.include('— fix: check BASE_URL in .env');
    expect(byName['audio-1'].msg).to.match(/^start check ✘ audio-1 \(.+\): the gateway rejected the key \(HTTP 401\).* — fix: correct AUDIO_API_KEYS in \.env/);
    expect(byName.search.msg).to.equal('start check ✘ search: the search provider rejected the key (HTTP 401): wrong key — fix: correct SEARCH_API_KEY in .env (npm run setup)');
    expect(search.searches()).to.deep.equal([]);
    expect(search.http.probes).to.have.length(1);
  });

  it('never holds up or stops the bot: a gateway that hangs on the probe leaves it answering commands and chat meanwhile', async () => {
    const gw = await FakeGateway.start('second');
    gw.answerProbe('hang');
    closing.push(gw);
    t = await startTestBot(pingPlugin, { env: { API_KEY: GOOD_KEY, BASE_URL: gw.url, MODEL: KNOWN_MODEL, UPSTREAM_TIMEOUT_MS: '60000' }, healthProbe: true });
    let checked = false;
    void t.app.healthChecked.then(() => (checked = true));
    await t.transport.push({ text: '.ping' });
    await t.transport.push({ text: 'hello there' });
    expect(t.transport.texts()[0]).to.match(/^pong/);
    expect(t.transport.texts()[1]).to.equal('second: hello there');
    // The probe is out (it loads its module after ready first) and still hangs: nothing waited for it.
    await gw.probed();
    expect(checked).to.equal(false);
    expect(gw.probes()).to.have.length(1);
    expect(gw.chats()).to.have.length(1);
  });

  it('STARTUP_PROBE=off sends no probe', async () => {
    const gw = await FakeGateway.start('second');
    closing.push(gw);
    t = await startTestBot(pingPlugin, { env: { API_KEY: GOOD_KEY, BASE_URL: gw.url, MODEL: KNOWN_MODEL, STARTUP_PROBE: 'off' }, healthProbe: true });
    await t.app.healthChecked;
    expect(gw.probes()).to.deep.equal([]);
    expect(checkLines(t)).to.deep.equal([]);
    expect(t.app.startChecks).to.deep.equal([]);
  });

  it('keeps the report short: what works and each thing that is off with its fix at info/warn, the tables at debug', async () => {
    t = await startTestBot([pingPlugin, voicePlugin, searchPlugin], { env: { API_KEY: GOOD_KEY, BASE_URL: 'http://127.0.0.1:9', MODEL: KNOWN_MODEL }, config: { plugins: { premium: { enabled: false } } } });
    const logs = t.logs();
    const summary = logs.find((l) => /^start report: /.test(l.msg));
    expect(summary?.level).to.equal(30);
    expect(summary?.msg).to.match(/works: chat \(second\)/).and.match(/plugins on: ping, voice, search/);
    // Never set up is not broken: audio and search (and the premium model) are off in one info line, no warning.
    const off = logs.filter((l) => /^ {2}off: /.test(l.msg) && l.level === 30);
    expect(off).to.have.length(1);
    expect(off[0].msg).to.match(/^ {2}off: (.+) — `npm run doctor` says how to turn them on$/);
    expect(/off: (.+) —/.exec(off[0].msg)![1].split(', ')).to.have.members(['premium', 'voice', 'search']);
    // (A program this machine lacks, such as yt-dlp, is still a warning: that is not a choice made in set-up.)
    expect(logs.filter((l) => l.level >= 40 && /^ {2}off.*(audio|voice|search|premium)/.test(l.msg)).map((l) => l.msg)).to.deep.equal([]);
    // Working capabilities are not listed one by one at info; the full table is at debug.
    const atInfoOrAbove = logs.filter((l) => l.level >= 30);
    expect(atInfoOrAbove.some((l) => /^ {2}[✔⚠✘] /.test(l.msg))).to.equal(false);
    expect(logs.some((l) => l.level === 20 && l.capability === 'chat' && /^ {2}✔ chat/.test(l.msg))).to.equal(true);
    expect(atInfoOrAbove.some((l) => / not set \(/.test(l.msg))).to.equal(false);
    expect(logs.find((l) => /dashboard: off/.test(l.msg))?.msg).to.include('fix: set CONFIG_TOKEN in .env');
  });
});
