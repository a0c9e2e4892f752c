import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { userId } from '../fixture.js';
import { metric, type Check, type ScenarioResult } from '../result.js';
import { rng, searchQueries, timeSearches, transcript, zipfVocabulary } from '../search-corpus.js';
import { round, rounded, summarize } from '../stats.js';
import { closeDatabase, databaseFor } from '../../core/services/store/database.js';

export interface RecallOptions {
  messages: number;
  queries: number;
}

/** The parts of the recall plugin the bench uses (imported at run time: the plugin may be absent). */
interface Hit {
  message: { id?: string; text: string };
}
interface ChatLogLike {
  addMany(entries: Array<{ id: string; role: 'user' | 'assistant'; senderId?: string; text: string; at: number }>): Promise<void>;
  search(query: string, options?: { limit?: number; notBefore?: number }): Promise<Hit[]>;
}
interface StoreLike {
  chat(chatId: string): ChatLogLike;
  flush(): Promise<number>;
}
/** The recall log's word index in the store database (see core/services/store/sql-search-log.ts). */
const WORDS = '"search-log-words:recall:recall"';
interface LogStoreModule {
  RecallStore: new (root: string) => StoreLike;
  queryTerms(text: string): string[];
}
interface FormatModule {
  formatForChat(hits: Hit[], query: string, terms: string[]): string;
}

const title = (messages: number) => `8. recall: search of one chat with ${messages.toLocaleString('en-US')} past messages`;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * 8. The recall plugin's per-chat log (the store database's search log: items table and FTS5 index) with one chat of
 * `messages` messages (Zipf-distributed words, spread over about a year) and a small second chat. Timed: what a user's
 * `.recall <words>` costs — the store's search and ranking (with the retention cutoff, as the plugin asks) and the
 * reply text — A/B against the same FTS5 index queried directly (first word, 5 rows, no chat, no ranking); the first
 * search after a restart. Checks: a planted message is found after the restart, a word only the other chat has is
 * never found in this one, and the timed answers are right (every hit holds a query word; a one-word search shows the
 * newest message holding it first).
 */
export async function recallSearch(options: RecallOptions): Promise<ScenarioResult> {
  const folder = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'plugins', 'recall');
  if (!existsSync(path.join(folder, 'log-store.js'))) {
    process.stdout.write(`${title(options.messages)}: skipped: recall plugin not present\n`);
    return { id: 'recallSearch', title: title(options.messages), metrics: [], checks: [], data: {}, skipped: 'recall plugin not present' };
  }
  const { RecallStore, queryTerms } = (await import(pathToFileURL(path.join(folder, 'log-store.js')).href)) as LogStoreModule;
  const { formatForChat } = (await import(pathToFileURL(path.join(folder, 'format.js')).href)) as FormatModule;
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'wabot-bench-recall-'));
  const root = path.join(dataDir, 'recall');
  const big = `${String(1_000_000_002).padStart(12, '0')}-1600000000@g.us`;
  const other = userId(30_001);
  const random = rng(7);
  const vocabulary = zipfVocabulary(random);
  const texts: string[] = [];
  for (let i = 0; i < options.messages; i++) texts.push(transcript(random, vocabulary).slice(0, 40 + Math.floor(random() * 200)));
  const needleAt = Math.floor(options.messages * 0.61);
  texts[needleAt] = `${texts[needleAt]} the zanzibar ferry leaves at noon`;
  const checks: Check[] = [];
  // About a year of messages, oldest first.
  const firstAt = Date.now() - 360 * DAY_MS;
  const step = Math.floor((360 * DAY_MS) / options.messages);

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

  /** What `.recall <query>` costs the bot: the store's search and ranking, then the reply text (as the plugin does). */
  const recall = async (chat: ChatLogLike, query: string) => {
    const hits = await chat.search(query, { limit: 5, notBefore: Date.now() - 365 * DAY_MS });
    return { hits, reply: formatForChat(hits, query, queryTerms(query)) };
  };

  // Restart: the database is closed and opened again; the first search reads it cold.
  closeDatabase(dataDir);
  store = new RecallStore(root);
  const chat = store.chat(big);
  const c0 = performance.now();
  const needle = await recall(chat, 'zanzibar ferry');
  const coldMs = performance.now() - c0;
  checks.push({ name: 'recall: a planted message is found after a restart', ok: needle.hits[0]?.message.id === `m-${needleAt}` && needle.reply.includes('zanzibar ferry'), detail: `first hit ${needle.hits[0]?.message.id}; want m-${needleAt}` });
  const leak = await chat.search('quixotic walrus', { limit: 5 });
  checks.push({ name: "recall: search stays in its chat (another chat's words are not found)", ok: leak.length === 0, detail: `${leak.length} hits from the other chat` });

  const first = databaseFor(dataDir);
  const floorQuery = (query: string) => first.all(`SELECT rowid FROM ${WORDS} WHERE ${WORDS} MATCH ? LIMIT 5`, [`"${queryTerms(query)[0] ?? 'x'}"`]);
  const queries = searchQueries(vocabulary, options.queries + 100);
  const times = await timeSearches(queries, floorQuery, (query) => recall(chat, query));

  // The answers timed are right: each hit holds a query word; a one-word search starts with the newest message
  // holding the word (found by scanning the texts from the end).
  const words = (text: string) => new Set(text.toLowerCase().split(/[^\p{L}\p{N}]+/u));
  let wrong = 0;
  let firstWrong = '';
  for (const query of queries.slice(100, 400)) {
    const { hits } = await recall(chat, query);
    const terms = queryTerms(query);
    const bad = hits.find((h) => !terms.some((t) => words(h.message.text).has(t)));
    let newest = -1;
    if (terms.length === 1) for (let i = texts.length - 1; i >= 0 && newest < 0; i--) if (words(texts[i]).has(terms[0])) newest = i;
    const newestWrong = terms.length === 1 && newest >= 0 && hits[0]?.message.id !== `m-${newest}`;
    if (bad || newestWrong || (!hits.length && newest >= 0)) {
      wrong++;
      firstWrong ||= `"${query}": ${bad ? `hit ${bad.message.id} holds no query word` : `first hit ${hits[0]?.message.id}, newest m-${newest}`}`;
    }
  }
  checks.push({ name: 'recall: the timed searches answer right (query words in every hit, newest first)', ok: wrong === 0, detail: wrong ? `${wrong} of 300 wrong, e.g. ${firstWrong}` : '300 queries checked' });

  closeDatabase(dataDir);
  await rm(dataDir, { recursive: true, force: true });

  const fs = summarize(times.reference);
  const bs = summarize(times.subject);
  return {
    id: 'recallSearch',
    title: title(options.messages),
    metrics: [
      metric('reference: the same FTS5 index queried directly (first word, 5 rows)', 'ms', fs.median, fs.p99, fs.n),
      metric('.recall: search, ranking and reply text', 'ms', bs.median, bs.p99, bs.n, 'p95 < 5 ms', bs.p95 < 5, `p95 ${round(bs.p95)} ms; ratio to the reference ${round(bs.median / fs.median, 2)}`),
      metric('first search after a restart', 'ms', coldMs, coldMs, 1),
      metric(`logging ${options.messages.toLocaleString('en-US')} messages (addMany, one transaction per 10,000)`, 's', fillSeconds, fillSeconds, 1),
    ],
    checks,
    data: { referenceMs: rounded(fs, 4), searchMs: rounded(bs, 4), coldFirstSearchMs: round(coldMs, 1), fillSeconds: round(fillSeconds, 1), messages: options.messages },
  };
}
