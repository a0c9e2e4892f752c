import { expect } from 'chai';
import { rm, writeFile, readFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import parsePrometheus from 'parse-prometheus-text-format';
import { createApp, type App } from '../../app/app.js';
import { createLogger } from '../../core/services/log/logger.js';
import type { SessionState } from '../../core/kernel/port/transport.js';
import { MemoryTransport } from '../../core/adapters/memory/memory-transport.js';
import { startWebServer, type WebServer } from '../../web/server.js';
import pingPlugin from '../../plugins/ping/index.js';
import { createVoicePlugin } from '../../plugins/voice/index.js';
import { FakeGateway } from '../fakes/openai-gateway.js';
import { ROOT, tempDir } from '../helpers/checkout.js';
import { request, startWebTest, TOKEN, type WebTest } from './web-helpers.js';

const FOREIGN_HOST = '10.1.2.3:3000';

/** The samples of one metric family, as [labels, value] pairs. */
function samples(text: string, name: string): Array<{ labels: Record<string, string>; value: number }> {
  const family = parsePrometheus(text).find((f) => f.name === name);
  // For a histogram this parser keeps the buckets but drops labels, count and sum; the +Inf bucket is the count.
  return (family?.metrics ?? []).map((m) => ({ labels: m.labels ?? {}, value: Number(m.value ?? m.count ?? m.buckets?.['+Inf']) }));
}

function sampleValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  return samples(text, name).find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

/** A 429 and a 500 that each rest their leg for a short, known time (retry-after-ms). */
const rateLimited = { status: 429, json: { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } }, headers: { 'retry-after-ms': '2500' } };
const serverError = { status: 500, json: { error: { message: 'internal error', type: 'server_error' } }, headers: { 'retry-after-ms': '2500' } };

/** Drives both legs into a cooldown (one 429, one 500) with a message, then moves the clock past it. */
async function coolBothLegs(w: WebTest, primary: FakeGateway, second: FakeGateway): Promise<{ afterCooldown: () => Promise<void> }> {
  const clock = w.t.useClock(['Date']);
  primary.next(rateLimited);
  second.next(serverError);
  const actions = await w.t.transport.push({ text: 'what is the weather like' });
  expect(actions.map((a) => a.type)).to.include('text');
  return { afterCooldown: () => clock.tick(2600) };
}

