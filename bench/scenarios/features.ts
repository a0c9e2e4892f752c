import { performance } from 'node:perf_hooks';
import type { BenchGateway } from '../gateway.js';
import { toWhatsApp } from '../../core/kernel/chat/whatsapp-format.js';
import { splitMessage } from '../../core/services/sending/split-message.js';
import { makeBotDir, settle, startBenchApp, userId, type BenchApp } from '../fixture.js';
import { metric, type Check, type Metric, type ScenarioResult } from '../result.js';
import { abPair, round, summarize } from '../stats.js';

export interface FeaturesOptions {
  /** Measured blocks per side of each feature's A/B, after `warmup` blocks; each block is `blockSize` messages. */
  samples: number;
  warmup: number;
  blockSize: number;
}

/** History settings spelled out (config.example.json's), with chat summaries on or off. */
const history = (summarize: boolean) => ({ maxMessages: 50, maxPromptTokens: 6000, summarize, summaryMaxTokens: 800 });
const OWNER = '4917000099999';
/** config.json's `money` with prices for the bench's model and monthly caps (on), or as shipped: no prices, no caps. */
const money = (capped: boolean) => ({
  currency: 'USD',
  prices: capped ? { 'bench-model': { input: 0.15, output: 0.6 } } : {},
  caps: capped ? { personMonthly: 1000, chatMonthly: 1000, overallMonthly: 1000 } : { personMonthly: 0, chatMonthly: 0, overallMonthly: 0 },
  noticePercent: 80,
});
/** The shipped `plugins` (ping for everyone) with the recall plugin on or off. */
const plugins = (recall: boolean) => ({ ping: { enabled: true, access: 'everyone' }, recall: { enabled: recall } });

/**
 * A feature the config can turn off, measured as the difference of two bots in one process: one as shipped (opened to
 * the bench's sender), one with only that feature off. Blocks of messages alternate between them (A/B, the order
 * flipped every pair); a block's CPU time (user + system of this process) runs until the bot has finished with its
 * last message, the writes and folds it started included (`settle`), and is divided by the block's messages. (Per
 * message, the wait for the JSON writes gathered after each message would make the run long for nothing.)
 */
interface Feature {
  name: string;
  on: Record<string, unknown>;
  off: Record<string, unknown>;
  /** The sender (default a made-up stranger let in by `access.mode: "everyone"`). */
  sender?: string;
}

const FEATURES: Feature[] = [
  // The fold requests (a model call every ~16 turns) and the per-message check whether one is due.
  { name: 'chat summaries (history.summarize; folds and their checks)', on: { history: history(true) }, off: { history: history(false) } },
  // The owner passes the shipped pairing gate (`access.mode: "pairing"`) against the same owner under "everyone".
  {
    name: 'access gate, pairing as shipped (an owner let through)',
    on: { owners: [OWNER], access: { mode: 'pairing', allow: [], block: [] } },
    off: { owners: [OWNER], access: { mode: 'everyone', allow: [], block: [] } },
    sender: `${OWNER}@s.whatsapp.net`,
  },
  // A turn's status timer (armed per turn, cleared at its end) and the 👀/✅ reactions, against neither.
  { name: 'status of a long turn (a timer per turn)', on: { conversation: { progressAfterSeconds: 8 } }, off: { conversation: { progressAfterSeconds: 0 } } },
  { name: 'acknowledging reactions (conversation.ackReactions, off as shipped)', on: { conversation: { ackReactions: true } }, off: { conversation: { ackReactions: false } } },
  // Every message noted in the recall log (its search-log rows and index) against no recall plugin.
  { name: 'recall log (plugins.recall, on as shipped: each message noted for .recall)', on: { plugins: plugins(true) }, off: { plugins: plugins(false) } },
  // The money of each turn priced and checked against three monthly caps (the profiles plugin, always on, counts the
  // tokens either way).
  { name: 'money: the model priced and monthly caps checked (money.prices, money.caps)', on: { money: money(true) }, off: { money: money(false) } },
];

