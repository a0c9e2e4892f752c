import type { Logger, PluginHost } from '../../core/index.js';
import { backupSearch } from './backup-search.js';
import type { SearchOutcome } from './format.js';
import { SearchProviderError, tavilySearch } from './search-provider.js';

/** Thrown when neither the search provider nor the backup could search; `message` is safe to show a user. */
export class SearchUnavailableError extends Error {
  constructor(readonly causes: string[]) {
    super("I couldn't search the web just now (the search services did not answer), so I cannot check live information. Please try again later.");
  }
}

/** How long the search provider rests after a failure, by kind (a rejected key: until restart). */
const REST_MS: Record<SearchProviderError['kind'], number> = {
  auth: Infinity,
  'rate-limit': 60_000,
  server: 30_000,
  network: 30_000,
  timeout: 30_000,
  'bad-answer': 10_000,
  'bad-request': 0,
};

/** What web search needs of its plugin's host. */
export type SearchHost = Pick<PluginHost<unknown>, 'settings' | 'setting' | 'log' | 'ai'>;

/** The search provider's default base URL (Tavily). */
export const DEFAULT_SEARCH_BASE_URL = 'https://api.tavily.com';

/** Longest query passed on (Tavily takes 400 characters). */
export const MAX_QUERY_CHARS = 400;

/** The audio provider's model with built-in web search, unless AUDIO_SEARCH_MODEL names another. */
export const DEFAULT_AUDIO_SEARCH_MODEL = 'groq/compound';

/**
 * Web search for one bot: the search provider (SEARCH_API_KEY, SEARCH_BASE_URL) first; when it has no key, fails
 * or rests after a failure, the audio provider's search model (AUDIO_SEARCH_MODEL) through the chain's audio legs.
 * A failing provider rests for a while (retry-after when given), so later searches skip it without a wasted call.
 *
 * @example
 * const outcome = await new WebSearch(host).search('weather in Jakarta today', 5);
 */
export class WebSearch {
  private restUntil = 0;
  private readonly log: Logger;

  constructor(private readonly host: SearchHost, private readonly now: () => number = Date.now) {
    this.log = host.log;
  }

  /** True when some way to search is configured (a search key or an audio key). */
  configured(): boolean {
    return Boolean(this.host.setting('SEARCH_API_KEY')?.trim()) || this.host.settings.audio.keys.length > 0;
  }

  async search(rawQuery: string, maxResults: number): Promise<SearchOutcome> {
    const query = rawQuery.replace(/\s+/g, ' ').trim().slice(0, MAX_QUERY_CHARS);
    const causes: string[] = [];
    const { audio, upstreamTimeoutMs } = this.host.settings;
    const search = { apiKey: this.host.setting('SEARCH_API_KEY')?.trim() ?? '', baseUrl: this.host.setting('SEARCH_BASE_URL')?.trim() || DEFAULT_SEARCH_BASE_URL };
    if (search.apiKey && this.restUntil <= this.now()) {
      try {
        const hits = await tavilySearch({ apiKey: search.apiKey, baseUrl: search.baseUrl, timeoutMs: upstreamTimeoutMs }, query, maxResults);
        return { query, hits, via: 'provider' };
      } catch (err) {
        if (!(err instanceof SearchProviderError)) throw err;
        const rest = err.retryAfterMs ?? REST_MS[err.kind];
        if (rest > 0) this.restUntil = rest === Infinity ? Infinity : this.now() + rest;
        causes.push(`search provider: ${err.message}`);
        const fields = { kind: err.kind, status: err.status, restMs: rest === Infinity ? 'until restart' : rest };
        if (err.kind === 'auth') this.log.error(fields, 'the search provider rejected SEARCH_API_KEY; using the backup search until restart');
        else this.log.warn(fields, `search provider failed (${err.message}); trying the backup search`);
      }
    } else if (search.apiKey) {
      causes.push('search provider: resting after a failure');
    }
    if (audio.keys.length) {
      try {
        const { answer, hits } = await backupSearch(this.host.ai, this.host.setting('AUDIO_SEARCH_MODEL')?.trim() || DEFAULT_AUDIO_SEARCH_MODEL, query);
        return { query, hits: hits.slice(0, maxResults), answer, via: 'backup' };
      } catch (err) {
        this.log.warn({ err: (err as Error).message }, 'backup search failed');
        causes.push(`backup search: ${(err as Error).message}`);
      }
    }
    throw new SearchUnavailableError(causes.length ? causes : ['no search configured']);
  }
}
