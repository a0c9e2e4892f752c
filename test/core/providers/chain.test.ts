import { AllProvidersFailedError } from '../../../core/api/errors.js';
import { expect } from 'chai';
import sinon from 'sinon';
import { loadSettings } from '../../../core/services/config/settings.js';
import { createLogger } from '../../../core/services/log/logger.js';
import { normalizeBaseUrl } from '../../../core/services/providers/normalize.js';
import { ProviderChain, legsFromSettings, ContextTooLongError } from '../../../core/services/providers/provider-chain.js';
import { probeGateways } from '../../../core/services/providers/health.js';
import { FakeGateway, failures } from '../../fakes/openai-gateway.js';
import { PassThrough } from 'node:stream';

function quietLog() {
  const sink = new PassThrough();
  const lines: string[] = [];
  sink.on('data', (d: Buffer) => lines.push(...d.toString().split('\n').filter(Boolean)));
  return { log: createLogger({ level: 'debug', pretty: false, destination: sink, secrets: ['pk-primary-secret', 'sk-second-secret'] }), lines };
}

describe('provider chain', () => {
  let primary: FakeGateway;
  let second: FakeGateway;
  let audio: FakeGateway;

  beforeEach(async () => {
    [primary, second, audio] = await Promise.all([FakeGateway.start('primary'), FakeGateway.start('second'), FakeGateway.start('audio')]);
  });
  afterEach(async () => {
    sinon.restore();
    await Promise.all([primary.close(), second.close(), audio.close()]);
  });

  function settings(extra: Record<string, string> = {}, timeout = '2000') {
    return loadSettings({
      cwd: '/nonexistent',
      env: {
        PRIMARY_GATEWAY_API_KEY: 'pk-primary-secret',
        PRIMARY_GATEWAY_BASE_URL: `${primary.url}/v1`,
        PRIMARY_GATEWAY_MODEL: 'main-a',
        PRIMARY_GATEWAY_PREMIUM_MODEL: 'premium-a',
        API_KEY: 'sk-second-secret',
        BASE_URL: second.url,
        MODEL: 'main-b',
        AUDIO_API_KEYS: 'gsk-audio-1',
        AUDIO_BASE_URL: `${audio.url}/v1/`,
        AUDIO_CHAT_MODEL: 'audio-chat',
        UPSTREAM_TIMEOUT_MS: timeout,
        ...extra,
      },
    });
  }

  const ask = [{ role: 'user' as const, content: 'hello' }];

  it('orders legs primary → second → audio keys and skips a leg with an empty key', () => {
    expect(legsFromSettings(settings()).map((l) => l.name)).to.deep.equal(['primary', 'second', 'audio-1']);
    expect(legsFromSettings(settings({ PRIMARY_GATEWAY_API_KEY: '' })).map((l) => l.name)).to.deep.equal(['second', 'audio-1']);
    expect(legsFromSettings(settings({ AUDIO_API_KEYS: 'a1, a2 ,a1', AUDIO_API_KEY_1: 'a3' })).map((l) => l.name)).to.deep.equal(['primary', 'second', 'audio-1', 'audio-2', 'audio-3']);
  });

  it('refuses to start without any provider key, naming the variables to set', () => {
    expect(() => loadSettings({ cwd: '/nonexistent', env: {} })).to.throw(/PRIMARY_GATEWAY_API_KEY.*API_KEY.*AUDIO_API_KEYS/s);
  });

  it('normalises every base-URL form to exactly one /v1', async () => {
    for (const form of ['http://h:1', 'http://h:1/', 'http://h:1/v1', 'http://h:1/v1/', 'http://h:1/v1/v1']) {
      expect(normalizeBaseUrl(form)).to.deep.equal({ v1: 'http://h:1/v1', root: 'http://h:1' });
    }
    for (const form of [primary.url, `${primary.url}/`, `${primary.url}/v1`, `${primary.url}/v1/`]) {
      primary.http.reset();
      const chain = new ProviderChain(settings({ PRIMARY_GATEWAY_BASE_URL: form }), quietLog().log);
      await chain.complete(ask);
      expect(primary.http.requests.map((r) => r.path)).to.deep.equal(['/v1/chat/completions']);
    }
  });

  it('answers from the primary when it is healthy, with its main model and key', async () => {
    const chain = new ProviderChain(settings(), quietLog().log);
    const result = await chain.complete(ask);
    expect(result.text).to.equal('primary: hello');
    expect(primary.chats()[0].json.model).to.equal('main-a');
    expect(primary.chats()[0].headers.authorization).to.equal('Bearer pk-primary-secret');
    expect(second.chats()).to.have.length(0);
  });

  const cases: Array<[string, Parameters<FakeGateway['next']>[0]]> = [
    ['429 insufficient_quota', failures.insufficientQuota],
    ['429 rate limit with retry-after', failures.rateLimit(20)],
    ['500', failures.serverError],
    ['401 rejected key', failures.badKey],
    ['a dropped connection', 'drop'],
    ['an answer without content', { status: 200, json: { choices: [{ message: { role: 'assistant', content: '' } }] } }],
    ['malformed JSON', { status: 200, text: '{"choices": [', headers: { 'content-type': 'application/json' } }],
  ];
  for (const [label, behaviour] of cases) {
    it(`fails over to the second gateway on ${label}, once, without retrying the primary`, async () => {
      primary.next(behaviour);
      const chain = new ProviderChain(settings(), quietLog().log);
      const result = await chain.complete(ask);
      expect(result.text).to.equal('second: hello');
      expect(primary.chats()).to.have.length(1);
      expect(second.chats()).to.have.length(1);
    });
  }

  it('cuts a hung upstream with UPSTREAM_TIMEOUT_MS and fails over', async () => {
    primary.next('hang');
    const chain = new ProviderChain(settings({}, '300'), quietLog().log);
    const result = await chain.complete(ask);
    expect(result.text).to.equal('second: hello');
  });

  it('fails over on a refused connection', async () => {
    const chain = new ProviderChain(settings({ PRIMARY_GATEWAY_BASE_URL: 'http://127.0.0.1:9/v1' }), quietLog().log);
    expect((await chain.complete(ask)).text).to.equal('second: hello');
  });

  it('honours retry-after: the failed leg gets zero requests during its cooldown, and comes back after it', async () => {
    let now = 1_000_000;
    primary.next(failures.rateLimit(20));
    const chain = new ProviderChain(settings(), quietLog().log, undefined, () => now);
    await chain.complete(ask);
    for (let i = 0; i < 5; i++) expect((await chain.complete(ask)).leg).to.equal('second');
    expect(primary.chats()).to.have.length(1);
    now += 19_000;
    await chain.complete(ask);
    expect(primary.chats()).to.have.length(1);
    now += 2_000;
    expect((await chain.complete(ask)).leg).to.equal('primary');
    expect(primary.chats()).to.have.length(2);
  });

  it('caps a 429 retry-after at an hour: a leg told to wait a day is used again after an hour', async () => {
    let now = 1_000_000;
    primary.next(failures.rateLimit(86_400));
    const chain = new ProviderChain(settings(), quietLog().log, undefined, () => now);
    expect((await chain.complete(ask)).leg).to.equal('second');
    now += 59 * 60_000;
    expect((await chain.complete(ask)).leg).to.equal('second');
    expect(primary.chats()).to.have.length(1);
    now += 61_000;
    expect((await chain.complete(ask)).leg).to.equal('primary');
    expect(primary.chats()).to.have.length(2);
  });

  it('rests a leg with exhausted quota for hours, and a rejected key until restart (logged loudly, key redacted)', async () => {
    let now = 1_000_000;
    const { log, lines } = quietLog();
    primary.next(failures.insufficientQuota);
    second.next(failures.badKey);
    const chain = new ProviderChain(settings(), log, undefined, () => now);
    expect((await chain.complete(ask)).leg).to.equal('audio-1');
    now += 60 * 60_000; // one hour later both are still resting
    expect((await chain.complete(ask)).leg).to.equal('audio-1');
    now += 30 * 24 * 60 * 60_000; // a month later: quota back, rejected key still skipped
    expect((await chain.complete(ask)).leg).to.equal('primary');
    expect(second.chats()).to.have.length(1);
    const authLine = lines.find((l) => l.includes('rejected its key'));
    expect(authLine).to.be.a('string');
    expect(lines.join('\n')).not.to.include('sk-second-secret');
    expect(lines.join('\n')).not.to.include('pk-primary-secret');
  });

  it('when every leg fails, throws one short honest error without provider details', async () => {
    primary.next(failures.serverError);
    second.next(failures.serverError);
    audio.next(failures.serverError);
    const chain = new ProviderChain(settings(), quietLog().log);
    const err = await chain.complete(ask).catch((e) => e);
    expect(err).to.be.instanceOf(AllProvidersFailedError);
    expect(err.message).not.to.match(/org-|500|primary|second|audio/);
  });

  it('uses the premium model only when asked, skipping legs without one', async () => {
    const chain = new ProviderChain(settings(), quietLog().log);
    await chain.complete(ask, { premium: true });
    await chain.complete(ask);
    expect(primary.chats().map((r) => r.json.model)).to.deep.equal(['premium-a', 'main-a']);
    primary.next(failures.serverError);
    const err = await chain.complete(ask, { premium: true }).catch((e) => e);
    expect(err).to.be.instanceOf(AllProvidersFailedError);
    expect(second.chats()).to.have.length(0);
  });

  it('reports a context-length error to the caller instead of replaying it on every leg', async () => {
    primary.next(failures.contextTooLong);
    const chain = new ProviderChain(settings(), quietLog().log);
    const err = await chain.complete(ask).catch((e) => e);
    expect(err).to.be.instanceOf(ContextTooLongError);
    expect(second.chats()).to.have.length(0);
    expect(chain.available()).to.equal(true);
  });

  it('probes each gateway root URL (without /v1) at start, and reports a refused one as unhealthy', async () => {
    const s = settings({ API_KEY: 'k', BASE_URL: 'http://127.0.0.1:9/v1' });
    const health = await probeGateways(legsFromSettings(s), 2000);
    expect(primary.http.received('GET /')).to.have.length(1);
    expect(health).to.deep.include({ name: 'primary', url: `${primary.url}/`, healthy: true, detail: 'HTTP 200' });
    expect(health.find((h) => h.name === 'second')?.healthy).to.equal(false);
    expect(audio.http.received('GET /')).to.have.length(0);
  });

  it('anyHealthy says what health() says, for all legs and for the premium ones, as legs rest and come back', async () => {
    let clock = Date.now();
    const chain = new ProviderChain(settings({ AUDIO_API_KEYS: '' }), quietLog().log, undefined, () => clock);
    const premium = (leg: { premiumModel?: string }) => Boolean(leg.premiumModel);
    const agrees = (why: string) => {
      const health = chain.health();
      expect(chain.anyHealthy(), `all legs: ${why}`).to.equal(health.some((h) => h.state === 'healthy'));
      expect(chain.anyHealthy(premium), `premium legs: ${why}`).to.equal(health.some((h) => h.state === 'healthy' && Boolean(h.premiumModel)));
      return [chain.anyHealthy(), chain.anyHealthy(premium)];
    };
    expect(agrees('all well')).to.deep.equal([true, true]);
    // The primary (the only premium leg) rests for 20 s; the second answers.
    primary.next(failures.rateLimit(20));
    await chain.complete(ask);
    expect(agrees('primary resting')).to.deep.equal([true, false]);
    // The second's key is rejected too: no leg can answer.
    second.next(failures.badKey);
    await chain.complete(ask).catch(() => undefined);
    expect(agrees('every leg resting or rejected')).to.deep.equal([false, false]);
    // The primary's rest is over.
    clock += 21_000;
    expect(agrees('primary back')).to.deep.equal([true, true]);
  });
  it('a start check that saw a rejected key or an unknown model rests that leg until a "Test now" answers; other outcomes only show', async () => {
    const { log } = quietLog();
    const chain = new ProviderChain(settings(), log);
    chain.recordStartCheck('primary', { ok: false, problem: 'rejected-key', status: 401, detail: 'the gateway rejected the key (HTTP 401)', fix: 'correct PRIMARY_GATEWAY_API_KEY in .env' });
    chain.recordStartCheck('second', { ok: false, problem: 'unknown-model', status: 404, detail: 'the gateway does not know the model "main-b"', fix: 'set MODEL in .env' });
    chain.recordStartCheck('audio-1', { ok: true, degraded: true, problem: 'rate-limited', status: 429, detail: 'rate-limited now' });
    const result = await chain.complete(ask);
    expect(result.leg).to.equal('audio-1');
    expect(primary.chats()).to.deep.equal([]);
    expect(second.chats()).to.deep.equal([]);
    const health = Object.fromEntries(chain.health().map((h) => [h.name, h]));
    expect(health.primary).to.deep.include({ state: 'rejected', startCheck: { ok: false, problem: 'rejected-key', detail: 'the gateway rejected the key (HTTP 401)', fix: 'correct PRIMARY_GATEWAY_API_KEY in .env' } });
    expect(health.second.state).to.equal('cooling-down');
    expect(health['audio-1']).to.deep.include({ state: 'healthy', startCheck: { ok: true, degraded: true, problem: 'rate-limited', detail: 'rate-limited now' } });
    // The owner fixed the key and pressed "Test now": the leg answers again, its start-check ✘ is history.
    expect((await chain.testLeg('primary')).ok).to.equal(true);
    expect(chain.health()[0].state).to.equal('healthy');
    expect(chain.health()[0].startCheck).to.equal(undefined);
    expect((await chain.complete(ask)).leg).to.equal('primary');
  });
});
