import { performance } from 'node:perf_hooks';
import { abPair } from './stats.js';

/**
 * What the two search scenarios (5. audio archive, 8. recall) share: a deterministic corpus of chat-like texts with
 * Zipf word frequencies, the queries people type, and the A/B timing loop against a reference.
 */

/** Short function words, then content words (real ones, then made-up ones). */
const FUNCTION_WORDS = 'the a and to of i you it is in that we for on with be have this so at but not just can are was yes okay'.split(' ');
const CONTENT_WORDS = (
  'invoice payment meeting tomorrow morning train station ticket doctor appointment school pickup kids dinner ' +
  'grocery list milk bread coffee weekend trip beach mountain hotel booking flight delayed airport taxi rain ' +
  'birthday party cake present football match score team coach practice garden tomato water plants holiday ' +
  'office report deadline project client budget contract signed bank transfer rent landlord repair plumber ' +
  'kitchen window car service garage insurance phone battery charger laptop password wifi router neighbour ' +
  'music concert guitar lesson piano recital library book chapter homework exam results grandmother visit'
).split(' ');
const SYLLABLES = 'ka lo mi ra ten vos ul pe dri san mor el ti bu gan fe'.split(' ');

/** A deterministic pseudo-random generator (mulberry32), so every run builds the same corpus. */
export function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Picks words with Zipf frequencies (rank r has weight 1/r), like speech: a few words are everywhere, most are rare.
 * Ranks 1..30 are function words, then ~4,000 content words.
 */
export function zipfVocabulary(random: () => number): { pick: () => string; content: () => string } {
  const made = Array.from({ length: 4000 - CONTENT_WORDS.length }, () => Array.from({ length: 2 + Math.floor(random() * 2) }, () => SYLLABLES[Math.floor(random() * SYLLABLES.length)]).join(''));
  const words = [...FUNCTION_WORDS, ...CONTENT_WORDS, ...made];
  const cumulative: number[] = [];
  let sum = 0;
  for (let r = 1; r <= words.length; r++) cumulative.push((sum += 1 / r));
  const draw = (from: number) => {
    const lo = from === 0 ? 0 : cumulative[from - 1];
    const x = lo + random() * (sum - lo);
    let a = from;
    let b = words.length - 1;
    while (a < b) {
      const m = (a + b) >> 1;
      if (cumulative[m] < x) a = m + 1;
      else b = m;
    }
    return words[a];
  };
  return { pick: () => draw(0), content: () => draw(FUNCTION_WORDS.length) };
}

/** A text of 8–48 words drawn from the vocabulary. */
export function transcript(random: () => number, vocabulary: { pick: () => string }): string {
  const n = 8 + Math.floor(random() * 40);
  const words: string[] = [];
  for (let i = 0; i < n; i++) words.push(vocabulary.pick());
  return `${words.join(' ')}.`;
}

/** `count` queries of one to three content words, drawn with their Zipf frequencies (people search for what they talk about). */
export function searchQueries(vocabulary: { content: () => string }, count: number): string[] {
  return Array.from({ length: count }, (_, i) => Array.from({ length: 1 + (i % 3) }, () => vocabulary.content()).join(' '));
}

/**
 * Times `subject` and `reference` on every query, interleaved in A/B pairs so both see the same machine state; the
 * first `warmup` queries are run but not counted. Returns the milliseconds of each counted query.
 */
export async function timeSearches(queries: string[], reference: (query: string) => unknown, subject: (query: string) => Promise<unknown>, warmup = 100): Promise<{ reference: number[]; subject: number[] }> {
  const out = { reference: [] as number[], subject: [] as number[] };
  for (let i = 0; i < queries.length; i++) {
    const f = () => {
      const t = performance.now();
      reference(queries[i]);
      return performance.now() - t;
    };
    const b = async () => {
      const t = performance.now();
      await subject(queries[i]);
      return performance.now() - t;
    };
    const [fm, bm] = await abPair(i, f, b);
    if (i < warmup) continue;
    out.reference.push(fm);
    out.subject.push(bm);
  }
  return out;
}