async function featureCost(gw: BenchGateway, feature: Feature, options: FeaturesOptions): Promise<{ on: number[]; off: number[]; bad: number }> {
  const sender = feature.sender ?? userId(60_001);
  const env = { API_KEY: 'bench-key-second', BASE_URL: gw.v1('second'), MODEL: 'bench-model' };
  const start = async (config: Record<string, unknown>) => startBenchApp(await makeBotDir({ access: 'everyone', config: { history: history(true), ...config } }), env);
  const on = await start(feature.on);
  const off = await start(feature.off);
  const result = { on: [] as number[], off: [] as number[], bad: 0 };
  let seq = 0;
  const once = (bench: BenchApp) => async () => {
    const c0 = process.cpuUsage();
    for (let m = 0; m < options.blockSize; m++) {
      const actions = await bench.transport.push({ chatId: sender, senderId: sender, text: `What time does the train leave on Saturday? (${++seq})` });
      if (!actions.some((a) => a.type === 'text' && a.text.startsWith('second: '))) result.bad++;
      bench.transport.actions.length = 0;
    }
    await settle(bench);
    const d = process.cpuUsage(c0);
    return (d.user + d.system) / 1000 / options.blockSize;
  };
  try {
    for (let i = 0; i < options.warmup + options.samples; i++) {
      const [a, b] = await abPair(i, once(off), once(on));
      if (i < options.warmup) continue;
      result.off.push(a);
      result.on.push(b);
    }
  } finally {
    await on.stop();
    await off.stop();
  }
  return result;
}

/** µs per call of `fn`, the median of a few timed batches after a warm-up. */
function perCallMicros(fn: () => unknown, calls: number): number {
  for (let i = 0; i < calls; i++) fn();
  const batches: number[] = [];
  for (let b = 0; b < 5; b++) {
    const t0 = performance.now();
    for (let i = 0; i < calls; i++) fn();
    batches.push(((performance.now() - t0) * 1000) / calls);
  }
  return summarize(batches).median;
}

/**
 * What each conversation feature costs per message: the bot's CPU per answered message with the feature on against
 * the same bot with only it off (features the config can turn off), and the always-on steps of an answer timed on
 * their own (the model's Markdown to WhatsApp, splitting). Read receipts are WhatsApp's alone (the memory and console
 * transports have none): one call to the socket, not waited for. Bursts cost the piped console and the memory
 * transport one window check (their window is 0); on WhatsApp a burst waits its window by design.
 */
export async function featureCosts(gw: BenchGateway, options: FeaturesOptions): Promise<ScenarioResult> {
  const metrics: Metric[] = [];
  const checks: Check[] = [];
  const data: Record<string, unknown> = {};
  let bad = 0;
  for (const feature of FEATURES) {
    const r = await featureCost(gw, feature, options);
    bad += r.bad;
    const on = summarize(r.on);
    const off = summarize(r.off);
    metrics.push(metric(feature.name, 'µs', (on.median - off.median) * 1000, (on.p99 - off.p99) * 1000, on.n, undefined, undefined, `CPU per message on ${round(on.median * 1000, 0)} µs, off ${round(off.median * 1000, 0)} µs, ${round(((on.median - off.median) / off.median) * 100, 1)} % (median column: the difference of the blocks' medians; p99 column: of their p99s; n: blocks of ${options.blockSize})`));
    data[feature.name] = { onCpuMs: round(on.median, 4), offCpuMs: round(off.median, 4), onP99: round(on.p99, 4), offP99: round(off.p99, 4) };
  }
  checks.push({ name: 'features: every message got the gateway answer, with each feature on and off', ok: bad === 0, detail: `${bad} missing or wrong replies` });
  const plain = 'second: here is a short answer for you.';
  const markdown = '## Your train\n\n**Saturday**: the train leaves at *8:15* from platform 3.\n\n- window seat\n- back by Sunday evening\n\nSee [the timetable](https://example.com/t).';
  const long = `${'The train leaves at 8:15 from platform 3, and you wanted a window seat. '.repeat(30)}\n\n`.repeat(3);
  const formatPlain = perCallMicros(() => toWhatsApp(plain), 20_000);
  const formatMarkdown = perCallMicros(() => toWhatsApp(markdown), 5000);
  const split = perCallMicros(() => splitMessage(long), 5000);
  metrics.push(metric("formatting: the model's Markdown → WhatsApp, a one-line answer", 'µs', formatPlain, formatPlain, 5, undefined, undefined, 'per answer'));
  metrics.push(metric('formatting: a short Markdown answer (heading, bold, list, link)', 'µs', formatMarkdown, formatMarkdown, 5, undefined, undefined, 'per answer'));
  metrics.push(metric(`splitting a ${long.length.toLocaleString('en-US')}-character answer at paragraphs`, 'µs', split, split, 5, undefined, undefined, `${splitMessage(long).length} messages`));
  data.formattingMicros = { plain: round(formatPlain), markdown: round(formatMarkdown), split: round(split) };
  return { id: 'features', title: 'What each conversation feature costs per answered message (CPU, feature on − off)', metrics, checks, data };
}
