import { AllProvidersFailedError, KeysExhaustedError } from '../../../core/api/errors.js';
import { expect } from 'chai';
import { loadSettings } from '../../../core/services/config/settings.js';
import { ProviderChain } from '../../../core/services/providers/provider-chain.js';
import { FakeGateway, failures } from '../../fakes/openai-gateway.js';
import { createLogger } from '../../../core/services/log/logger.js';
import { PassThrough } from 'node:stream';
import { AudioProvider } from '../../../plugins/voice/audio-provider.js';
import { KeyPool } from '../../../core/services/providers/key-pool.js';
import { nextUtcMidnight, parseDurationMs, resetDelayMs } from '../../../core/services/providers/reset-time.js';
import { audioFailures, FakeAudio } from '../../../app/testing/index.js';

describe('audio key pool', () => {
  it('reads reset times the way providers send them', () => {
    expect(parseDurationMs('2m59.5s')).to.equal(179_500);
    expect(parseDurationMs('1h2m')).to.equal(3_720_000);
    expect(parseDurationMs('500ms')).to.equal(500);
    expect(parseDurationMs('30')).to.equal(30_000);
    expect(resetDelayMs(new Headers({ 'retry-after': '12' }), '')).to.equal(12_000);
    expect(resetDelayMs(new Headers({ 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '3m', 'x-ratelimit-remaining-tokens': '10', 'x-ratelimit-reset-tokens': '9m' }), '')).to.equal(180_000);
    expect(resetDelayMs(new Headers(), 'Limit 7200, Used 7185. Please try again in 7m30.5s.')).to.equal(450_500);
    expect(resetDelayMs(new Headers(), 'no hint')).to.equal(undefined);
    expect(nextUtcMidnight(Date.parse('2025-01-01T13:00:00Z'))).to.equal(Date.parse('2025-01-02T00:00:00Z'));
  });

  it('reports its state as the audio capability without ever naming a key', async () => {
    const fake = await FakeAudio.start();
    try {
      let clock = Date.parse('2025-05-01T10:00:00Z');
      const sink = new PassThrough();
      let logged = '';
      sink.on('data', (d) => (logged += d));
      const pool = new KeyPool(['pool-key-aaaaaa', 'pool-key-bbbbbb'], createLogger({ level: 'debug', pretty: false, destination: sink }), () => clock);
      const provider = new AudioProvider(pool, { baseUrl: fake.url, model: 'm', chatModel: 'c', timeoutMs: 10_000 });
      expect(pool.status()).to.deep.equal({ ok: true, detail: '2 of 2 audio key(s) usable', counts: { usable: 2, parked: 0, rejected: 0 } });
      fake.always('pool-key-aaaaaa', audioFailures.rateLimit(300)).always('pool-key-bbbbbb', audioFailures.badKey);
      const file = { bytes: Buffer.from('OggS-not-really'), fileName: 'voice.ogg', mimetype: 'audio/ogg' };
      let error: unknown;
      try {
        await provider.transcribe(file);
      } catch (err) {
        error = err;
      }
      expect(error).to.be.instanceOf(KeysExhaustedError);
      const status = pool.status();
      expect(status.ok).to.equal(false);
      expect(status.counts).to.deep.equal({ usable: 0, parked: 1, rejected: 1 });
      expect(status.detail).to.equal('all 2 audio key(s) are used up (1 rate-limited, the first is free again at 10:05 UTC; 1 rejected by the provider)');
      clock += 301_000;
      expect(pool.status()).to.deep.equal({ ok: true, detail: '1 of 2 audio key(s) usable', counts: { usable: 1, parked: 0, rejected: 1 } });
      await new Promise((resolve) => setImmediate(resolve));
      expect(logged).to.not.include('pool-key-');
      expect(pool.size).to.equal(2);
      expect(new KeyPool([], createLogger({ level: 'silent', pretty: false, destination: sink })).status()).to.deep.equal({ ok: false, notConfigured: true, detail: 'no audio key is configured (set AUDIO_API_KEYS)', counts: { usable: 0, parked: 0, rejected: 0 } });
    } finally {
      await fake.close();
    }
  });
});

describe('one key pool for the audio keys: the chain and the plugins share each key’s health', () => {
  let primary: FakeGateway;
  let audio: FakeGateway;
  beforeEach(async () => {
    [primary, audio] = await Promise.all([FakeGateway.start('primary'), FakeGateway.start('audio')]);
  });
  afterEach(() => Promise.all([primary.close(), audio.close()]));

  function setup() {
    let clock = Date.parse('2025-05-01T10:00:00Z');
    const settings = loadSettings({
      cwd: '/nonexistent',
      env: { PRIMARY_GATEWAY_API_KEY: 'pk-primary', PRIMARY_GATEWAY_BASE_URL: primary.url, PRIMARY_GATEWAY_MODEL: 'm', AUDIO_API_KEYS: 'gsk-one', AUDIO_BASE_URL: audio.url, UPSTREAM_TIMEOUT_MS: '2000' },
    });
    const log = createLogger({ level: 'silent', pretty: false, destination: new PassThrough() });
    const pool = new KeyPool(settings.audio.keys, log, () => clock);
    const chain = new ProviderChain(settings, log, undefined, () => clock);
    chain.useKeyPool(pool);
    return { pool, chain, advance: (ms: number) => (clock += ms) };
  }
  const ask = [{ role: 'user' as const, content: 'hello' }];

  it('a key the plugins found rate-limited is skipped by the chain’s audio leg until its rest ends', async () => {
    const { pool, chain, advance } = setup();
    pool.markFailed('gsk-one', Date.parse('2025-05-01T10:05:00Z'), 'rate limit');
    primary.next(failures.serverError);
    const err = await chain.complete(ask).then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(AllProvidersFailedError);
    expect(audio.chats()).to.have.length(0);
    advance(301_000);
    primary.next(failures.serverError);
    expect((await chain.complete(ask)).text).to.equal('audio: hello');
    expect(audio.chats()).to.have.length(1);
  });

  it('a limit or a rejection the chain meets on an audio leg parks or rejects the key for the plugins too', async () => {
    const { pool, chain } = setup();
    primary.next(failures.serverError);
    audio.next(failures.rateLimit(120));
    await chain.complete(ask).catch(() => undefined);
    expect(pool.isUsable('gsk-one')).to.equal(false);
    expect(pool.status()).to.deep.include({ ok: false, detail: 'all 1 audio key(s) are used up (1 rate-limited, the first is free again at 10:02 UTC)' });
    const rejected = setup();
    primary.next(failures.serverError);
    audio.next(failures.badKey);
    await rejected.chain.complete(ask).catch(() => undefined);
    expect(rejected.pool.status().detail).to.equal('the audio key was rejected by the provider (check AUDIO_API_KEYS in .env)');
  });
});
