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
import { Fts5RecallLog } from '../fts5-recall.js';

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
interface LogStoreModule {
  RecallStore: new (root: string) => StoreLike;
  queryTerms(text: string): string[];
}
interface FormatModule {
  formatForChat(hits: Hit[], query: string, terms: string[]): string;
}
interface FlexIndex {
  add(id: number, text: string): void;
  search(query: string, options: { limit: number; suggest: boolean }): unknown[];
}

const title = (messages: number) => `8. recall: search of one chat with ${messages.toLocaleString('en-US')} past messages`;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * 8. The recall plugin's per-chat log with one chat of `messages` messages (Zipf-distributed words, spread over about a
 * year, so a dozen month files) and a small second chat. Timed: what a user's `.recall <words>` costs once the chat is
 * loaded — the store's search and ranking (with the retention cutoff, as the plugin asks) and the reply text — A/B
 * against the same FlexSearch index queried directly; the first search after a restart, once indexing the log (no
 * snapshot yet) and once from the index snapshots written at stop. Checks: a planted message is found after the
 * restart, a word only the other chat has is never found in this one, and the timed answers are right (every hit holds
 * a query word; a one-word search shows the newest message holding it first).
 */
export async function recallSearch(options: RecallOptions): Promise<ScenarioResult> {
  const folder = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'plugins', 'recall');
  if (!existsSync(path.join(folder, 'log-store.js'))) {
    process.stdout.write(`${title(options.messages)}: skipped: recall plugin not present\n`);
    return { id: 'recallSearch', title: title(options.messages), metrics: [], checks: [], data: {}, skipped: 'recall plugin not present' };
  }
  const { RecallStore, queryTerms } = (await import(pathToFileURL(path.join(folder, 'log-store.js')).href)) as LogStoreModule;
  const { formatForChat } = (await import(pathToFileURL(path.join(folder, 'format.js')).href)) as FormatModule;
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
  // About a year of messages, oldest first, so they spread over 12–13 month files.
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

  // Restart 1: the chat was never searched, so there is no snapshot: the first search indexes the log.
  store = new RecallStore(root);
  const r0 = performance.now();
  await recall(store.chat(big), 'zanzibar ferry');
  const rebuildMs = performance.now() - r0;
  // Stop: the index snapshots are written (they were queued after the rebuild; flush waits for them).
  const s0 = performance.now();
  await store.flush();
  const snapshotWriteMs = performance.now() - s0;

  // Restart 2: the first search loads the months from their snapshots.
  store = new RecallStore(root);
  const chat = store.chat(big);
  const c0 = performance.now();
  const needle = await recall(chat, 'zanzibar ferry');
  const coldMs = performance.now() - c0;
  checks.push({ name: 'recall: a planted message is found after a restart (from the snapshots)', ok: needle.hits[0]?.message.id === `m-${needleAt}` && needle.reply.includes('zanzibar ferry'), detail: `first hit ${needle.hits[0]?.message.id}; want m-${needleAt}` });
  const leak = await chat.search('quixotic walrus', { limit: 5 });
  checks.push({ name: "recall: search stays in its chat (another chat's words are not found)", ok: leak.length === 0, detail: `${leak.length} hits from the other chat` });

  const floorIndex = new Index({ tokenize: 'strict', resolution: 9 });
  texts.forEach((t, i) => floorIndex.add(i, t));
  const queries = searchQueries(vocabulary, options.queries + 100);
  const times = await timeSearches(queries, (query) => floorIndex.search(query, { limit: 5, suggest: true }), (query) => recall(chat, query));

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

  // A/B: the same corpus on FTS5 in the store database (data/store.db), the engine the store's move plans for the
  // search logs: the same two chats, the same queries, the same checks on what it answers.
  const ftsDir = path.join(root, 'fts5');
  const fts = new Fts5RecallLog(ftsDir);
  const f0 = performance.now();
  for (let start = 0; start < texts.length; start += chunk) {
    fts.addMany(
      big,
      texts.slice(start, start + chunk).map((text, j) => ({ id: `m-${start + j}`, role: (start + j) % 3 ? 'user' : 'assistant', senderId: userId(1 + ((start + j) % 40)), text, at: firstAt + (start + j) * step })),
    );
  }
  fts.addMany(other, [{ id: 'other-1', role: 'user', senderId: other, text: 'only the other chat talks about the quixotic walrus', at: Date.now() }]);
  const ftsFillSeconds = (performance.now() - f0) / 1000;
  const ftsRecall = async (query: string) => {
    const hits = fts.search(big, query, { limit: 5, notBefore: Date.now() - 365 * DAY_MS });
    return { hits, reply: formatForChat(hits, query, queryTerms(query)) };
  };
  const ftsTimes = await timeSearches(queries, (query) => floorIndex.search(query, { limit: 5, suggest: true }), ftsRecall);
  const ftsNeedle = await ftsRecall('zanzibar ferry');
  checks.push({ name: 'recall on FTS5: the planted message is found', ok: ftsNeedle.hits[0]?.message.id === `m-${needleAt}`, detail: `first hit ${ftsNeedle.hits[0]?.message.id}; want m-${needleAt}` });
  checks.push({ name: "recall on FTS5: search stays in its chat (another chat's words are not found)", ok: fts.search(big, 'quixotic walrus').length === 0, detail: 'searched the big chat for the other chat\'s words' });
  let ftsWrong = 0;
  let ftsFirstWrong = '';
  for (const query of queries.slice(100, 400)) {
    const { hits } = await ftsRecall(query);
    const terms = queryTerms(query);
    const bad = hits.find((h) => !terms.some((t) => words(h.message.text).has(t)));
    let newest = -1;
    if (terms.length === 1) for (let i = texts.length - 1; i >= 0 && newest < 0; i--) if (words(texts[i]).has(terms[0])) newest = i;
    if (bad || (terms.length === 1 && newest >= 0 && hits[0]?.message.id !== `m-${newest}`) || (!hits.length && newest >= 0)) {
      ftsWrong++;
      ftsFirstWrong ||= `"${query}": first hit ${hits[0]?.message.id}, newest m-${newest}`;
    }
  }
  checks.push({ name: 'recall on FTS5: the timed searches answer right (query words in every hit, newest first)', ok: ftsWrong === 0, detail: ftsWrong ? `${ftsWrong} of 300 wrong, e.g. ${ftsFirstWrong}` : '300 queries checked' });
  fts.close();
  await rm(root, { recursive: true, force: true });

  const fs = summarize(times.reference);
  const bs = summarize(times.subject);
  const ts = summarize(ftsTimes.subject);
  return {
    id: 'recallSearch',
    title: title(options.messages),
    metrics: [
      metric('reference: same FlexSearch index, whole query in one call', 'ms', fs.median, fs.p99, fs.n),
      metric('.recall: search, ranking and reply text', 'ms', bs.median, bs.p99, bs.n, 'p95 < 1 ms', bs.p95 < 1, `p95 ${round(bs.p95)} ms; ratio to the reference ${round(bs.median / fs.median, 2)}`),
      metric('.recall on FTS5 in the store database (same corpus): search, ranking and reply text', 'ms', ts.median, ts.p99, ts.n, 'p95 < 5 ms', ts.p95 < 5, `p95 ${round(ts.p95)} ms`),
      metric(`logging ${options.messages.toLocaleString('en-US')} messages on FTS5 (one transaction per 10,000)`, 's', ftsFillSeconds, ftsFillSeconds, 1),
      metric('first search after a restart, from the index snapshots', 'ms', coldMs, coldMs, 1),
      metric('first search after a restart, indexing the log (no snapshot)', 'ms', rebuildMs, rebuildMs, 1),
      metric('writing the index snapshots (at stop)', 'ms', snapshotWriteMs, snapshotWriteMs, 1),
      metric(`logging ${options.messages.toLocaleString('en-US')} messages (addMany)`, 's', fillSeconds, fillSeconds, 1),
    ],
    checks,
    data: { referenceMs: rounded(fs, 4), searchMs: rounded(bs, 4), coldFirstSearchMs: round(coldMs, 1), rebuildFirstSearchMs: round(rebuildMs, 1), snapshotWriteMs: round(snapshotWriteMs, 1), fillSeconds: round(fillSeconds, 1), fts5SearchMs: rounded(ts, 4), fts5FillSeconds: round(ftsFillSeconds, 1), messages: options.messages },
  };
}
