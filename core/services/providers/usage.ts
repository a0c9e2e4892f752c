import { Type } from '#typebox';
import type { Logger } from '../log/logger.js';
import { PluginStores } from '../store/plugin-store.js';
import { USAGE_SCHEMA } from '../store/schemas.js';
import type { SqlDoc } from '../store/sql-docs.js';
import { Store } from '../store/store-declarations.js';

interface Counter {
  prompt: number;
  /** Of `prompt`, the tokens the provider read from its prompt cache (absent in files from before it was counted). */
  cached?: number;
  completion: number;
  total: number;
  requests: number;
}

interface UsageDoc {
  /** day (YYYY-MM-DD, UTC) → "leg|model" → counter */
  days: Record<string, Record<string, Counter>>;
  /** all-time totals per role, for the account quotas */
  totals: { main: number; premium: number };
  warned: { main: boolean; premium: boolean };
}

/**
 * The token usage as the core declares it (`core` namespace of the store database). Earlier versions kept it in
 * `data/usage.json`: taken in once at the first start, then kept aside under `data/migrated/`.
 */
export const USAGE_STORE = Store.doc('usage', Type.Unsafe<UsageDoc>(USAGE_SCHEMA.schema), (): UsageDoc => ({ days: {}, totals: { main: 0, premium: 0 }, warned: { main: false, premium: false } }), {
  path: 'usage.json',
  title: USAGE_SCHEMA.name,
});

/**
 * Token counts of one response as providers report them: OpenAI-style `prompt_tokens` (cached input in
 * `prompt_tokens_details.cached_tokens`), or Anthropic-style `input_tokens` plus `cache_read_input_tokens` (cached
 * input, not part of `input_tokens` there) and `cache_creation_input_tokens`.
 */
export interface ReportedUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

/** One response's tokens: all input (`prompt`, cached included), the cached part of it, and output. */
export interface TokenCount {
  prompt: number;
  cached: number;
  completion: number;
}

const count = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0);

/** Reads either style of usage report (see `ReportedUsage`); what is missing counts 0. */
export function tokenCount(usage: ReportedUsage | undefined): TokenCount {
  if (!usage) return { prompt: 0, cached: 0, completion: 0 };
  if (usage.prompt_tokens !== undefined || usage.input_tokens === undefined) {
    const prompt = count(usage.prompt_tokens);
    return { prompt, cached: Math.min(prompt, count(usage.prompt_tokens_details?.cached_tokens ?? usage.cache_read_input_tokens)), completion: count(usage.completion_tokens) };
  }
  // Anthropic counts cache reads and writes apart from `input_tokens`: all of them are input of this request.
  const cached = count(usage.cache_read_input_tokens);
  return { prompt: count(usage.input_tokens) + cached + count(usage.cache_creation_input_tokens), cached, completion: count(usage.output_tokens) };
}

const DAY_MS = 86_400_000;
let memoDay = { start: 0, end: 0, text: '' };

/** The UTC day of `now` as YYYY-MM-DD. Remembers the last day: counters ask several times per message. */
export function today(now = Date.now()): string {
  if (now >= memoDay.start && now < memoDay.end) return memoDay.text;
  const start = Math.floor(now / DAY_MS) * DAY_MS;
  memoDay = { start, end: start + DAY_MS, text: new Date(start).toISOString().slice(0, 10) };
  return memoDay.text;
}

/**
 * Token usage per provider and model per day, in the store database (`USAGE_STORE`), with the account quotas (main/premium) warned
 * in the log at 80%.
 *
 * @example usage.record('primary', 'gpt-x', 'main', { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
 */
export class UsageLedger {
  private readonly doc: SqlDoc<UsageDoc>;
  private quotas = { main: 0, premium: 0 };
  /** Listeners told about each recorded usage (per-user budgets). */
  private readonly listeners: Array<(userId: string | undefined, role: 'main' | 'premium', tokens: number) => void> = [];
  /** Listeners told about each response's tokens by leg (the metrics). */
  private readonly tokenListeners: Array<(leg: string, tokens: TokenCount) => void> = [];

  /**
   * @param flushMs counters are kept in memory and written at most once per this interval (and at stop): a crash
   *   loses at most that much usage, never a per-message write.
   */
  constructor(dataDir: string, private readonly log: Logger, flushMs = 1000) {
    this.doc = new PluginStores('core', dataDir, [USAGE_STORE], undefined, flushMs).document(USAGE_STORE);
  }

  async load(): Promise<void> {
    await this.doc.get();
  }

  setQuotas(main: number, premium: number): void {
    this.quotas = { main, premium };
  }

  onRecord(listener: (userId: string | undefined, role: 'main' | 'premium', tokens: number) => void): void {
    this.listeners.push(listener);
  }

  /** Calls `listener` with every recorded response's tokens (input, its cached part, output) and its leg. */
  onTokens(listener: (leg: string, tokens: TokenCount) => void): void {
    this.tokenListeners.push(listener);
  }

  record(leg: string, model: string, role: 'main' | 'premium', usage: ReportedUsage | undefined, userId?: string): void {
    const tokens = tokenCount(usage);
    const { prompt, cached, completion } = tokens;
    const total = usage?.total_tokens ?? prompt + completion;
    for (const l of this.listeners) l(userId, role, total);
    for (const l of this.tokenListeners) l(leg, tokens);
    void this.doc.update((doc) => {
      doc.days ??= {};
      doc.totals ??= { main: 0, premium: 0 };
      doc.warned ??= { main: false, premium: false };
      const day = (doc.days[today()] ??= {});
      const counter = (day[`${leg}|${model}`] ??= { prompt: 0, completion: 0, total: 0, requests: 0 });
      counter.prompt += prompt;
      if (cached) counter.cached = (counter.cached ?? 0) + cached;
      counter.completion += completion;
      counter.total += total;
      counter.requests += 1;
      doc.totals[role] += total;
      const quota = this.quotas[role];
      if (quota > 0 && !doc.warned[role] && doc.totals[role] >= quota * 0.8) {
        doc.warned[role] = true;
        this.log.warn({ role, used: doc.totals[role], quota }, `${role} model has used 80% of its token quota`);
      }
    }).catch((err) => this.log.error({ err }, 'could not record token usage'));
  }

  /** A copy of the usage for the start log and the dashboard. */
  async snapshot(): Promise<UsageDoc & { quotas: { main: number; premium: number } }> {
    const doc = await this.doc.get();
    return { ...structuredClone(doc), quotas: { ...this.quotas } };
  }

  flush(): Promise<void> {
    return this.doc.flush();
  }
}