describe('operator endpoints: /healthz, /readyz, /metrics', () => {
  let primary: FakeGateway;
  let second: FakeGateway;
  let w: WebTest;

  // A bot per test: a cooldown one test causes is never another's starting point.
  beforeEach(async () => {
    primary = await FakeGateway.start('primary');
    second = await FakeGateway.start('second');
    w = await startWebTest({
      token: TOKEN,
      plugins: [pingPlugin],
      env: {
        PRIMARY_GATEWAY_API_KEY: 'pk-primary-secret-1',
        PRIMARY_GATEWAY_BASE_URL: primary.url,
        PRIMARY_GATEWAY_MODEL: 'main-a',
        API_KEY: 'sk-second-secret-2',
        BASE_URL: second.url,
        MODEL: 'main-b',
      },
    });
  });
  afterEach(async () => {
    await w.stop();
    await Promise.all([primary.close(), second.close()]);
  });

  it('/healthz answers 200 to any Host, while the dashboard and the status page still refuse that Host', async () => {
    const health = await request(w.port, { path: '/healthz', headers: { host: FOREIGN_HOST } });
    expect(health.status).to.equal(200);
    expect(JSON.parse(health.body)).to.include({ ok: true });
    for (const probe of ['/readyz', '/metrics']) expect((await request(w.port, { path: probe, headers: { host: FOREIGN_HOST } })).status, probe).to.equal(200);
    for (const guarded of ['/config', '/config/login', '/']) {
      const res = await request(w.port, { path: guarded, headers: { host: FOREIGN_HOST } });
      expect(res.status, guarded).to.equal(421);
    }
    // Only the exact probe paths pass unguarded.
    expect((await request(w.port, { path: '/healthz/../config', headers: { host: FOREIGN_HOST } })).status).to.equal(421);
    expect((await request(w.port, { path: '/metricsx', headers: { host: FOREIGN_HOST } })).status).to.equal(421);
  });

  it('/readyz is ready, then 503 with reasons while every leg cools down, then ready again', async () => {
    const ready = await request(w.port, { path: '/readyz' });
    expect(ready.status).to.equal(200);
    expect(JSON.parse(ready.body)).to.include({ ready: true });

    const cooling = await coolBothLegs(w, primary, second);
    expect(primary.chats()).to.have.length(1);
    expect(second.chats()).to.have.length(1);

    const cool = await request(w.port, { path: '/readyz', headers: { host: FOREIGN_HOST } });
    expect(cool.status).to.equal(503);
    const body = JSON.parse(cool.body) as { ready: boolean; reasons: string[] };
    expect(body.ready).to.equal(false);
    expect(body.reasons).to.have.length(1);
    expect(body.reasons[0]).to.match(/every AI provider leg is cooling down/);
    expect(body.reasons[0]).to.contain('primary (HTTP 429').and.to.contain('second (HTTP 500');
    expect(cool.body).not.to.match(/secret|weather/);

    await cooling.afterCooldown();
    expect((await request(w.port, { path: '/readyz' })).status, 'ready again after the cooldown').to.equal(200);
    const again = await w.t.transport.push({ text: 'and now?' });
    expect(again.find((a) => a.type === 'text')).to.include({ text: 'primary: and now?' });
  });

  it('/metrics is Prometheus text whose counters grow with the messages, with no chat content, ids or keys', async () => {
    // One request to each leg into a cooldown, then, once it is over, one success on primary.
    await (await coolBothLegs(w, primary, second)).afterCooldown();
    await w.t.transport.push({ text: 'and now?' });
    const before = (await request(w.port, { path: '/metrics' })).body;
    const receivedBefore = sampleValue(before, 'wa_bot_messages_received_total', { kind: 'text' }) ?? 0;
    const answeredBefore = sampleValue(before, 'wa_bot_messages_answered_total', { kind: 'text' }) ?? 0;
    const sentBefore = sampleValue(before, 'wa_bot_messages_sent_total', { type: 'text' }) ?? 0;

    await w.t.transport.push({ text: '.ping', senderId: '62811112222@s.whatsapp.net' });
    await w.t.transport.push({ text: 'tell me about zebracorn', senderId: '62811112222@s.whatsapp.net' });
    // Not addressed in a group: received, never answered.
    await w.t.transport.push({ text: 'just chatting', chatId: '120363000000000001@g.us', isGroup: true });

    const res = await request(w.port, { path: '/metrics' });
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.match(/^text\/plain; version=0\.0\.4/);
    const text = res.body;
    expect(sampleValue(text, 'wa_bot_messages_received_total', { kind: 'text' })).to.equal(receivedBefore + 3);
    expect(sampleValue(text, 'wa_bot_messages_answered_total', { kind: 'text' })).to.equal(answeredBefore + 2);
    expect(sampleValue(text, 'wa_bot_messages_sent_total', { type: 'text' })).to.equal(sentBefore + 2);
    expect(sampleValue(text, 'wa_bot_message_handling_seconds')).to.equal(receivedBefore + 3);
    expect(sampleValue(text, 'wa_bot_queue_depth')).to.equal(0);
    expect(sampleValue(text, 'wa_bot_upstream_requests_total', { leg: 'primary', outcome: 'rate-limit' })).to.equal(1);
    expect(sampleValue(text, 'wa_bot_upstream_requests_total', { leg: 'second', outcome: 'server' })).to.equal(1);
    expect(sampleValue(text, 'wa_bot_upstream_requests_total', { leg: 'primary', outcome: 'ok' })).to.be.at.least(2);
    expect(sampleValue(text, 'wa_bot_leg_cooldowns_total', { leg: 'primary', reason: 'rate-limit' })).to.equal(1);
    expect(sampleValue(text, 'wa_bot_leg_up', { leg: 'primary' })).to.equal(1);
    expect(sampleValue(text, 'wa_bot_transport_connected')).to.equal(1);
    expect(sampleValue(text, 'wa_bot_account_restricted')).to.equal(0);
    expect(sampleValue(text, 'wa_bot_process_resident_memory_bytes')).to.be.greaterThan(0);
    expect(text).not.to.match(/zebracorn|chatting|62811112222|120363000000000001|secret|pk-primary/);
  });

  it('shows a leg that cools down in the leg gauges', async () => {
    primary.next(rateLimited);
    await w.t.transport.push({ text: 'once more' });
    const text = (await request(w.port, { path: '/metrics' })).body;
    expect(sampleValue(text, 'wa_bot_leg_up', { leg: 'primary' })).to.equal(0);
    expect(sampleValue(text, 'wa_bot_leg_up', { leg: 'second' })).to.equal(1);
    expect(sampleValue(text, 'wa_bot_leg_cooldown_remaining_seconds', { leg: 'primary' })).to.be.greaterThan(0);
    expect(sampleValue(text, 'wa_bot_leg_state', { leg: 'primary', state: 'cooling-down' })).to.equal(1);
    expect(sampleValue(text, 'wa_bot_leg_state', { leg: 'primary', state: 'healthy' })).to.equal(0);
    expect(sampleValue(text, 'wa_bot_leg_state', { leg: 'second', state: 'healthy' })).to.equal(1);
  });
});

describe('METRICS_TOKEN', () => {
  let w: WebTest;
  const metricsToken = 'm'.repeat(20) + '0123456789abcdef';
  before(async () => {
    w = await startWebTest({ plugins: [pingPlugin], env: { METRICS_TOKEN: metricsToken } });
  });
  after(() => w.stop());

  it('refuses /metrics without the bearer token (401) and serves it with the token, from any Host', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token', `Basic ${metricsToken}`, `Bearer ${metricsToken}x`, `Bearer ${metricsToken.slice(0, -1)}`]) {
      const res = await request(w.port, { path: '/metrics', headers: authorization ? { authorization } : {} });
      expect(res.status, String(authorization)).to.equal(401);
      expect(res.headers['www-authenticate']).to.match(/^Bearer/);
      expect(res.body).not.to.contain('wa_bot_');
    }
    const ok = await request(w.port, { path: '/metrics', headers: { authorization: `Bearer ${metricsToken}`, host: FOREIGN_HOST } });
    expect(ok.status).to.equal(200);
    expect(ok.body).to.contain('wa_bot_messages_received_total');
    // Probes stay open: kubelets send no token.
    expect((await request(w.port, { path: '/healthz' })).status).to.equal(200);
    expect((await request(w.port, { path: '/readyz' })).status).to.equal(200);
  });
});

