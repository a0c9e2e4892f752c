import type { Settings } from '../core/services/config/settings.js';
import { readJsonUpTo } from '../core/services/http/bounded-body.js';
import type { Logger } from '../core/services/log/logger.js';
import { checkChatLeg, type LegCheck } from '../core/services/providers/leg-check.js';
import type { ProviderLeg } from '../core/services/providers/types.js';

/** The header every start-probe request carries, so an upstream (or a test fake) can tell it from users' requests. */
export const PROBE_HEADER = { 'x-wa-bot-probe': 'startup' } as const;

/** What the start probe found for one upstream: a chain leg (`primary`, `second`, `audio-1` …) or `search`. */
export interface StartCheck extends LegCheck {
  name: string;
  /** The setting(s) to correct when it failed, in words. */
  fix?: string;
}

/**
 * The search key with one one-result search (`POST <base>/search`, bearer key, `{ query, max_results: 1 }`, the
 * Tavily-style API of DESIGN.md). Written here rather than borrowed from the search plugin: the app's test kit, which
 * loads this module, must not bring a plugin with it.
 */
async function checkSearch(apiKey: string, baseUrl: string, timeoutMs: number): Promise<LegCheck> {
  const url = `${baseUrl.trim().replace(/\/+$/, '')}/search`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { ...PROBE_HEADER, 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ query: 'weather', max_results: 1 }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    if ((err as Error)?.name === 'TimeoutError' || (err as Error)?.name === 'AbortError') return { ok: false, problem: 'timeout', detail: `no answer from ${url} within ${Math.round(timeoutMs / 1000)} s` };
    return { ok: false, problem: 'unreachable', detail: `cannot reach ${url} (${(err as { cause?: { code?: string } })?.cause?.code ?? 'connection failed'})` };
  }
  const status = res.status;
  const body = await readJsonUpTo(res, 2 * 1024 * 1024, 'the search answer').catch(() => undefined);
  if (res.ok) {
    return Array.isArray((body as { results?: unknown })?.results)
      ? { ok: true, status, detail: 'search key accepted' }
      : { ok: false, status, problem: 'wrong-url', detail: `${url} answered, but not with search results: is SEARCH_BASE_URL a Tavily-style search API?` };
  }
  if (status === 401 || status === 403) return { ok: false, status, problem: 'rejected-key', detail: `the search provider rejected the key (HTTP ${status}): wrong key` };
  if (status === 429 || status === 432 || status === 433) return { ok: true, degraded: true, status, problem: 'rate-limited', detail: `the search key is accepted but rate-limited or out of credit now (HTTP ${status})` };
  if (status === 404 || status === 405) return { ok: false, status, problem: 'wrong-url', detail: `${url} does not exist (HTTP ${status})` };
  if (status >= 500) return { ok: false, status, problem: 'server-error', detail: `the search provider failed (HTTP ${status}); try again later` };
  return { ok: false, status, problem: 'refused', detail: `the search provider refused the test search (HTTP ${status})` };
}

/** The .env variables behind one leg, for the fix ("correct API_KEY in .env"). */
function legVariables(leg: ProviderLeg): { key: string; url: string; model: string } {
  if (leg.kind === 'audio') return { key: 'AUDIO_API_KEYS', url: 'AUDIO_BASE_URL', model: 'AUDIO_CHAT_MODEL' };
  return leg.name === 'primary'
    ? { key: 'PRIMARY_GATEWAY_API_KEY', url: 'PRIMARY_GATEWAY_BASE_URL', model: 'PRIMARY_GATEWAY_MODEL' }
    : { key: 'API_KEY', url: 'BASE_URL', model: 'MODEL' };
}

function fixFor(check: LegCheck, vars: { key: string; url: string; model?: string }): string | undefined {
  if (check.ok) return undefined;
  switch (check.problem) {
    case 'rejected-key':
      return `correct ${vars.key} in .env (npm run setup)`;
    case 'unknown-model':
      return vars.model ? `set ${vars.model} in .env to a model the gateway knows (npm run setup lists them)` : undefined;
    case 'wrong-url':
    case 'unreachable':
    case 'timeout':
      return `check ${vars.url} in .env, and that the provider is up`;
    case 'quota':
      return `top up the key's credit, or put another key in ${vars.key}`;
    default:
      return 'try again later; npm run doctor checks it again without starting the bot';
  }
}

/**
 * One tiny real request per provider leg (a one-word prompt, `max_tokens` 1) and one one-result search when a search
 * key is set, in parallel, each bounded by `timeoutMs`: says at once whether each key, URL and model really works,
 * instead of the first user's reply. Logs one line per upstream (✔ at info, ✘ with the fix at warn) and a summary.
 * Never throws: a failing or hanging upstream is a line in the log, never a reason to stop.
 */
export async function runStartChecks(legs: ProviderLeg[], settings: Settings, log: Logger, timeoutMs: number): Promise<StartCheck[]> {
  const checks: Array<Promise<StartCheck>> = legs.map(async (leg) => {
    const check = await checkChatLeg({ baseUrl: leg.baseUrl, apiKey: leg.apiKey, model: leg.model, timeoutMs, maxTokens: 1, headers: { ...PROBE_HEADER } });
    return { name: leg.name, ...check, fix: fixFor(check, legVariables(leg)) };
  });
  const searchKey = (settings.env.SEARCH_API_KEY ?? '').trim();
  if (searchKey) {
    const base = (settings.env.SEARCH_BASE_URL ?? '').trim() || 'https://api.tavily.com';
    checks.push(
      checkSearch(searchKey, base, timeoutMs).then((check) => ({ name: 'search', ...check, fix: fixFor(check, { key: 'SEARCH_API_KEY', url: 'SEARCH_BASE_URL' }) })),
    );
  }
  const results = await Promise.all(
    checks.map((c) => c.catch((err: Error): StartCheck => ({ name: 'check', ok: false, problem: 'refused', detail: `the check itself failed: ${err.message}` }))),
  );
  for (const r of results) {
    const model = legs.find((l) => l.name === r.name)?.model;
    const label = `${r.name}${model ? ` (${model})` : ''}`;
    const fields = { upstream: r.name, ok: r.ok, ...(r.problem ? { problem: r.problem } : {}), ...(r.status ? { status: r.status } : {}) };
    if (r.ok) log[r.degraded ? 'warn' : 'info'](fields, `start check ${r.degraded ? '⚠' : '✔'} ${label}: ${r.detail}`);
    else log.warn({ ...fields, fix: r.fix }, `start check ✘ ${label}: ${r.detail}${r.fix ? ` — fix: ${r.fix}` : ''}`);
  }
  const working = results.filter((r) => r.ok).length;
  if (results.length) log[working === results.length ? 'info' : 'warn']({ working, checked: results.length }, `start check done: ${working} of ${results.length} upstream(s) answer${working ? '' : ': AI answers will fail until this is fixed; non-AI commands keep working'}`);
  return results;
}
