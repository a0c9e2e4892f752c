import { performance } from 'node:perf_hooks';
import { definePlugin } from '../../core/index.js';
import pingPlugin from '../../plugins/ping/index.js';
import { MemoryTransport } from '../../core/adapters/memory/memory-transport.js';
import { MAX_PENDING_REQUESTS } from '../../core/kernel/access/access-control.js';
import type { SentMessage } from '../../core/kernel/port/message.js';
import { makeBotDir, startBenchApp, userId } from '../fixture.js';
import { metric, type Check, type ScenarioResult } from '../result.js';
import { abPair, round, rounded, summarize } from '../stats.js';

export interface PingOptions {
  /** Sequential .ping latency samples (A/B with the transport-only floor). */
  latencySamples: number;
  /** Throughput batches and their size. */
  batches: number;
  batchSize: number;
  /** Chats sending at once, and messages per chat, for the order check. */
  orderChats: number;
  orderMessagesPerChat: number;
  /** Strangers writing to a bot with the shipped closed access (pairing), for the rows of what the door costs. */
  strangers: number;
}

interface ClosedDoor {
  /** A stranger's first message: held, answered with a pairing code. */
  pairingMs: number[];
  /** The same stranger writing again while the code waits: held quietly. */
  heldMs: number[];
  /** Replies that were not what pairing promises (a code to the first message, nothing to the next). */
  wrong: number;
}

/**
 * The shipped closed defaults (config.example.json, `access.mode: "pairing"`) against strangers: each one's first
 * message (held, a pairing code sent back, the owners told) and a second one (held without a reply). Strangers come
 * in rounds of MAX_PENDING_REQUESTS, each round on a freshly started bot: past that many waiting codes the bot stops
 * giving out new ones, which is not the path a stranger usually takes.
 */
async function closedDoor(env: Record<string, string>, strangers: number): Promise<ClosedDoor> {
  const result: ClosedDoor = { pairingMs: [], heldMs: [], wrong: 0 };
  let next = 0;
  while (next < strangers) {
    const bench = await startBenchApp(await makeBotDir({ access: 'as shipped' }), env);
    try {
      const round: string[] = [];
      for (let i = 0; i < MAX_PENDING_REQUESTS && next < strangers; i++) round.push(userId(50_000 + next++));
      for (const who of round) {
        const t0 = performance.now();
        const actions = await bench.transport.push({ chatId: who, senderId: who, text: 'Hello, are you the assistant? What time does the train leave?' });
        result.pairingMs.push(performance.now() - t0);
        if (!(actions.length === 1 && actions[0].type === 'text' && actions[0].text.includes('pairing code'))) result.wrong++;
      }
      for (const who of round) {
        const t0 = performance.now();
        const actions = await bench.transport.push({ chatId: who, senderId: who, text: 'Hello? Anyone there?' });
        result.heldMs.push(performance.now() - t0);
        if (actions.length !== 0) result.wrong++;
      }
    } finally {
      await bench.stop();
    }
  }
  return result;
}

/** A memory transport that logs every reply, so the order check can see what was sent between two messages. */
class RecordingTransport extends MemoryTransport {
  readonly events = new Map<string, string[]>();
  override async sendText(chatId: string, text: string, options?: { quotedId?: string }): Promise<SentMessage> {
    this.log(chatId, 'reply');
    return super.sendText(chatId, text, options);
  }
  log(chatId: string, event: string): void {
    let list = this.events.get(chatId);
    if (!list) this.events.set(chatId, (list = []));
    list.push(event);
  }
}

/**
 * `.ping` through the full pipeline (config, every discovered plugin's triggers and observers, access, routing):
 * sequential latency against a transport-only floor (a handler that replies "pong" and nothing else), batch
 * throughput with CPU time, and 1,000 chats sending at once with per-chat order checked.
 */
