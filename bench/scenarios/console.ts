import { spawn } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import OpenAI from 'openai';
import type { BenchGateway } from '../gateway.js';
import { makeBotDir, ROOT } from '../fixture.js';
import { metric, type Check, type ScenarioResult } from '../result.js';
import { round, summarize } from '../stats.js';

export interface ConsoleOptions {
  /** N: each sample runs the console with N and with 2N messages. */
  messages: number;
  samples: number;
}

/** The node flags `npm run chat` runs with (package.json); the floor's process gets the same. */
const NODE_FLAGS = ['--max-semi-space-size=4'];

interface TimedRun {
  /** Spawn to exit. */
  ms: number;
  /** From the first reply line to the last, read on the process's stdout. */
  repliesMs: number;
  replies: number;
}

/**
 * Runs `node <NODE_FLAGS> <script>` from spawn to exit with `input` piped in, and returns the wall time, the time from
 * its first line starting with `marker` to its last (seen on its stdout: start-up, whose length varies by tenths of a
 * second from run to run, is outside it) and how many such lines came out.
 */
function timedRun(script: string, cwd: string, env: Record<string, string>, input: string, marker: string): Promise<TimedRun> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [...NODE_FLAGS, script], { cwd, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let firstReply = 0;
    let lastReply = 0;
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
    child.stdout.on('data', (d: Buffer) => {
      const text = d.toString();
      out += text;
      if (text.includes(marker)) {
        lastReply = performance.now();
        firstReply ||= lastReply;
      }
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const ms = performance.now() - t0;
      if (code !== 0) return reject(new Error(`${path.basename(script)} exited ${code}:\n${err.slice(-2000)}`));
      resolve({ ms, repliesMs: lastReply - firstReply, replies: out.split('\n').filter((l) => l.startsWith(marker)).length });
    });
    child.stdin.end(input);
  });
}

const CONSOLE = path.join(ROOT, 'dist', 'cli', 'chat.js');
const REPLAY = path.join(ROOT, 'dist', 'bench', 'sdk-replay-child.js');
const lines = (count: number) => Array.from({ length: count }, (_, i) => `What time does the train leave on Saturday, and from which platform? (${i})\n`).join('');

/**
 * Black-box: the console chat, a real process, fed N and then 2N messages; (T(2N) − T(N)) / N is what one more
 * message costs with everything in it: pipeline, prompt, provider chain, history log, stores. T is read on the
 * process's stdout, from its first reply to its last, so start-up and stop (whose length varies by tenths of a second,
 * as much as hundreds of messages) stay out; spawn to exit is reported beside it.
 * Floor, measured the same way: a process started with the same node flags (`sdk-replay-child.ts`) in which the
 * `openai` SDK replays the bot's own last answer request N and then 2N times, printing a line per answer, and between
 * them as many of the bot's own chat-summary fold requests as the console's N and 2N runs sent (the upstream work the
 * bot asked for: a fold is a model call like an answer); (T(2N) − T(N)) / N from its first answer to its last. The floor's runs and the console's alternate in each sample, so a busy moment of
 * the machine hits both. The same replay inside the bench's own long-running process is shown beside it.
 */
