import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { webhookSecretVariable } from '../../../app/event-webhooks.js';
import { createLogger } from '../../../core/services/log/logger.js';
import { EventWebhooks, type DeliveryOutcome } from '../../../core/services/webhooks/outbound.js';
import { WebhookReceiver } from '../../fakes/webhook-receiver.js';
import { FAST_SENDING, UNPACED_SENDS } from '../../helpers/chat.js';

const OWNER = '10000000001';
const OWNER_CHAT = `${OWNER}@s.whatsapp.net`;
const SECRET = 'webhook-secret-9c4d2e7f1a3b5c6d';
const EVERY_EVENT = ['message.received', 'message.answered', 'link.changed', 'approval.requested'];

async function botWith(receiver: WebhookReceiver, options: { events?: string[]; privateHosts?: boolean; path?: string; config?: Record<string, unknown> } = {}): Promise<TestBot> {
  const env: Record<string, string> = { [webhookSecretVariable('n8n')]: SECRET };
  if (options.privateHosts !== false) env.EGRESS_ALLOW_PRIVATE_HOSTS = 'true';
  const webhooks = { n8n: { url: `${receiver.url}${options.path ?? '/in'}`, events: options.events ?? EVERY_EVENT } };
  return startTestBot([], { sendPacing: UNPACED_SENDS, config: { owners: [OWNER], webhooks, sending: FAST_SENDING, ...(options.config ?? {}) }, env });
}

