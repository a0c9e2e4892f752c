import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { writeJsonAtomic } from '../../core/services/store/atomic.js';
import { safeFileName } from '../../core/api/file-name.js';
import { closeDatabase, isDatabaseFile } from '../../core/services/store/database.js';
import { HistoryStore, type HistoryEntry } from '../../core/services/store/history.js';
import { userId } from '../fixture.js';
import { metric, type Check, type ScenarioResult } from '../result.js';
import { round, rounded, summarize } from '../stats.js';

export interface HistoryWritesOptions {
  runs: number;
  chats: number;
  messages: number;
}

const entry = (chat: string, i: number): HistoryEntry => ({ id: `m-${i}`, role: i % 2 ? 'assistant' : 'user', senderId: chat, text: `message ${i}: see you at the station at quarter past eight`, at: 1_700_000_000_000 + i });

/**
 * The history store (rows of the store database, a turn's appends in one transaction) taking `chats` × `messages`
 * appends: all chats at once, each chat's messages in order. Timed until everything is on disk (flush). Floor, in the
 * same run, alternating: one atomic write per chat of a file holding its final history (the least durable work that
 * keeps the same messages). Afterwards every chat must hold all its messages in order.
 */
export async function historyWrites(options: HistoryWritesOptions): Promise<ScenarioResult> {
  const chats = Array.from({ length: options.chats }, (_, i) => userId(20_000 + i));
  const total = options.chats * options.messages;
  const rates: number[] = [];
  const floorRates: number[] = [];
  const appendLatency: number[] = [];
  let broken = 0;
  let checked = 0;
  let firstProblem = '';

  const storeRun = async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'wabot-bench-history-'));
    const store = new HistoryStore(dir, options.messages);
    const t0 = performance.now();
    for (let i = 0; i < options.messages; i++) {
      await Promise.all(
        chats.map(async (chat) => {
          const a = performance.now();
          await store.append(chat, entry(chat, i));
          appendLatency.push(performance.now() - a);
        }),
      );
    }
    await store.flush();
    const seconds = (performance.now() - t0) / 1000;
    // Check: every chat holds every message, in order, read back from the store database by a fresh store.
    const reread = new HistoryStore(dir, options.messages);
    for (const chat of chats) {
      checked++;
      const ids = (await reread.recent(chat, options.messages)).map((m) => m.id).join(',');
      if (ids !== Array.from({ length: options.messages }, (_, i) => `m-${i}`).join(',')) {
        broken++;
        firstProblem ||= `${chat}: ${ids.split(',').filter(Boolean).length} messages, not all in order`;
      }
    }
    closeDatabase(dir);
    // The store database and its WAL; anything else (a history file, a temporary file) is a leftover.
    const leftovers = (await readdir(dir)).filter((f) => !isDatabaseFile(f));
    if (leftovers.length) {
      broken += leftovers.length;
      firstProblem ||= `files left: ${leftovers.slice(0, 3).join(', ')}`;
    }
    await rm(dir, { recursive: true, force: true });
    return total / seconds;
  };

  const floorRun = async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'wabot-bench-history-floor-'));
    const docs = chats.map((chat) => ({ file: path.join(dir, 'history', `${safeFileName(chat)}.json`), value: { messages: Array.from({ length: options.messages }, (_, i) => entry(chat, i)) } }));
    const t0 = performance.now();
    await Promise.all(docs.map((d) => writeJsonAtomic(d.file, d.value)));
    const seconds = (performance.now() - t0) / 1000;
    await rm(dir, { recursive: true, force: true });
    return total / seconds;
  };

  await storeRun(); // warm-up
  appendLatency.length = 0;
  for (let r = 0; r < options.runs; r++) {
    if (r % 2 === 0) {
      floorRates.push(await floorRun());
      rates.push(await storeRun());
    } else {
      rates.push(await storeRun());
      floorRates.push(await floorRun());
    }
  }
  const checks: Check[] = [{ name: 'history: every chat holds all its messages in order', ok: broken === 0 && checked > 0, detail: broken ? `${broken} problems; first: ${firstProblem}` : `${checked} chats checked` }];
  const rs = summarize(rates);
  const fs = summarize(floorRates);
  const ls = summarize(appendLatency);
  const slow = (v: number[]) => [...v].sort((a, b) => a - b)[Math.max(0, Math.ceil(0.01 * v.length) - 1)];
  return {
    id: 'historyWrites',
    title: `6. history writes: ${options.chats} chats × ${options.messages} messages, atomic`,
    metrics: [
      metric('floor: one atomic write per final file', 'msg/s', fs.median, slow(floorRates), fs.n, undefined, undefined, 'messages covered per second'),
      metric('history store, until flushed (p99 = slowest run)', 'msg/s', rs.median, slow(rates), rs.n, 'report', true, `floor/store ${round(fs.median / rs.median, 1)}x`),
      metric('append() latency', 'ms', ls.median, ls.p99, ls.n),
    ],
    checks,
    data: { messagesPerSecond: rounded(rs, 0), floorMessagesPerSecond: rounded(fs, 0), appendLatencyMs: rounded(ls, 4), runs: options.runs, tmpdir: os.tmpdir() },
  };
}
