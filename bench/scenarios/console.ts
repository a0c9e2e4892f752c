import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
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

/**
 * Runs `npm run chat`'s process (`node --max-semi-space-size=4 dist/app/chat.js`) from spawn to exit with `count`
 * lines piped in, and returns the wall time, the time from its first reply to its last (seen on its stdout: start-up,
 * whose length varies by tenths of a second from run to run, is outside it) and how many `bot> second:` replies came out.
 */
function consoleRun(dir: string, env: Record<string, string>, count: number): Promise<{ ms: number; repliesMs: number; replies: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, ['--max-semi-space-size=4', path.join(ROOT, 'dist', 'app', 'chat.js')], { cwd: dir, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let firstReply = 0;
    let lastReply = 0;
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
    child.stdout.on('data', (d: Buffer) => {
      const text = d.toString();
      out += text;
      if (text.includes('bot> second: ')) {
        lastReply = performance.now();
        firstReply ||= lastReply;
      }
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const ms = performance.now() - t0;
      if (code !== 0) return reject(new Error(`console exited ${code}:\n${err.slice(-2000)}`));
      resolve({ ms, repliesMs: lastReply - firstReply, replies: out.split('\n').filter((l) => l.startsWith('bot> second: ')).length });
    });
    child.stdin.end(Array.from({ length: count }, (_, i) => `What time does the train leave on Saturday, and from which platform? (${i})\n`).join(''));
  });
}

/**
 * Black-box: the console chat, a real process, fed N and then 2N messages; (T(2N) − T(N)) / N is what one more
 * message costs with everything in it: pipeline, prompt, provider chain, history log, stores. T is read on the
 * process's stdout, from its first reply to its last, so start-up and stop (whose length varies by tenths of a second,
 * as much as hundreds of messages) stay out; spawn to exit is reported beside it. Floor: the `openai` SDK replaying
 * the bot's own last request N times, one after the other.
 */
export async function consoleChat(gw: BenchGateway, options: ConsoleOptions): Promise<ScenarioResult> {
  const env = { API_KEY: 'bench-key-second', BASE_URL: gw.v1('second'), MODEL: 'bench-model', LOG_LEVEL: 'warn' };
  const n = options.messages;
  const perMessage: number[] = [];
  const spawnToExitPerMessage: number[] = [];
  const floorPerMessage: number[] = [];
  let badReplies = 0;
  const client = new OpenAI({ apiKey: 'bench-key-second', baseURL: gw.v1('second'), maxRetries: 0 });
  for (let i = 0; i < options.samples; i++) {
    // A fresh data folder for each run: both runs start from the same empty history.
    const one = await makeBotDir();
    const two = await makeBotDir();
    try {
      const a = await consoleRun(one, env, n);
      const b = await consoleRun(two, env, 2 * n);
      badReplies += n - a.replies + (2 * n - b.replies);
      perMessage.push((b.repliesMs - a.repliesMs) / n);
      spawnToExitPerMessage.push((b.ms - a.ms) / n);
      const body = JSON.parse(await gw.lastBody('second')) as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;
      const t0 = performance.now();
      for (let k = 0; k < n; k++) await client.chat.completions.create(body);
      floorPerMessage.push((performance.now() - t0) / n);
    } finally {
      await rm(one, { recursive: true, force: true });
      await rm(two, { recursive: true, force: true });
    }
  }
  const checks: Check[] = [{ name: 'console: every piped line got the gateway answer', ok: badReplies === 0, detail: `${badReplies} missing replies` }];
  const bs = summarize(perMessage);
  const spawned = summarize(spawnToExitPerMessage);
  const fs = summarize(floorPerMessage);
  return {
    id: 'console',
    title: `8. console chat, black box: (T(${2 * n}) − T(${n})) / ${n} vs the SDK replaying the bot's last request`,
    metrics: [
      metric('floor: SDK call with the bot\'s last request', 'ms', fs.median, fs.p99, fs.n),
      metric('console: one more message, wall (first to last reply)', 'ms', bs.median, bs.p99, bs.n, 'median ≤ 1.3× floor', bs.median / fs.median <= 1.3, `ratio of medians ${round(bs.median / fs.median)}`),
      metric('console: one more message, spawn to exit', 'ms', spawned.median, spawned.p99, spawned.n, undefined, undefined, `ratio of medians ${round(spawned.median / fs.median)}`),
    ],
    checks,
    data: { messages: n, perMessageMs: perMessage.map((v) => round(v)), spawnToExitPerMessageMs: spawnToExitPerMessage.map((v) => round(v)), floorPerMessageMs: floorPerMessage.map((v) => round(v)) },
  };
}
