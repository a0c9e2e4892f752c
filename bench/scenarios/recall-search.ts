import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { userId } from '../fixture.js';
import { metric, type Check, type ScenarioResult } from '../result.js';
import { abPair, round, rounded, summarize } from '../stats.js';
import { rng, transcript, zipfVocabulary } from './archive-search.js';

export interface RecallOptions {
  messages: number;
  queries: number;
}

/** The part of the recall plugin's store the bench uses (imported at run time: the plugin may be absent). */
interface ChatLogLike {
  addMany(entries: Array<{ id: string; role: 'user' | 'assistant'; senderId?: string; text: string; at: number }>): Promise<void>;
  search(query: string, options?: { limit?: number }): Promise<Array<{ message: { id?: string } }>>;
}
interface StoreLike {
  chat(chatId: string): ChatLogLike;
  flush(): Promise<number>;
}
interface FlexIndex {
  add(id: number, text: string): void;
  search(query: string, options: { limit: number; suggest: boolean }): unknown[];
}

const TITLE = '8. recall: search of one chat with 100,000 past messages';

/**
 * 8. The recall plugin's per-chat log with one chat of `messages` messages (Zipf-distributed words, a month of them per
 * segment over about a year) and a small second chat: search latency with the chat loaded, A/B against the same
 * FlexSearch index queried directly, the first search after a restart (reading the JSONL segments and indexing), and
 * two checks: a planted message is found, and a word only the other chat has is never found in this one.
 */
export async function recallSearch(options: RecallOptions): Promise<ScenarioResult> {
  const file = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'plugins', 'recall', 'log-store.js');
  if (!existsSync(file)) {
    process.stdout.write(`${TITLE}: skipped: recall plugin not present\n`);
    return { id: 'recallSearch', title: TITLE, metrics: [], checks: [], data: {}, skipped: 'recall plugin not present' };
  }
  const { RecallStore } = (await import(pathToFileURL(file).href)) as { RecallStore: new (root: string) => StoreLike };
  const { Index } = (await import('flexsearch')) as unknown as { Index: new (o: object) => FlexIndex };
  const root = await mkdtemp(path.join(os.tmpdir(), 'wabot-bench-recall-'));
  const big = `${String(1_000_000_002).padStart(12, '0')}-1600000000@g.us`;
  const other = userId(30_001);
  const random = rng(7);
  const vocabulary = zipfVocabulary(random);
  const texts: string[] = [];
  for (let i = 0; i < options.messages; i++) texts.push(transcript(random, vocabulary).slice(0, 40 + Math.floor(random() * 200)));
  const needleAt = Math.floor(options.messages * 0.61);
  texts[needleAt] = `${texts[needleAt]} the zanzibar ferry leaves at noon`;
  const checks: Check[] = [];
  // About a year of messages, oldest first, so they spread over 12–13 month segments.
  const firstAt = Date.now() - 360 * 24 * 60 * 60 * 1000;
  const step = Math.floor((360 * 24 * 60 * 60 * 1000) / options.messages);

  let store = new RecallStore(root);
  const t0 = performance.now();
  const chunk = 10_000;
  for (let start = 0; start < texts.length; start += chunk) {
    await store.chat(big).addMany(
      texts.slice(start, start + chunk).map((text, j) => ({ id: `m-${start + j}`, role: (start + j) % 3 ? 'user' : 'assistant', senderId: userId(1 + ((start + j) % 40)), text, at: firstAt + (start + j) * step })),
    );
  }
  await store.chat(other).addMany([{ id: 'other-1', role: 'user', senderId: other, text: 'only the other chat talks about the quixotic walrus', at: Date.now() }]);
  await store.flush();
  const fillSeconds = (performance.now() - t0) / 1000;

  // Restart: a new store over the same folder; the first search reads the chat's segments and builds its index.
  store = new RecallStore(root);
  const c0 = performance.now();
  const needle = await store.chat(big).search('zanzibar ferry', { limit: 5 });
  const coldMs = performance.now() - c0;
  checks.push({ name: 'recall: a planted message is found after a restart', ok: needle.some((h) => h.message.id === `m-${needleAt}`), detail: `${needle.length} hits; want m-${needleAt}` });
  const leak = await store.chat(big).search('quixotic walrus', { limit: 5 });
  checks.push({ name: "recall: search stays in its chat (another chat's words are not found)", ok: leak.length === 0, detail: `${leak.length} hits from the other chat` });

  const floorIndex = new Index({ tokenize: 'strict', resolution: 9 });
  texts.forEach((t, i) => floorIndex.add(i, t));
  const queries = Array.from({ length: options.queries + 100 }, (_, i) => Array.from({ length: 1 + (i % 3) }, () => vocabulary.content()).join(' '));
  const floor: number[] = [];
  const bot: number[] = [];
  const chat = store.chat(big);
  for (let i = 0; i < queries.length; i++) {
    const f = () => {
      const t = performance.now();
      floorIndex.search(queries[i], { limit: 5, suggest: true });
      return performance.now() - t;
    };
    const b = async () => {
      const t = performance.now();
      await chat.search(queries[i], { limit: 5 });
      return performance.now() - t;
    };
    const [fm, bm] = await abPair(i, f, b);
    if (i < 100) continue;
    floor.push(fm);
    bot.push(bm);
  }
  await rm(root, { recursive: true, force: true });

  const fs = summarize(floor);
  const bs = summarize(bot);
  return {
    id: 'recallSearch',
    title: TITLE,
    metrics: [
      metric('reference: same FlexSearch index, whole query in one call', 'ms', fs.median, fs.p99, fs.n),
      metric('chat log search(query, 5) with context', 'ms', bs.median, bs.p99, bs.n, 'p95 < 20 ms', bs.p95 < 20, `p95 ${round(bs.p95)} ms; ratio to the reference ${round(bs.median / fs.median, 2)}`),
      metric('first search after restart (read segments, index)', 'ms', coldMs, coldMs, 1),
      metric(`logging ${options.messages.toLocaleString('en-US')} messages (addMany)`, 's', fillSeconds, fillSeconds, 1),
    ],
    checks,
    data: { referenceMs: rounded(fs, 4), searchMs: rounded(bs, 4), coldFirstSearchMs: round(coldMs, 1), fillSeconds: round(fillSeconds, 1), messages: options.messages },
  };
}