describe('audio keys in the metrics', () => {
  let w: WebTest;
  before(async () => {
    w = await startWebTest({ plugins: [createVoicePlugin(), pingPlugin], env: { AUDIO_API_KEYS: 'gsk_first_key_1111,gsk_second_key_2222', AUDIO_BASE_URL: 'http://127.0.0.1:9' } });
  });
  after(() => w.stop());

  it('counts the voice plugin\'s audio keys by state, never naming a key', async () => {
    const text = (await request(w.port, { path: '/metrics' })).body;
    expect(sampleValue(text, 'wa_bot_audio_keys', { state: 'usable' })).to.equal(2);
    expect(sampleValue(text, 'wa_bot_audio_keys', { state: 'parked' })).to.equal(0);
    expect(sampleValue(text, 'wa_bot_audio_keys', { state: 'rejected' })).to.equal(0);
    // The audio keys are chain legs too (audio-1, audio-2), named by number only.
    expect(sampleValue(text, 'wa_bot_leg_up', { leg: 'audio-2' })).to.equal(1);
    expect(text).not.to.match(/gsk_/);
  });
});

/** A memory transport whose session state (connection, restriction) the test sets. */
class ControlledTransport extends MemoryTransport {
  state: SessionState = { status: 'linked' };
  override session(): SessionState {
    return this.state;
  }
}

describe('/readyz and metrics follow the transport', () => {
  let dir: string;
  let app: App;
  let web: WebServer;
  const transport = new ControlledTransport();

  before(async () => {
    dir = await tempDir();
    const example = JSON.parse(await readFile(path.join(ROOT, 'config.example.json'), 'utf8'));
    await writeFile(path.join(dir, 'config.json'), JSON.stringify({ ...example, port: 0 }));
    const logger = createLogger({ level: 'silent', pretty: false, destination: new PassThrough() });
    app = await createApp({ cwd: dir, env: { PATH: process.env.PATH ?? '', API_KEY: 'k-1234567', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm' }, plugins: [pingPlugin], logger, skipHealthProbe: true });
    await app.connect(transport);
    web = await startWebServer(app, () => transport);
  });
  after(async () => {
    await web.close();
    await app.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('is not ready while WhatsApp is not connected, and says why', async () => {
    transport.state = { status: 'offline', lastError: 'connection lost or timed out (408)' };
    const res = await request(web.port, { path: '/readyz' });
    expect(res.status).to.equal(503);
    expect(JSON.parse(res.body).reasons).to.deep.equal(['memory is not connected: offline (connection lost or timed out (408))']);
    expect(sampleValue((await request(web.port, { path: '/metrics' })).body, 'wa_bot_transport_connected')).to.equal(0);
    transport.state = { status: 'linked' };
    expect((await request(web.port, { path: '/readyz' })).status).to.equal(200);
  });

  it('shows a restricted account in /readyz and the metrics', async () => {
    transport.state = { status: 'linked', restricted: { reason: 'reach-out time-lock (463)', until: Date.UTC(2030, 0, 2, 3, 4) } };
    const res = await request(web.port, { path: '/readyz' });
    expect(res.status).to.equal(503);
    const body = JSON.parse(res.body);
    expect(body.restricted).to.equal(true);
    expect(body.reasons).to.deep.equal(['memory restricts this account (reach-out time-lock (463)) until 2030-01-02 03:04 UTC: it may refuse messages of the bot meanwhile, and refused ones are not resent']);
    expect(sampleValue((await request(web.port, { path: '/metrics' })).body, 'wa_bot_account_restricted')).to.equal(1);
    transport.state = { status: 'linked' };
    expect((await request(web.port, { path: '/readyz' })).status).to.equal(200);
    expect(sampleValue((await request(web.port, { path: '/metrics' })).body, 'wa_bot_account_restricted')).to.equal(0);
  });

  it('keeps each app\'s counts apart (one registry per app)', async () => {
    await transport.push({ text: '.ping' });
    const w2 = await startWebTest({ plugins: [pingPlugin] });
    try {
      const mine = (await request(web.port, { path: '/metrics' })).body;
      const theirs = (await request(w2.port, { path: '/metrics' })).body;
      expect(sampleValue(mine, 'wa_bot_messages_received_total', { kind: 'text' })).to.equal(1);
      expect(sampleValue(theirs, 'wa_bot_messages_received_total', { kind: 'text' }) ?? 0).to.equal(0);
    } finally {
      await w2.stop();
    }
  });
});
