import { expect } from 'chai';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { capabilityMark } from '../../../core/kernel/capabilities/capabilities.js';
import { legsCapability } from '../../../core/kernel/capabilities/legs-capability.js';
import { ytdlpStatus } from '../../../core/kernel/capabilities/tool-age.js';
import { loadSettings } from '../../../core/services/config/settings.js';
import { createLogger } from '../../../core/services/log/logger.js';
import { ProviderChain } from '../../../core/services/providers/provider-chain.js';
import controls from '../../../plugins/controls/index.js';
import mp3 from '../../../plugins/mp3/index.js';
import { writeFakeYtdlp } from '../../fakes/fake-ytdlp.js';
import { FakeGateway, failures } from '../../fakes/openai-gateway.js';
import { tempDir } from '../../helpers/checkout.js';
import { startTestBot } from '../../../app/testing/index.js';

describe('capabilities that reflect now', () => {
  it('chat and premium turn amber while a leg rests or is rejected, red when none can answer, and recover on their own', async () => {
    const [primary, second] = await Promise.all([FakeGateway.start('primary'), FakeGateway.start('second')]);
    let clock = Date.parse('2026-03-01T10:00:00Z');
    const settings = loadSettings({
      cwd: '/nonexistent',
      env: { PRIMARY_GATEWAY_API_KEY: 'pk-live', PRIMARY_GATEWAY_BASE_URL: primary.url, PRIMARY_GATEWAY_MODEL: 'a', PRIMARY_GATEWAY_PREMIUM_MODEL: 'a+', API_KEY: 'sk-live', BASE_URL: second.url, MODEL: 'b' },
    });
    const chain = new ProviderChain(settings, createLogger({ level: 'silent', pretty: false, destination: new PassThrough() }), undefined, () => clock);
    const chat = () => legsCapability(chain.health(), () => true, 'no provider key');
    const premium = () => legsCapability(chain.health(), (l) => Boolean(l.premiumModel), 'no premium');
    try {
      expect(capabilityMark(chat())).to.equal('✔');
      primary.next(failures.rateLimit(60));
      await chain.complete([{ role: 'user', content: 'hi' }]);
      expect(capabilityMark(chat())).to.equal('⚠');
      expect(chat().detail).to.equal('1 of 2 provider leg(s) usable; primary cooling down until 10:01 UTC (rate-limited (HTTP 429 rate_limit_exceeded))');
      expect(capabilityMark(premium()), 'the only premium leg rests').to.equal('✘');
      second.next(failures.badKey);
      await chain.complete([{ role: 'user', content: 'hi' }]).catch(() => undefined);
      expect(capabilityMark(chat())).to.equal('✘');
      expect(chat().detail).to.match(/^no provider can answer now: primary cooling down until 10:01 UTC .*; second rejected: the key was rejected \(HTTP 401 invalid_api_key\)/);
      clock += 61_000;
      expect(capabilityMark(chat()), 'recovers without a call').to.equal('⚠');
      expect(capabilityMark(premium())).to.equal('✔');
      expect(chain.health().map((h) => h.state)).to.deep.equal(['healthy', 'rejected']);
    } finally {
      chain.stop();
      await Promise.all([primary.close(), second.close()]);
    }
  });

  it('flags a yt-dlp older than about six months with the fix, and leaves a recent one alone', () => {
    const now = Date.parse('2026-03-01T00:00:00Z');
    expect(ytdlpStatus('2025.12.01', 'on PATH', now)).to.deep.equal({ ok: true, detail: 'yt-dlp 2025.12.01 (on PATH)' });
    const old = ytdlpStatus('2023.03.04', 'on PATH', now);
    expect(old.ok).to.equal(true);
    expect(old.degraded).to.equal(true);
    expect(old.detail).to.match(/^yt-dlp 2023\.03\.04 \(on PATH\) is 35 months old: most sites fail .* pip install -U yt-dlp/);
    expect(ytdlpStatus('2025.08.01', 'x', now).degraded, 'seven months').to.equal(true);
    expect(ytdlpStatus('2025.09.15', 'x', now).degraded, 'five and a half months').to.equal(undefined);
  });

  it('a fake yt-dlp reporting an old version shows amber in the start log and in .status', async () => {
    const dir = await tempDir('old-ytdlp-');
    const bin = await writeFakeYtdlp(dir, path.join(dir, 'nothing.mp4'), { version: '2023.03.04' });
    const t = await startTestBot([mp3, controls], { env: { YTDLP_PATH: bin }, config: { owners: ['62811111111'] } });
    try {
      const row = t.logs().find((l) => l.capability === 'ytdlp');
      expect(row?.degraded).to.equal(true);
      expect(String(row?.msg)).to.match(/^ {2}impaired: ytdlp: yt-dlp 2023\.03\.04 .* months old: .*pip install -U yt-dlp/);
      expect(row?.level).to.equal(40);
      const status = (await t.transport.push({ senderId: '62811111111@s.whatsapp.net', text: '.status' })).map((a) => (a as { text?: string }).text).join('\n');
      expect(status).to.match(/⚠ ytdlp: yt-dlp 2023\.03\.04/);
    } finally {
      await t.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
