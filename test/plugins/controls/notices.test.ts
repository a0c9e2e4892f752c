import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { loadSettings } from '../../../core/services/config/settings.js';
import { createLogger } from '../../../core/services/log/logger.js';
import type { OwnerNotifier } from '../../../core/services/notices/owner-notifier.js';
import { ProviderChain } from '../../../core/services/providers/provider-chain.js';
import { AudioProvider } from '../../../plugins/voice/audio-provider.js';
import { KeyPool } from '../../../core/services/providers/key-pool.js';
import { audioFailures, FakeAudio } from '../../../app/testing/index.js';
import { FakeGateway, failures } from '../../fakes/openai-gateway.js';

/** Records what the owners would be told. */
function recorder(): OwnerNotifier & { told: string[] } {
  const told: string[] = [];
  return { told, raise: (key) => told.push(`raise ${key}`), recover: (key) => told.push(`recover ${key}`) };
}

const quiet = () => createLogger({ level: 'silent', pretty: false, destination: new PassThrough() });

describe('incidents told to owners', () => {
  it('every chat leg failing longer than the option: one notice, and one when it recovers', async () => {
    const gw = await FakeGateway.start('primary');
    let clock = Date.parse('2026-01-01T10:00:00Z');
    const chain = new ProviderChain(loadSettings({ cwd: '/nonexistent', env: { API_KEY: 'k-outage', BASE_URL: gw.url, MODEL: 'm' } }), quiet(), undefined, () => clock);
    const notices = recorder();
    chain.useNotices(notices, () => 5);
    const ask = () => chain.complete([{ role: 'user', content: 'hi' }]).then(() => 'ok', () => 'failed');
    try {
      gw.next(failures.serverError);
      expect(await ask()).to.equal('failed');
      clock += 4 * 60_000;
      gw.next(failures.serverError);
      expect(await ask()).to.equal('failed');
      expect(notices.told).to.deep.equal([]);
      clock += 2 * 60_000;
      gw.next(failures.serverError);
      expect(await ask()).to.equal('failed');
      clock += 60_000;
      gw.next(failures.serverError);
      expect(await ask()).to.equal('failed');
      expect(notices.told).to.deep.equal(['raise chat-down']);
      clock += 60_000;
      expect(await ask()).to.equal('ok');
      expect(await ask()).to.equal('ok');
      expect(notices.told).to.deep.equal(['raise chat-down', 'recover chat-down']);
      // A short hiccup later is not an incident.
      gw.next(failures.serverError);
      expect(await ask()).to.equal('failed');
      clock += 60_000;
      expect(await ask()).to.equal('ok');
      expect(notices.told).to.have.length(2);
    } finally {
      chain.stop();
      await gw.close();
    }
  });

  it('a rejected key is told once, naming the leg and never the key', async () => {
    const gw = await FakeGateway.start('primary');
    const chain = new ProviderChain(loadSettings({ cwd: '/nonexistent', env: { API_KEY: 'k-rejected-secret', BASE_URL: gw.url, MODEL: 'm' } }), quiet());
    const texts: string[] = [];
    chain.useNotices({ raise: (key, text) => texts.push(`${key}|${text}`), recover: () => undefined }, () => 5);
    try {
      gw.next(failures.badKey);
      await chain.complete([{ role: 'user', content: 'hi' }]).catch(() => undefined);
      await chain.complete([{ role: 'user', content: 'hi' }]).catch(() => undefined);
      expect(texts).to.have.length(1);
      expect(texts[0]).to.match(/^key-rejected:second\|The AI provider "second" rejected its key \(HTTP 401/);
      expect(texts[0]).to.not.include('k-rejected-secret');
      expect(chain.health()[0].state).to.equal('rejected');
    } finally {
      chain.stop();
      await gw.close();
    }
  });

  it('audio keys exhausted: one notice, one recovery; all keys rejected is not "used up"', async () => {
    const fake = await FakeAudio.start();
    let clock = Date.parse('2026-01-01T10:00:00Z');
    const pool = new KeyPool(['audio-key-a'], quiet(), () => clock);
    const notices = recorder();
    pool.notices = notices;
    const provider = new AudioProvider(pool, { baseUrl: fake.url, model: 'm', chatModel: 'c', timeoutMs: 5000 });
    const file = { bytes: Buffer.from('OggS-not-really'), fileName: 'voice.ogg', mimetype: 'audio/ogg' };
    const hear = () => provider.transcribe(file).then(() => 'ok', () => 'failed');
    try {
      fake.forKey('audio-key-a', audioFailures.rateLimit(60));
      expect(await hear()).to.equal('failed');
      expect(await hear()).to.equal('failed');
      expect(notices.told).to.deep.equal(['raise audio-keys-exhausted']);
      clock += 61_000;
      expect(await hear()).to.equal('ok');
      expect(notices.told).to.deep.equal(['raise audio-keys-exhausted', 'recover audio-keys-exhausted']);
      fake.always('audio-key-a', audioFailures.badKey);
      expect(await hear()).to.equal('failed');
      expect(pool.status().detail).to.equal('the audio key was rejected by the provider (check AUDIO_API_KEYS in .env)');
    } finally {
      await fake.close();
    }
  });
});