export async function pingThroughput(options: PingOptions): Promise<ScenarioResult> {
  const env = { API_KEY: 'bench-key-second', BASE_URL: 'http://127.0.0.1:9/v1', MODEL: 'bench-model' };
  // Every sender is answered: this measures the pipeline answering; the door's own cost has its rows (closedDoor).
  const bench = await startBenchApp(await makeBotDir({ access: 'everyone' }), env);
  const checks: Check[] = [];

  // Floor: the same memory transport with a handler that does nothing but reply.
  const bare = new MemoryTransport();
  await bare.start(async (m) => {
    await bare.sendText(m.chatId, 'pong (0 ms)');
  });
  const floorLat: number[] = [];
  const botLat: number[] = [];
  let wrong = 0;
  for (let i = 0; i < options.latencySamples + 500; i++) {
    const chat = userId(1 + (i % 50));
    const measure = async (t: MemoryTransport) => {
      const t0 = performance.now();
      const actions = await t.push({ chatId: chat, senderId: chat, text: '.ping' });
      const ms = performance.now() - t0;
      if (!(actions.length === 1 && actions[0].type === 'text' && actions[0].text.startsWith('pong'))) wrong++;
      return ms;
    };
    const [floor, b] = await abPair(i, () => measure(bare), () => measure(bench.transport));
    if (i < 500) continue;
    floorLat.push(floor);
    botLat.push(b);
    // Memory transports keep every action; drop them so the run does not measure a growing array.
    bare.actions.length = 0;
    bench.transport.actions.length = 0;
  }

  // Throughput: a batch of .ping spread over 100 chats, all delivered at once.
  const rates: number[] = [];
  const cpuRates: number[] = [];
  for (let b = 0; b < options.batches + 1; b++) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const pending: Promise<unknown>[] = [];
    for (let i = 0; i < options.batchSize; i++) {
      const chat = userId(1 + (i % 100));
      // deliver, not push: push copies every action taken while each message was handled (N² for N at once).
      pending.push(bench.transport.deliver({ chatId: chat, senderId: chat, text: '.ping' }));
    }
    await Promise.all(pending);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const replies = bench.transport.actions.length;
    bench.transport.actions.length = 0;
    if (replies !== options.batchSize) wrong += Math.abs(options.batchSize - replies);
    if (b === 0) continue; // warm-up batch
    rates.push(options.batchSize / seconds);
    cpuRates.push(options.batchSize / ((cpu.user + cpu.system) / 1e6));
  }
  await bench.stop();
  checks.push({ name: 'ping: every .ping got exactly one pong', ok: wrong === 0, detail: `${wrong} wrong or missing replies` });

  // Order: N chats × M messages, delivered interleaved all at once. Per chat the log must read
  // enter m0, reply, enter m1, reply, ...: in order, and each message finished before the next one started.
  const transport = new RecordingTransport();
  // An observer sees each message in the chat's queue before routing: where the message's handling starts.
  const entered = definePlugin({ name: 'order-probe', description: 'logs where each message starts', setup: () => ({ observers: [(ctx) => transport.log(ctx.chatId, `enter ${ctx.message.id}`)] }) });
  const orderApp = await startBenchApp(await makeBotDir({ access: 'everyone' }), env, transport, [entered, pingPlugin]);
  const sent = new Map<string, string[]>();
  const pending: Promise<unknown>[] = [];
  const t0 = performance.now();
  for (let m = 0; m < options.orderMessagesPerChat; m++) {
    for (let c = 0; c < options.orderChats; c++) {
      const chat = userId(10_000 + c);
      const id = `order-${c}-${m}`;
      (sent.get(chat) ?? sent.set(chat, []).get(chat)!).push(id);
      pending.push(transport.deliver({ id, chatId: chat, senderId: chat, text: '.ping' }));
    }
  }
  await Promise.all(pending);
  const orderSeconds = (performance.now() - t0) / 1000;
  await orderApp.stop();
  let violations = 0;
  let firstViolation = '';
  for (const [chat, ids] of sent) {
    const expected = ids.flatMap((id) => [`enter ${id}`, 'reply']);
    const got = transport.events.get(chat) ?? [];
    if (got.join('|') !== expected.join('|')) {
      violations++;
      firstViolation ||= `${chat}: expected ${expected.slice(0, 4).join(', ')}…, got ${got.slice(0, 4).join(', ')}…`;
    }
  }
  const total = options.orderChats * options.orderMessagesPerChat;
  checks.push({
    name: `ping: per-chat order kept (${options.orderChats} chats at once)`,
    ok: violations === 0 && sent.size === options.orderChats,
    detail: violations ? `${violations} chats out of order; first: ${firstViolation}` : `${options.orderChats} chats × ${options.orderMessagesPerChat} messages in order`,
  });

  const door = await closedDoor(env, options.strangers);
  checks.push({
    name: 'ping: the shipped closed access holds strangers (a pairing code to the first message, no reply to the next)',
    ok: door.wrong === 0 && door.pairingMs.length === options.strangers,
    detail: `${door.wrong} wrong replies to ${options.strangers} strangers × 2 messages`,
  });

  const fl = summarize(floorLat);
  const pairing = summarize(door.pairingMs);
  const held = summarize(door.heldMs);
  const bl = summarize(botLat);
  const rs = summarize(rates);
  const cs = summarize(cpuRates);
  // For a rate the slow end matters: "p99" of a rate is the 1st percentile (99% of batches were faster).
  const slowRate = (s: number[]) => [...s].sort((a, b) => a - b)[Math.max(0, Math.ceil(0.01 * s.length) - 1)];
  return {
    id: 'ping',
    title: '2. .ping through the full pipeline',
    metrics: [
      metric('floor: transport-only reply', 'µs', fl.median * 1000, fl.p99 * 1000, fl.n),
      metric('bot: .ping in → pong sent', 'µs', bl.median * 1000, bl.p99 * 1000, bl.n, undefined, undefined, `ratio of medians ${round(bl.median / fl.median, 1)}`),
      metric(`throughput, batches of ${options.batchSize} (p99 = slowest 1%)`, 'msg/s', rs.median, slowRate(rates), rs.n, 'median ≥ 20,000 msg/s', rs.median >= 20_000),
      metric('throughput per CPU-second (one core)', 'msg/s', cs.median, slowRate(cpuRates), cs.n, undefined, undefined, 'user+system CPU of this process'),
      metric(`${options.orderChats} chats × ${options.orderMessagesPerChat} at once`, 'msg/s', total / orderSeconds, total / orderSeconds, 1, undefined, undefined, violations ? 'ORDER BROKEN' : 'order kept'),
      metric("closed as shipped: a stranger's first message → pairing code", 'µs', pairing.median * 1000, pairing.p99 * 1000, pairing.n, undefined, undefined, `held, code sent, owners told; ratio to .ping ${round(pairing.median / bl.median, 1)}`),
      metric('closed as shipped: the stranger writes again → held, no reply', 'µs', held.median * 1000, held.p99 * 1000, held.n, undefined, undefined, `the access gate for a stranger; ratio to .ping ${round(held.median / bl.median, 1)}`),
    ],
    checks,
    data: {
      floorLatencyMs: rounded(fl, 4),
      botLatencyMs: rounded(bl, 4),
      throughputPerSecond: rounded(rs, 0),
      throughputPerCpuSecond: rounded(cs, 0),
      closedAsShipped: { strangers: options.strangers, pairingReplyMs: rounded(pairing, 4), heldMs: rounded(held, 4) },
      concurrentChats: { chats: options.orderChats, messagesPerChat: options.orderMessagesPerChat, seconds: round(orderSeconds), messagesPerSecond: round(total / orderSeconds, 0), chatsOutOfOrder: violations },
    },
  };
}