describe('outbound event webhooks', () => {
  let receiver: WebhookReceiver;
  let t: TestBot;
  afterEach(async () => {
    await t?.stop();
    await receiver?.close();
  });

  it('POSTs message received and message answered, each signed with the webhook\'s secret (the receiver verifies the HMAC)', async () => {
    receiver = await WebhookReceiver.start(SECRET);
    t = await botWith(receiver, { events: ['message.received', 'message.answered'] });
    expect(await t.send({ text: 'hello there', senderId: OWNER_CHAT })).to.deep.equal(['model: hello there']);
    await receiver.until(2);
    const [received, answered] = receiver.received;
    expect(received!.json.event).to.equal('message.received');
    expect(received!.json.data).to.include({ chat: OWNER_CHAT, sender: OWNER_CHAT, text: 'hello there' });
    expect(answered!.json.event).to.equal('message.answered');
    expect(answered!.json.data).to.deep.include({ chat: OWNER_CHAT, replies: ['model: hello there'] });
    for (const r of receiver.received) {
      expect(r.signed, r.json.event).to.equal(true);
      expect(r.headers['x-hook-event']).to.equal(r.json.event);
      expect(r.headers['x-hook-delivery']).to.equal(r.json.id);
    }
    await t.app.webhooks.whenEmpty();
  });

  it('a receiver with another secret sees a signature that does not verify', async () => {
    receiver = await WebhookReceiver.start('another-secret');
    t = await botWith(receiver, { events: ['message.received'] });
    await t.send({ text: 'hi', senderId: OWNER_CHAT });
    await receiver.until(1);
    expect(receiver.received[0]!.signed).to.equal(false);
  });

  it('sends only the events a webhook asked for', async () => {
    receiver = await WebhookReceiver.start(SECRET);
    t = await botWith(receiver, { events: ['message.answered'] });
    await t.send({ text: 'one', senderId: OWNER_CHAT });
    await receiver.until(1);
    await t.app.webhooks.whenEmpty();
    expect(receiver.received.map((r) => r.json.event)).to.deep.equal(['message.answered']);
  });

  it('tries again with backoff after a 500 and delivers the same event, newly signed (fake clock)', async () => {
    receiver = await WebhookReceiver.start(SECRET, [500]);
    t = await botWith(receiver, { events: ['message.received'] });
    const clock = t.useClock(['Date', 'setTimeout', 'clearTimeout']);
    await t.send({ text: 'retry me', senderId: OWNER_CHAT });
    await receiver.until(1);
    await t.until(() => t.logs().find((l) => l.retryInMs === 2000 && l.webhook === 'n8n'));
    expect(receiver.received).to.have.length(1);
    await clock.tick(2000);
    await receiver.until(2);
    const [first, second] = receiver.received;
    expect(second!.json.id).to.equal(first!.json.id);
    expect(second!.body).to.equal(first!.body);
    expect(second!.signed).to.equal(true);
    expect(Number(second!.headers['x-hook-timestamp'])).to.equal(Number(first!.headers['x-hook-timestamp']) + 2);
    await t.app.webhooks.whenEmpty();
    const metrics = (await t.app.metrics.exposition()).text;
    expect(metrics).to.match(/wa_bot_webhook_deliveries_total\{outcome="retried"\} 1/);
    expect(metrics).to.match(/wa_bot_webhook_deliveries_total\{outcome="delivered"\} 1/);
  });

  it('never slows the message path: a receiver that does not answer leaves the replies as fast as without it', async () => {
    receiver = await WebhookReceiver.start(SECRET, ['hang', 'hang', 'hang', 'hang']);
    t = await botWith(receiver);
    expect(await t.send({ text: 'first', senderId: OWNER_CHAT })).to.deep.equal(['model: first']);
    expect(await t.send({ text: 'second', senderId: OWNER_CHAT })).to.deep.equal(['model: second']);
    await receiver.until(4);
  });

  it('makes no event nobody hears: with no webhook nothing is queued, and one added in the config hears the next message', async () => {
    receiver = await WebhookReceiver.start(SECRET);
    t = await startTestBot([], { sendPacing: UNPACED_SENDS, config: { owners: [OWNER], sending: FAST_SENDING }, env: { [webhookSecretVariable('n8n')]: SECRET, EGRESS_ALLOW_PRIVATE_HOSTS: 'true' } });
    const events = t.app.bot.automation.events;
    expect(events.heard('message.received')).to.equal(false);
    expect(await t.send({ text: 'before any webhook', senderId: OWNER_CHAT })).to.deep.equal(['model: before any webhook']);
    expect(t.app.webhooks.size).to.equal(0);
    t.app.bot.setConfig({ ...t.app.bot.config, webhooks: { n8n: { url: `${receiver.url}/in`, events: ['message.answered'] } } });
    expect(events.heard('message.answered')).to.equal(true);
    expect(events.heard('message.received')).to.equal(false);
    await t.send({ text: 'after the edit', senderId: OWNER_CHAT });
    await receiver.until(1);
    await t.app.webhooks.whenEmpty();
    expect(receiver.received.map((r) => [r.json.event, (r.json.data as { replies: string[] }).replies])).to.deep.equal([['message.answered', ['model: after the edit']]]);
  });

  it('tells approval requested (a held action) and link state changes', async () => {
    receiver = await WebhookReceiver.start(SECRET);
    t = await botWith(receiver, { events: ['approval.requested', 'link.changed'], config: { guard: { kinds: { message: 'hold' } } } });
    const outcome = await t.app.bot.automation.deliver({ to: OWNER, text: 'wash done', mode: 'message', by: 'hook:washer', summary: 'hook washer: send “wash done”' });
    expect(outcome.status).to.equal('held');
    await receiver.until(1);
    expect(receiver.received[0]!.json).to.deep.include({ event: 'approval.requested' });
    expect(receiver.received[0]!.json.data).to.include({ id: (outcome as { id: string }).id, summary: 'hook washer: send “wash done”', kind: 'message' });
    // The transport tells the change as it happens (no polling): the event is there the moment the link changed.
    const told: unknown[] = [];
    const off = t.app.bot.automation.events.on((e) => e.event === 'link.changed' && told.push(e.data));
    await t.transport.relink();
    expect(told).to.deep.equal([{ status: 'qr', previous: 'linked' }]);
    t.transport.linkAgain();
    expect(told).to.deep.equal([
      { status: 'qr', previous: 'linked' },
      { status: 'linked', previous: 'qr' },
    ]);
    off();
    await t.until(() => receiver.received.filter((r) => r.json.event === 'link.changed').length === 2);
    expect(receiver.received.filter((r) => r.json.event === 'link.changed').map((r) => r.json.data)).to.deep.equal([
      { status: 'qr', previous: 'linked' },
      { status: 'linked', previous: 'qr' },
    ]);
  });

  it('reaches only public addresses: without EGRESS_ALLOW_PRIVATE_HOSTS a loopback URL gets nothing', async () => {
    receiver = await WebhookReceiver.start(SECRET);
    t = await botWith(receiver, { privateHosts: false, events: ['message.received'] });
    await t.send({ text: 'hi', senderId: OWNER_CHAT });
    const line = await t.until(() => t.logs().find((l) => l.webhook === 'n8n' && typeof l.reason === 'string'));
    expect(line.reason).to.match(/local or private address/);
    expect(receiver.received).to.have.length(0);
  });

  it('keeps the secret and the URL (it may carry a key) out of the log', async () => {
    receiver = await WebhookReceiver.start(SECRET, [500]);
    t = await botWith(receiver, { events: ['message.received'], path: '/in?key=url-key-4f8e2a' });
    await t.send({ text: 'hi', senderId: OWNER_CHAT });
    await t.until(() => t.logs().find((l) => l.webhook === 'n8n' && l.retryInMs));
    const log = JSON.stringify(t.logs());
    expect(log).not.to.contain(SECRET);
    expect(log).not.to.contain('url-key-4f8e2a');
  });

  it('a webhook without its secret in .env gets nothing, and the log names the variable', async () => {
    receiver = await WebhookReceiver.start(SECRET);
    t = await startTestBot([], { config: { owners: [OWNER], webhooks: { n8n: { url: `${receiver.url}/in`, events: EVERY_EVENT } } }, env: { EGRESS_ALLOW_PRIVATE_HOSTS: 'true' } });
    await t.send({ text: 'hi', senderId: OWNER_CHAT });
    expect(t.logs().some((l) => /WEBHOOK_SECRET_N8N/.test(l.msg))).to.equal(true);
    expect(t.app.webhooks.size).to.equal(0);
    expect(receiver.received).to.have.length(0);
  });
});

