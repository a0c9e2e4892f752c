import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { BenchGateway } from '../gateway.js';
import { makeBotDir, ROOT } from '../fixture.js';
import { metric, type Check, type ScenarioResult } from '../result.js';
import { abPair, round, rounded, slope, summarize } from '../stats.js';

export interface StartupOptions {
  samples: number;
  messages: number;
  interval: number;
}

/** Spawns a process and resolves with the ms from spawn until a stderr line contains `marker`; then ends it. */
function timeUntil(args: string[], marker: string, cwd: string, env: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { cwd, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    let readyAt: number | undefined;
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      if (readyAt === undefined && err.includes(marker)) readyAt = performance.now() - t0;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (readyAt !== undefined) resolve(readyAt);
      else reject(new Error(`${args.join(' ')} exited (${code}) without "${marker}":\n${err.slice(-2000)}`));
    });
    // Empty stdin: the console chat reaches "ready", finds the end of input and exits on its own.
    child.stdin.end();
  });
}

/**
 * The V8 flags `npm start` and `npm run chat` run the bot with (package.json): a 4 MB young generation keeps bursts
 * from leaving ~24 MB of semi-space the GC never hands back. Memory is measured under the same flags.
 */
const PRODUCT_NODE_FLAGS = ['--max-semi-space-size=4'];

/** Runs rss-child.js with --expose-gc (and the product's flags) and returns its samples. */
function rssRun(gw: BenchGateway, options: StartupOptions): Promise<{ samples: Array<{ messages: number; rssMB: number; heapUsedMB: number; externalMB: number }>; replies: number; sent: number }> {
  const child = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'rss-child.js');
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--expose-gc', ...PRODUCT_NODE_FLAGS, child], {
      env: { PATH: process.env.PATH ?? '', BENCH_SECOND_URL: gw.v1('second'), BENCH_MESSAGES: String(options.messages), BENCH_INTERVAL: String(options.interval) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => p.kill('SIGKILL'), 300_000);
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('close', (code) => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(out.trim().split('\n').pop() ?? ''));
      } catch {
        reject(new Error(`rss child failed (${code}):\n${err.slice(-2000)}`));
      }
    });
  });
}

/**
 * Start-up: the real console chat (`node dist/cli/chat.js`, all plugins, health probe against the fake gateway,
 * capability probes, web server on port 0) from spawn to its "console chat ready" log line, A/B against a bare
 * `node -e` that prints "ready". Then RSS and heap after start and after every interval of messages, after GC.
 */
export async function startup(gw: BenchGateway, options: StartupOptions): Promise<ScenarioResult> {
  // The console's sender at the terminal counts as an owner: the shipped closed access lets it in.
  const dir = await makeBotDir({ access: 'as shipped' });
  const env = { API_KEY: 'bench-key-second', BASE_URL: gw.v1('second'), MODEL: 'bench-model', LOG_LEVEL: 'info' };
  const chatJs = path.join(ROOT, 'dist', 'cli', 'chat.js');
  const floor: number[] = [];
  const bot: number[] = [];
  // One untimed start of each first: the OS file cache, not the bot, decides the very first start.
  await timeUntil(['-e', "process.stderr.write('ready\\n')"], 'ready', dir, env);
  await timeUntil([chatJs], 'console chat ready', dir, env);
  for (let i = 0; i < options.samples; i++) {
    const f = () => timeUntil(['-e', "process.stderr.write('ready\\n')"], 'ready', dir, env);
    const b = () => timeUntil([chatJs], 'console chat ready', dir, env);
    const [floorMs, botMs] = await abPair(i, f, b);
    floor.push(floorMs);
    bot.push(botMs);
  }
  await rm(dir, { recursive: true, force: true });

  const rss = await rssRun(gw, options);
  const checks: Check[] = [{ name: 'start-up: every message in the memory run was answered', ok: rss.replies === rss.sent, detail: `${rss.replies} replies to ${rss.sent} messages` }];
  const first = rss.samples[0];
  const last = rss.samples[rss.samples.length - 1];
  // Trend over the second half (caches such as the 50-message histories fill up in the first half).
  const half = rss.samples.slice(Math.floor(rss.samples.length / 2));
  const perK = (key: 'rssMB' | 'heapUsedMB') => slope(half.map((s) => s.messages / 1000), half.map((s) => s[key]));
  const rssSlope = perK('rssMB');
  const heapSlope = perK('heapUsedMB');
  const maxRss = Math.max(...rss.samples.map((s) => s.rssMB));
  const noGrowth = heapSlope < 0.25 && rssSlope < 0.5;

  const fs = summarize(floor);
  const bs = summarize(bot);
  return {
    id: 'startup',
    title: '4. start-up and memory',
    metrics: [
      metric('floor: bare node process start', 'ms', fs.median, fs.p99, fs.n),
      metric('bot: spawn → "console chat ready"', 'ms', bs.median, bs.p99, bs.n, 'median < 700 ms', bs.median < 700, `ratio of medians ${round(bs.median / fs.median, 1)}; added ${round(bs.median - fs.median, 0)} ms`),
      metric('RSS after start (after GC)', 'MB', first.rssMB, first.rssMB, 1, '< 120 MB', first.rssMB < 120),
      metric(`RSS after ${rss.sent} messages (after GC)`, 'MB', last.rssMB, maxRss, rss.samples.length, '< 120 MB', maxRss < 120, 'p99 column: the highest interval'),
      metric('growth, 2nd half (heap | RSS)', 'MB/1k msg', heapSlope, rssSlope, half.length, 'no growth trend', noGrowth, 'median column: heap slope; p99 column: RSS slope'),
    ],
    checks,
    data: { floorMs: rounded(fs, 1), botMs: rounded(bs, 1), memory: rss.samples.map((s) => ({ messages: s.messages, rssMB: round(s.rssMB, 1), heapUsedMB: round(s.heapUsedMB, 1), externalMB: round(s.externalMB, 1) })), heapSlopeMBPer1k: round(heapSlope), rssSlopeMBPer1k: round(rssSlope) },
  };
}
