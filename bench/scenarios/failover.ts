import { performance } from 'node:perf_hooks';
import OpenAI from 'openai';
import type { BenchGateway } from '../gateway.js';
import { makeBotDir, settle, sleep, startBenchApp, userId } from '../fixture.js';
import { metric, type Check, type ScenarioResult } from '../result.js';
import { abPair, round, rounded, summarize } from '../stats.js';

export interface FailoverOptions {
  samples: number;
  warmup: number;
  cooldownSamples: number;
}

/**
 * The chain primary → second with the primary answering 429.
 * (a) Failover: the primary says 429 with `retry-after-ms: 1`, so it is out of its cooldown again by the next
 *     message and every bot message really goes primary (429) → second. Floor: a direct SDK call to the second leg
 *     with the same body. Reported: the added time (bot − floor).
 * (b) Cooldown: the primary says 429 with `retry-after: 60`; over the next messages (all within the 60 s) the
 *     primary must receive no request at all, and the reply comes from the second leg.
 */
export async function failover(gw: BenchGateway, options: FailoverOptions): Promise<ScenarioResult> {
  const chats = Array.from({ length: 16 }, (_, i) => userId(i + 1));
  // Summaries off: a fold request would also go primary → second and break the one-request-per-message count.
  const dir = await makeBotDir({ access: 'everyone', chats, historyEntries: 50, facts: 5, config: { history: { maxMessages: 50, maxPromptTokens: 6000, summarize: false, summaryMaxTokens: 800 } } });
  const env = {
    PRIMARY_GATEWAY_API_KEY: 'bench-key-primary',
    PRIMARY_GATEWAY_BASE_URL: gw.v1('primary'),
    PRIMARY_GATEWAY_MODEL: 'bench-model',
    API_KEY: 'bench-key-second',
    BASE_URL: gw.v1('second'),
    MODEL: 'bench-model',
  };
  const bench = await startBenchApp(dir, env);
  const client = new OpenAI({ apiKey: 'bench-key-second', baseURL: gw.v1('second'), maxRetries: 0, timeout: bench.app.settings.upstreamTimeoutMs });
  const checks: Check[] = [];
  let seq = 0;
  let wrongLeg = 0;
  const botOnce = async () => {
    const chat = chats[seq % chats.length];
    const t0 = performance.now();
    const actions = await bench.transport.push({ chatId: chat, senderId: chat, text: `Which platform does the train leave from? (${++seq})` });
    const ms = performance.now() - t0;
    if (!actions.some((a) => a.type === 'text' && a.text.startsWith('second: '))) wrongLeg++;
    await settle(bench);
    return ms;
  };

  await gw.setMode('primary', '429-short');
  for (let i = 0; i < 3; i++) await botOnce();
  const body = JSON.parse(await gw.lastBody('second')) as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;
  const floorOnce = async () => {
    const t0 = performance.now();
    await client.chat.completions.create(body);
    return performance.now() - t0;
  };

  // (a) every bot message fails over; the gateway's counter proves the primary was asked each time.
  const floor: number[] = [];
  const bot: number[] = [];
  const added: number[] = [];
  let notFailedOver = 0;
  for (let i = 0; i < options.warmup + options.samples; i++) {
    await sleep(2); // the primary's 1 ms cooldown is over
    const before = (await gw.counts()).primary;
    const [f, b] = await abPair(i, floorOnce, botOnce);
    if ((await gw.counts()).primary !== before + 1) notFailedOver++;
    if (i < options.warmup) continue;
    floor.push(f);
    bot.push(b);
    added.push(b - f);
  }
  checks.push({ name: 'failover: every measured message went primary (429) → second', ok: notFailedOver === 0 && wrongLeg === 0, detail: `${notFailedOver} messages did not try the primary; ${wrongLeg} replies not from the second leg` });

  // (b) a long cooldown: one 429 with retry-after 60 s, then the primary must be left alone.
  await gw.setMode('primary', '429-long');
  await sleep(5);
  await botOnce();
  const atCooldownStart = (await gw.counts()).primary;
  const startedAt = Date.now();
  const coolFloor: number[] = [];
  const coolBot: number[] = [];
  for (let i = 0; i < options.cooldownSamples; i++) {
    const [f, b] = await abPair(i, floorOnce, botOnce);
    coolFloor.push(f);
    coolBot.push(b);
  }
  const elapsed = Date.now() - startedAt;
  const duringCooldown = (await gw.counts()).primary - atCooldownStart;
  await gw.setMode('primary', 'ok');
  checks.push({
    name: 'failover: primary gets 0 requests during its cooldown',
    ok: duringCooldown === 0 && elapsed < 60_000 && wrongLeg === 0,
    detail: `${duringCooldown} requests to the primary over ${options.cooldownSamples} messages in ${round(elapsed / 1000, 1)} s of its 60 s cooldown`,
  });
  await bench.stop();

  const fs = summarize(floor);
  const bs = summarize(bot);
  const as = summarize(added);
  const cf = summarize(coolFloor);
  const cb = summarize(coolBot);
  return {
    id: 'failover',
    title: '3. failover: primary 429 → second leg',
    metrics: [
      metric('floor: direct SDK call to the second leg', 'ms', fs.median, fs.p99, fs.n),
      metric('bot: message → 429 → second → reply', 'ms', bs.median, bs.p99, bs.n),
      metric('added time over the floor', 'ms', as.median, bs.p99 - fs.p99, as.n, 'median < 10 ms', as.median < 10, `p99 column: p99(bot) − p99(floor); per-pair p99 ${round(as.p99)}`),
      metric('bot while the primary cools down', 'ms', cb.median, cb.p99, cb.n, undefined, undefined, `floor median ${round(cf.median)}, ratio ${round(cb.median / cf.median)}`),
      metric('requests to the primary during cooldown', 'count', duringCooldown, duringCooldown, options.cooldownSamples, '0', duringCooldown === 0),
    ],
    checks,
    data: {
      floorMs: rounded(fs),
      botMs: rounded(bs),
      addedMs: rounded(as),
      cooldown: { floorMs: rounded(cf), botMs: rounded(cb), primaryRequests: duringCooldown, messages: options.cooldownSamples, seconds: round(elapsed / 1000, 1) },
    },
  };
}
