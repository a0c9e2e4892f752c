import { retryAfterMs } from '../../core/index.js';
import { DownloadRefused, readBodyUpTo } from '../../core/media.js';

/** A search answer of a few results is some KB; more is not read. */
const MAX_ANSWER_BYTES = 2 * 1024 * 1024;

/** One search hit. */
export interface SearchHit {
  title: string;
  url: string;
  content: string;
}

/** A search provider call that did not give results; `kind` decides how long the provider rests. */
export class SearchProviderError extends Error {
  constructor(
    message: string,
    readonly kind: 'auth' | 'rate-limit' | 'server' | 'network' | 'timeout' | 'bad-answer' | 'bad-request',
    readonly status?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

export interface TavilyOptions {
  apiKey: string;
  /** Base URL; requests go to `<base>/search`. */
  baseUrl: string;
  timeoutMs: number;
}

function text(value: unknown, limit: number): string {
  return typeof value === 'string' ? value.replace(/\s+/g, ' ').trim().slice(0, limit) : '';
}

/**
 * One call to a Tavily-style search API: `POST <base>/search` with a bearer key and `{ query, max_results }`,
 * answered by `{ results: [{ title, url, content }] }`. Hits without an http(s) URL are dropped.
 *
 * @example
 * const hits = await tavilySearch({ apiKey, baseUrl: 'https://api.tavily.com', timeoutMs: 45000 }, 'rupiah rate', 5);
 */
export async function tavilySearch(options: TavilyOptions, query: string, maxResults: number): Promise<SearchHit[]> {
  const url = `${options.baseUrl.trim().replace(/\/+$/, '')}/search`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${options.apiKey}` },
      body: JSON.stringify({ query, max_results: maxResults }),
      signal: AbortSignal.timeout(options.timeoutMs),
    });
  } catch (err) {
    const name = (err as Error)?.name;
    if (name === 'TimeoutError' || name === 'AbortError') throw new SearchProviderError('search provider timed out', 'timeout');
    const code = (err as { cause?: { code?: string } })?.cause?.code ?? 'connection failed';
    throw new SearchProviderError(`search provider unreachable (${code})`, 'network');
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    const status = response.status;
    const kind = status === 401 || status === 403 ? 'auth' : status === 429 || status === 432 || status === 433 ? 'rate-limit' : status >= 500 ? 'server' : 'bad-request';
    throw new SearchProviderError(`search provider answered HTTP ${status}`, kind, status, retryAfterMs(response.headers));
  }
  let body: unknown;
  try {
    body = JSON.parse((await readBodyUpTo(response, MAX_ANSWER_BYTES, 'the search answer')).toString('utf8'));
  } catch (err) {
    if (err instanceof DownloadRefused) throw new SearchProviderError(`search provider answer too large (${err.message})`, 'bad-answer');
    if (err instanceof SyntaxError) throw new SearchProviderError('search provider answered with something that is not JSON', 'bad-answer');
    const name = (err as Error)?.name;
    if (name === 'TimeoutError' || name === 'AbortError') throw new SearchProviderError('search provider timed out', 'timeout');
    throw new SearchProviderError('search provider connection broke while answering', 'network');
  }
  const results = (body as { results?: unknown })?.results;
  if (!Array.isArray(results)) throw new SearchProviderError('search provider answer has no results list', 'bad-answer');
  return results
    .map((r) => ({ title: text((r as SearchHit)?.title, 200), url: text((r as SearchHit)?.url, 2000), content: text((r as SearchHit)?.content, 1500) }))
    .filter((r) => /^https?:\/\//i.test(r.url))
    .slice(0, maxResults);
}
