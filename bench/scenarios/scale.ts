import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { BenchGateway } from '../gateway.js';
import { sleep } from '../fixture.js';
import { metric, type Check, type ScenarioResult } from '../result.js';
import { round, summarize } from '../stats.js';

export interface ScaleOptions {
  /** Accounts started side by side. */
  instances: number;
  /** Messages through the single instance. */
  messages: number;
  /** Length of each idle-CPU window. */
  idleMs: number;
}

/** The V8 flags `npm start` runs the bot with (package.json); memory is measured under the same flags. */
const PRODUCT_NODE_FLAGS = ['--max-semi-space-size=4'];
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

interface Account {
  child: ChildProcessWithoutNullStreams;
  /** The next JSON line the child prints. */
  next(): Promise<Record<string, any>>;
  send(command: string): void;
}

function startAccount(gw: BenchGateway, messages: number): Account {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'scale-child.js');
  const child = spawn(process.execPath, ['--expose-gc', ...PRODUCT_NODE_FLAGS, script], {
    env: { PATH: process.env.PATH ?? '', BENCH_SECOND_URL: gw.v1('second'), BENCH_MESSAGES: String(messages) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    child,
    async next() {
      const line = await Promise.race([
        lines.next(),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`account process gave no report in 300 s:\n${stderr.slice(-2000)}`)), 300_000).unref()),
      ]);
      if (line.done) throw new Error(`account process ended early:\n${stderr.slice(-2000)}`);
      return JSON.parse(line.value) as Record<string, any>;
    },
    send(command) {
      child.stdin.write(`${command}\n`);
    },
  };
}

/** CPU ticks (user + system) of a process so far, from /proc/<pid>/stat. */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Resident (RSS) and proportional (PSS: shared pages split between the processes sharing them) memory in MB. */
function memory(pid: number): { rssMB: number; pssMB: number } {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? NaN);
  return { rssMB: kb('Rss') / 1024, pssMB: kb('Pss') / 1024 };
}

/** Memory and idle CPU (% of one core over `ms`) of processes left alone, measured from outside. */
async function idle(pids: number[], ms: number): Promise<Array<{ rssMB: number; pssMB: number; cpuPercent: number }>> {
  await sleep(1000); // let the start or the burst settle (deferred writes, timers)
  const before = pids.map(cpuTicks);
  const t0 = Date.now();
  await sleep(ms);
  const seconds = (Date.now() - t0) / 1000;
  return pids.map((pid, i) => ({ ...memory(pid), cpuPercent: ((cpuTicks(pid) - before[i]!) / CLOCK_TICKS / seconds) * 100 }));
}

async function stopAll(accounts: Account[]): Promise<void> {
  await Promise.all(
    accounts.map(
      (a) =>
        new Promise<void>((resolve) => {
          const timer = setTimeout(() => a.child.kill('SIGKILL'), 20_000);
          a.child.once('close', () => {
            clearTimeout(timer);
            resolve();
          });
          a.send('stop');
          a.child.stdin.end();
        }),
    ),
  );
}

/**
 * Scale: what one account costs. One instance (real app + web server on the memory transport): RSS, PSS and idle
 * CPU after start and after 10,000 messages. Then `instances` accounts started side by side, each its own process
 * and data folder, measured together while idle: per-account memory, hence accounts per GB.
 */
export async function scale(gw: BenchGateway, options: ScaleOptions): Promise<ScenarioResult> {
  if (!existsSync('/proc/self/smaps_rollup')) {
    return { id: 'scale', title: '7. accounts per machine', metrics: [], checks: [], data: {}, skipped: 'needs Linux /proc (smaps_rollup)' };
  }
  const checks: Check[] = [];
  const one = startAccount(gw, options.messages);
  const started = await one.next();
  checks.push({ name: 'scale: the single account answered .ping', ok: started.pong === true, detail: String(started.pong) });
  const [afterStart] = await idle([one.child.pid!], options.idleMs);
  one.send('messages');
  const busy = await one.next();
  checks.push({ name: 'scale: every message to the single account was answered', ok: busy.replies === busy.sent, detail: `${busy.replies} replies to ${busy.sent} messages` });
  const [afterMessages] = await idle([one.child.pid!], options.idleMs);
  await stopAll([one]);

  const accounts = Array.from({ length: options.instances }, () => startAccount(gw, 0));
  const reports = await Promise.all(accounts.map((a) => a.next()));
  checks.push({ name: `scale: all ${options.instances} accounts answered .ping`, ok: reports.every((r) => r.pong === true), detail: `${reports.filter((r) => r.pong).length} of ${options.instances}` });
  const side = await idle(accounts.map((a) => a.child.pid!), options.idleMs);
  await stopAll(accounts);

  const rss = summarize(side.map((s) => s.rssMB));
  const pss = summarize(side.map((s) => s.pssMB));
  const cpu = summarize(side.map((s) => s.cpuPercent));
  const totalRss = side.reduce((sum, s) => sum + s.rssMB, 0);
  const totalPss = side.reduce((sum, s) => sum + s.pssMB, 0);
  const perGbRss = Math.floor((1024 * options.instances) / totalRss);
  const perGbPss = Math.floor((1024 * options.instances) / totalPss);
  const perGbBusy = Math.floor(1024 / afterMessages!.rssMB);
  return {
    id: 'scale',
    title: '7. accounts per machine',
    metrics: [
      metric('one account after start: RSS | PSS', 'MB', afterStart!.rssMB, afterStart!.pssMB, 1, undefined, undefined, 'median column: RSS; p99 column: PSS'),
      metric('one account after start: idle CPU', '% core', afterStart!.cpuPercent, afterStart!.cpuPercent, 1),
      metric(`one account after ${busy.sent} messages: RSS | PSS`, 'MB', afterMessages!.rssMB, afterMessages!.pssMB, 1, undefined, undefined, 'median column: RSS; p99 column: PSS'),
      metric(`one account after ${busy.sent} messages: idle CPU`, '% core', afterMessages!.cpuPercent, afterMessages!.cpuPercent, 1),
      metric(`${options.instances} accounts side by side: RSS each`, 'MB', rss.median, rss.max, rss.n, undefined, undefined, `total ${round(totalRss, 0)} MB`),
      metric(`${options.instances} accounts side by side: PSS each`, 'MB', pss.median, pss.max, pss.n, undefined, undefined, `total ${round(totalPss, 0)} MB (shared pages split)`),
      metric(`${options.instances} accounts side by side: idle CPU each`, '% core', cpu.median, cpu.max, cpu.n),
      metric(`accounts per GB (RSS, freshly started | after ${busy.sent} messages)`, 'accounts', perGbRss, perGbBusy, options.instances, undefined, undefined, `by PSS: ${perGbPss}; p99 column: one account's RSS after ${busy.sent} messages`),
    ],
    checks,
    data: {
      single: { afterStart, afterMessages, messages: busy.sent },
      sideBySide: side.map((s) => ({ rssMB: round(s.rssMB, 1), pssMB: round(s.pssMB, 1), cpuPercent: round(s.cpuPercent, 2) })),
      totalRssMB: round(totalRss, 1),
      totalPssMB: round(totalPss, 1),
      accountsPerGB: { rss: perGbRss, pss: perGbPss, rssAfterMessages: perGbBusy },
      idleWindowMs: options.idleMs,
    },
  };
}