describe('the event webhook queue', () => {
  it('is bounded: when full the oldest waiting delivery is dropped, counted and logged; the rest go in order', async () => {
    const posts: Array<{ body: string; done: () => void }> = [];
    const outcomes: DeliveryOutcome[] = [];
    const lines: string[] = [];
    const sink = new PassThrough();
    sink.on('data', (chunk: Buffer) => lines.push(chunk.toString()));
    const log = createLogger({ level: 'info', destination: sink, pretty: false });
    const queue = new EventWebhooks({
      targets: () => [{ name: 'slow', url: 'http://receiver.example/', events: ['message.received'], secret: SECRET }],
      post: (_url, body) => new Promise<void>((resolve) => posts.push({ body, done: resolve })),
      log,
      count: (outcome) => outcomes.push(outcome),
      maxQueue: 3,
      concurrency: 1,
    });
    for (const n of [1, 2, 3, 4, 5]) queue.enqueue({ event: 'message.received', at: Date.now(), data: { n } });
    expect(queue.size).to.equal(3);
    expect(queue.droppedCount).to.equal(2);
    expect(outcomes).to.deep.equal(['dropped', 'dropped']);
    expect(lines.filter((l) => l.includes('queue full'))).to.have.length(2);
    const sent: number[] = [];
    while (sent.length < 3) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      const next = posts.shift();
      if (!next) continue;
      sent.push((JSON.parse(next.body) as { data: { n: number } }).data.n);
      next.done();
    }
    await queue.whenEmpty();
    expect(sent).to.deep.equal([1, 4, 5]);
    queue.stop();
  });

  it('gives up after its tries, counted as failed', async () => {
    const outcomes: DeliveryOutcome[] = [];
    const log = createLogger({ level: 'info', destination: new PassThrough().resume(), pretty: false });
    const queue = new EventWebhooks({
      targets: () => [{ name: 'down', url: 'http://receiver.example/', events: ['message.received'], secret: SECRET }],
      post: () => Promise.reject(new Error('the server answered HTTP 500')),
      log,
      count: (outcome) => outcomes.push(outcome),
      maxAttempts: 3,
      firstRetryMs: 0,
    });
    queue.enqueue({ event: 'message.received', at: Date.now(), data: {} });
    await queue.whenEmpty();
    expect(outcomes).to.deep.equal(['retried', 'retried', 'failed']);
    queue.stop();
  });
});