export async function consoleChat(gw: BenchGateway, options: ConsoleOptions): Promise<ScenarioResult> {
  const env = { API_KEY: 'bench-key-second', BASE_URL: gw.v1('second'), MODEL: 'bench-model', LOG_LEVEL: 'warn' };
  const n = options.messages;
  const perMessage: number[] = [];
  const spawnToExitPerMessage: number[] = [];
  const floorPerMessage: number[] = [];
  const inProcessPerMessage: number[] = [];
  let badReplies = 0;
  const client = new OpenAI({ apiKey: 'bench-key-second', baseURL: gw.v1('second'), maxRetries: 0 });
  // The shipped closed access: the sender at the terminal counts as an owner, as for anyone running `npm run chat`.
  const bodyDir = await makeBotDir({ access: 'as shipped' });
  const bodyFile = path.join(bodyDir, 'body.json');
  const foldFile = path.join(bodyDir, 'fold.json');
  // Chat-summary folds (history.summarize, shipped on) the console's N and 2N runs asked of the upstream: the floor
  // sends as many of the bot's own fold requests, so it does the upstream work the bot asked for, request for request.
  const folds = { n: 0, twoN: 0 };
  const foldsPerMessage: number[] = [];
  const foldsSince = async (before: number) => (await gw.folds()).second - before;
  try {
    // The bot's own last request, before the first sample's floor runs.
    const before = (await gw.folds()).second;
    await timedRun(CONSOLE, bodyDir, env, lines(60), 'bot> ');
    await writeFile(bodyFile, await gw.lastBody('second'));
    await writeFile(foldFile, await gw.lastFoldBody('second'));
    // Until the first sample's bot runs have counted theirs: the 60 lines' folds, scaled.
    folds.n = Math.round(((await foldsSince(before)) * n) / 60);
    folds.twoN = 2 * folds.n;
    for (let i = 0; i < options.samples; i++) {
      // A fresh data folder for each run: both runs start from the same empty history.
      const one = await makeBotDir({ access: 'as shipped' });
      const two = await makeBotDir({ access: 'as shipped' });
      try {
        const botRuns = async () => {
          const before = (await gw.folds()).second;
          const a = await timedRun(CONSOLE, one, env, lines(n), 'bot> second: ');
          folds.n = await foldsSince(before);
          const b = await timedRun(CONSOLE, two, env, lines(2 * n), 'bot> second: ');
          folds.twoN = await foldsSince(before) - folds.n;
          foldsPerMessage.push((folds.twoN - folds.n) / n);
          badReplies += n - a.replies + (2 * n - b.replies);
          perMessage.push((b.repliesMs - a.repliesMs) / n);
          spawnToExitPerMessage.push((b.ms - a.ms) / n);
          await writeFile(bodyFile, await gw.lastBody('second'));
          await writeFile(foldFile, await gw.lastFoldBody('second'));
        };
        const floorRuns = async () => {
          const replay = (count: number, foldCount: number) => ({ ...env, BENCH_BODY_FILE: bodyFile, BENCH_COUNT: String(count), BENCH_FOLD_FILE: foldFile, BENCH_FOLDS: String(foldCount) });
          const a = await timedRun(REPLAY, bodyDir, replay(n, folds.n), '', 'answer> ');
          const b = await timedRun(REPLAY, bodyDir, replay(2 * n, folds.twoN), '', 'answer> ');
          badReplies += n - a.replies + (2 * n - b.replies);
          floorPerMessage.push((b.repliesMs - a.repliesMs) / n);
        };
        if (i % 2 === 0) {
          await botRuns();
          await floorRuns();
        } else {
          await floorRuns();
          await botRuns();
        }
        const body = JSON.parse(await readFile(bodyFile, 'utf8')) as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;
        const t0 = performance.now();
        for (let k = 0; k < n; k++) await client.chat.completions.create(body);
        inProcessPerMessage.push((performance.now() - t0) / n);
      } finally {
        await rm(one, { recursive: true, force: true });
        await rm(two, { recursive: true, force: true });
      }
    }
  } finally {
    await rm(bodyDir, { recursive: true, force: true });
  }
  const checks: Check[] = [{ name: 'console: every piped line got the gateway answer (and every replayed request)', ok: badReplies === 0, detail: `${badReplies} missing replies` }];
  const bs = summarize(perMessage);
  const spawned = summarize(spawnToExitPerMessage);
  const fs = summarize(floorPerMessage);
  const inProcess = summarize(inProcessPerMessage);
  const foldRate = summarize(foldsPerMessage);
  return {
    id: 'console',
    title: `8. console chat, black box: (T(${2 * n}) − T(${n})) / ${n} vs the SDK replaying the bot's last request, timed the same way`,
    metrics: [
      metric('floor: SDK replay process, one more request', 'ms', fs.median, fs.p99, fs.n),
      metric('console: one more message, wall (first to last reply)', 'ms', bs.median, bs.p99, bs.n, 'median ≤ 1.25× floor', bs.median / fs.median <= 1.25, `ratio of medians ${round(bs.median / fs.median)}`),
      metric('console: one more message, spawn to exit', 'ms', spawned.median, spawned.p99, spawned.n, undefined, undefined, `ratio of medians ${round(spawned.median / fs.median)}`),
      metric('chat-summary folds per message (the floor sends as many)', 'count', foldRate.median, foldRate.max, foldRate.n, undefined, undefined, foldRate.median > 0 ? `one fold every ${round(1 / foldRate.median, 1)} messages` : 'none'),
      metric('same replay inside the bench process', 'ms', inProcess.median, inProcess.p99, inProcess.n, undefined, undefined, `console / this ${round(bs.median / inProcess.median)}`),
    ],
    checks,
    data: { messages: n, foldsPerMessage: foldsPerMessage.map((v) => round(v, 4)), perMessageMs: perMessage.map((v) => round(v)), spawnToExitPerMessageMs: spawnToExitPerMessage.map((v) => round(v)), floorPerMessageMs: floorPerMessage.map((v) => round(v)), inProcessReplayPerMessageMs: inProcessPerMessage.map((v) => round(v)) },
  };
}
