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

export interface ArchiveOptions {
  transcripts: number;
  queries: number;
}

/** The part of the voice plugin's AudioArchive the bench uses (imported at run time: the plugin may be absent). */
interface ArchiveLike {
  addMany(chatId: string, inputs: Array<{ messageId: string; senderId: string; at: number; transcript: string }>): Promise<unknown[]>;
  search(chatId: string, query: string, limit?: number): Promise<Array<{ note: { messageId: string } }>>;
  flush(): Promise<void>;
}
/** The archive's word index in the store database (see core/services/store/sql-search-log.ts). */
const WORDS = '"search-log-words:voice:voice-archive"';

const title = (transcripts: number) => `5. audio archive search in a chat of ${transcripts.toLocaleString('en-US')} transcripts`;

/**
 * 5. The voice plugin's AudioArchive with one chat of `transcripts` notes of 8–48 Zipf-distributed words (and a small
 * second chat): search latency, A/B against a reference (the same FTS5 index in the store database queried directly:
 * first word, 5 rows, no chat, no ranking), the first search after a restart, and two checks: a planted word is found, and a word planted only in the other chat
 * is never found in this one (search is per chat).
 */
export async function archiveSearch(options: ArchiveOptions): Promise<ScenarioResult> {
  const file = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'plugins', 'voice', 'archive.js');
  if (!existsSync(file)) {
    process.stdout.write(`${title(options.transcripts)}: skipped: voice plugin not present\n`);
    return { id: 'archiveSearch', title: title(options.transcripts), metrics: [], checks: [], data: {}, skipped: 'voice plugin not present' };
  }
  const { AudioArchive } = (await import(pathToFileURL(file).href)) as { AudioArchive: new (store: unknown) => ArchiveLike };
  const { VOICE_ARCHIVE } = (await import(pathToFileURL(path.join(path.dirname(file), 'archive-note.js')).href)) as { VOICE_ARCHIVE: never };
  const { PluginStores } = await import('../../core/services/store/plugin-store.js');
  // The archive on the store the core gives the voice plugin (its declaration under <DATA_DIR>/audio_archive).
  const openArchive = () => new AudioArchive(new PluginStores('voice', root, [VOICE_ARCHIVE]));
  const { closeDatabase, databaseFor } = await import('../../core/services/store/database.js');
  const root = await mkdtemp(path.join(os.tmpdir(), 'wabot-bench-archive-'));
  const big = `${String(1_000_000_001).padStart(12, '0')}-1600000000@g.us`;
  const other = userId(30_000);
  const random = rng(42);
  const vocabulary = zipfVocabulary(random);
  const texts: string[] = [];
  for (let i = 0; i < options.transcripts; i++) texts.push(transcript(random, vocabulary));
  const needleAt = Math.floor(options.transcripts * 0.37);
  texts[needleAt] = `${texts[needleAt]} the zanzibar ferry leaves at noon`;
  const checks: Check[] = [];

  // Fill the archive: big chat in chunks (each touched segment is written once per chunk).
  let archive = openArchive();
  const t0 = performance.now();
  const chunk = 10_000;
  for (let start = 0; start < texts.length; start += chunk) {
    await archive.addMany(
      big,
      texts.slice(start, start + chunk).map((transcript, j) => ({ messageId: `v-${start + j}`, senderId: userId(1 + ((start + j) % 40)), at: 1_700_000_000_000 + (start + j) * 1000, transcript })),
    );
  }
  await archive.addMany(other, [{ messageId: 'other-1', senderId: other, at: 1_700_000_000_000, transcript: 'only the other chat talks about the quixotic walrus' }]);
  await archive.flush();
  const fillSeconds = (performance.now() - t0) / 1000;

  // Restart: the database is closed and opened again, a new archive over it.
  closeDatabase(root);
  archive = openArchive();
  const c0 = performance.now();
  const needle = await archive.search(big, 'zanzibar ferry', 5);
  const coldMs = performance.now() - c0;
  checks.push({ name: 'archive: a planted transcript is found after a restart', ok: needle.some((h) => h.note.messageId === `v-${needleAt}`), detail: `${needle.length} hits; want v-${needleAt}` });
  const leak = await archive.search(big, 'quixotic walrus', 5);
  checks.push({ name: "archive: search stays in its chat (another chat's words are not found)", ok: leak.length === 0, detail: `${leak.length} hits from the other chat` });

  // Reference: the same FTS5 index queried directly for the query's first word (no chat scope, no ranking, no items read).
  const db = databaseFor(root);
  const firstWord = (query: string) => `"${query.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean)[0] ?? 'x'}"`;
  const times = await timeSearches(searchQueries(vocabulary, options.queries + 100), (query) => db.all(`SELECT rowid FROM ${WORDS} WHERE ${WORDS} MATCH ? LIMIT 5`, [firstWord(query)]), (query) => archive.search(big, query, 5));
  closeDatabase(root);
  await rm(root, { recursive: true, force: true });

  const fs = summarize(times.reference);
  const bs = summarize(times.subject);
  return {
    id: 'archiveSearch',
    title: title(options.transcripts),
    metrics: [
      metric('reference: the same FTS5 index queried directly (first word, 5 rows)', 'ms', fs.median, fs.p99, fs.n),
      metric('archive.search(chat, query, 5)', 'ms', bs.median, bs.p99, bs.n, 'p95 < 20 ms', bs.p95 < 20, `p95 ${round(bs.p95)} ms; ratio to the reference ${round(bs.median / fs.median, 2)}`),
      metric('first search after restart', 'ms', coldMs, coldMs, 1),
      metric(`archiving ${options.transcripts.toLocaleString('en-US')} transcripts (addMany)`, 's', fillSeconds, fillSeconds, 1),
    ],
    checks,
    data: { referenceMs: rounded(fs, 4), searchMs: rounded(bs, 4), coldFirstSearchMs: round(coldMs, 1), fillSeconds: round(fillSeconds, 1), transcripts: options.transcripts },
  };
}
