import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import OpenAI from 'openai';
import type { BenchGateway } from '../gateway.js';
import { checkDatabaseFile, closeDatabase } from '../../core/services/store/database.js';
import { HistoryStore } from '../../core/services/store/history.js';
import { makeBotDir, settle, startBenchApp, userId } from '../fixture.js';
import { metric, type Check, type ScenarioResult } from '../result.js';
import { abPair, round, rounded, summarize } from '../stats.js';

export interface RoundTripOptions {
  samples: number;
  warmup: number;
  chats: number;
}

/**
 * Runs `samples` A/B pairs: the floor (a direct `openai` SDK call to the fake gateway with the very request body the
 * bot sent, captured at the gateway) and the bot (memory-transport message in → reply sent, through config, pipeline,
 * budgets, history with 50 entries, memory file, provider chain). The order inside a pair alternates so drift and
 * noise hit both sides alike. "Incl. its writes" and the bot's CPU run until the bot has finished the message (its
 * history lines appended); compactions and counter flushes are paid where their threshold or timer falls, as in
 * service (see `settle`). Returns the per-pair overhead (bot − floor) and ratio (bot / floor).
 */
export async function textRoundTrip(gw: BenchGateway, options: RoundTripOptions): Promise<ScenarioResult> {
  const chats = Array.from({ length: options.chats }, (_, i) => userId(i + 1));
  // The sliding window (history.summarize off): every prompt carries the 50 messages, the workload this row has always
  // timed. With summaries (shipped on) the live history swings between 25 and 50 messages and a fold request goes out
  // every ~13 turns; their cost is in the console black box, which runs the shipped config, and in the prefix scenario.
  const dir = await makeBotDir({ access: 'everyone', chats, historyEntries: 50, facts: 5, config: { history: { maxMessages: 50, maxPromptTokens: 6000, summarize: false, summaryMaxTokens: 800 } } });
  const env = { API_KEY: 'bench-key-second', BASE_URL: gw.v1('second'), MODEL: 'bench-model' };
  const bench = await startBenchApp(dir, env);
  const checks: Check[] = [];
  // The floor client is built exactly like the chain's (no SDK retries, the same timeout).
  const client = new OpenAI({ apiKey: 'bench-key-second', baseURL: gw.v1('second'), maxRetries: 0, timeout: bench.app.settings.upstreamTimeoutMs });
  let badReplies = 0;
  let seq = 0;
  const lastText = new Map<string, string>();
  // CPU time (user + system, all threads of this process) per sample: unlike wall time, other processes on a busy
  // machine barely inflate it. The bot's includes the writes of its message (history, memory, usage, budgets).
  const botCpu: number[] = [];
  // Wall time until the message's writes are on disk too (history line, memory, counters flushed).
  const botWithWrites: number[] = [];
  const floorCpu: number[] = [];
  const cpuMs = (since: NodeJS.CpuUsage) => {
    const d = process.cpuUsage(since);
    return (d.user + d.system) / 1000;
  };

  const botOnce = async () => {
    const chat = chats[seq % chats.length];
    const text = `What time does the train leave on Saturday, and from which platform? (${++seq})`;
    lastText.set(chat, text);
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const actions = await bench.transport.push({ chatId: chat, senderId: chat, text });
    const ms = performance.now() - t0;
    if (!actions.some((a) => a.type === 'text' && a.text.startsWith('second: '))) badReplies++;
    await settle(bench);
    botWithWrites.push(performance.now() - t0);
    botCpu.push(cpuMs(c0));
    return ms;
  };

  // Capture the request the bot really sends (system prompt, 50-message history, tools) and replay it as the floor.
  for (let i = 0; i < 5; i++) await botOnce();
  const body = JSON.parse(await gw.lastBody('second')) as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;
  const historyInPrompt = body.messages.length - 1;
  const floorOnce = async () => {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const answer = await client.chat.completions.create(body);
    const ms = performance.now() - t0;
    floorCpu.push(cpuMs(c0));
    if (!answer.choices?.[0]?.message?.content) badReplies++;
    return ms;
  };

  const floor: number[] = [];
  const bot: number[] = [];
  const overhead: number[] = [];
  const ratio: number[] = [];
  for (let i = 0; i < options.warmup + options.samples; i++) {
    const [f, b] = await abPair(i, floorOnce, botOnce);
    if (i < options.warmup) continue;
    floor.push(f);
    bot.push(b);
    overhead.push(b - f);
    ratio.push(b / f);
  }
  await bench.app.bot.idle();
  await bench.app.stop();
  // Only the measured samples' CPU (the last `samples` of each).
  botCpu.splice(0, botCpu.length - options.samples);
  floorCpu.splice(0, floorCpu.length - options.samples);
  botWithWrites.splice(0, botWithWrites.length - options.samples);

  checks.push({ name: 'text: every message got the gateway answer', ok: badReplies === 0, detail: `${badReplies} missing or wrong replies` });
  checks.push({ name: 'text: prompt carried the 50-message history', ok: historyInPrompt >= 50, detail: `${historyInPrompt} messages after the system prompt` });
  // Every data file the run wrote must parse.
  let files = 0;
  const broken: string[] = [];
  for (const sub of ['history', 'memory', '.']) {
    const folder = path.join(dir, 'data', sub);
    // The earlier layout's folders are taken into the store database at the first start (and may be gone).
    for (const name of (await readdir(folder).catch(() => [] as string[])).filter((n) => n.endsWith('.json'))) {
      files++;
      try {
        JSON.parse(await readFile(path.join(folder, name), 'utf8'));
      } catch {
        broken.push(`${sub}/${name}`);
      }
    }
  }
  // And the store database, where history, memory and the counters live, is whole.
  const damage = checkDatabaseFile(path.join(bench.app.settings.dataDir, 'store.db'));
  if (damage) broken.push(`store.db: ${damage}`);
  checks.push({ name: 'text: data files parse after the run', ok: broken.length === 0, detail: broken.length ? `broken: ${broken.join(', ')}` : `${files} files parse, the store database is whole` });
  const dataDir = bench.app.settings.dataDir;
  await bench.app.stop();
  // The writes really happened: each chat's history, read back from the store database by a fresh store after the
  // stop, ends with its last question and the answer to it.
  let historiesBehind = 0;
  const reread = new HistoryStore(dataDir, 50);
  for (const chat of chats) {
    const [question, answer] = (await reread.recent(chat)).slice(-2);
    if (question?.text !== lastText.get(chat) || answer?.role !== 'assistant' || !answer.text.startsWith('second: ')) historiesBehind++;
  }
  closeDatabase(dataDir);
  await rm(bench.dir, { recursive: true, force: true });
  checks.push({ name: 'text: every chat history holds its last question and answer', ok: historiesBehind === 0, detail: `${historiesBehind} of ${chats.length} chats behind` });

  const fs = summarize(floor);
  const bs = summarize(bot);
  const os = summarize(overhead);
  const rs = summarize(ratio);
  const ratioOfMedians = bs.median / fs.median;
  const fc = summarize(floorCpu);
  const bc = summarize(botCpu);
  const bw = summarize(botWithWrites);
  const cpuRatio = bc.median / fc.median;
  // The bot's added time at the tail: p99(bot) − p99(floor). A per-pair difference would mostly measure the machine's
  // noise (a spike in one half of a pair); both distributions see the same noise, so their quantiles compare fairly.
  const tailOverhead = bs.p99 - fs.p99;
  return {
    id: 'textRoundTrip',
    title: '1. text round trip (50-message history, memory file) vs direct SDK call',
    metrics: [
      metric('floor: direct SDK call', 'ms', fs.median, fs.p99, fs.n),
      metric('bot: message in → reply sent', 'ms', bs.median, bs.p99, bs.n),
      metric('ratio bot/floor (per pair)', 'x', rs.median, rs.p99, rs.n, 'median ≤ 1.3', rs.median <= 1.3, `ratio of medians ${round(ratioOfMedians)}`),
      metric('bot incl. its writes on disk', 'ms', bw.median, bw.p99, bw.n, 'median ≤ 1.3× floor', bw.median / fs.median <= 1.3, `ratio of medians ${round(bw.median / fs.median)}`),
      metric('CPU per message: floor', 'ms', fc.median, fc.p99, fc.n),
      metric('CPU per message: bot (incl. its file writes)', 'ms', bc.median, bc.p99, bc.n, 'median ≤ 1.25× floor CPU', cpuRatio <= 1.25, `ratio of medians ${round(cpuRatio)}`),
      metric('overhead: median per pair; p99(bot) − p99(floor)', 'ms', os.median, tailOverhead, os.n, 'p99 < 5 ms', tailOverhead < 5, `per-pair p99 ${round(os.p99)} (machine noise)`),
    ],
    checks,
    data: { floorMs: rounded(fs), botMs: rounded(bs), floorCpuMs: rounded(fc), botCpuMs: rounded(bc), botWithWritesMs: rounded(bw), cpuRatio: round(cpuRatio), overheadMs: rounded(os), ratio: rounded(rs), ratioOfMedians: round(ratioOfMedians), tailOverheadMs: round(tailOverhead), historyMessagesInPrompt: historyInPrompt, requestBodyBytes: JSON.stringify(body).length },
  };
}
