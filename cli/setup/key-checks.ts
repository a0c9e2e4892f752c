import { checkChatLeg, type LegCheck } from '../../core/services/providers/leg-check.js';

/** One audio key's check, numbered from 1 in the order the keys are set (never the key itself). */
export interface AudioKeyCheck extends LegCheck {
  index: number;
}

/**
 * Each audio key with one tiny chat request to the audio provider's chat model (the key's last-leg use; the same
 * key transcribes). In parallel, each bounded by `timeoutMs`.
 */
export async function checkAudioKeys(keys: string[], baseUrl: string, chatModel: string, timeoutMs: number): Promise<AudioKeyCheck[]> {
  return Promise.all(keys.map(async (apiKey, i) => ({ index: i + 1, ...(await checkChatLeg({ baseUrl, apiKey, model: chatModel, timeoutMs })) })));
}

/**
 * The search key with one real one-result search, through the search plugin's own client (the request the bot makes).
 * Loaded only when there is a search key to check: it brings the plugin entry (the whole core API) with it.
 */
export async function checkSearchKey(apiKey: string, baseUrl: string, timeoutMs: number): Promise<LegCheck> {
  const { SearchProviderError, tavilySearch } = await import('../../plugins/search/search-provider.js');
  try {
    await tavilySearch({ apiKey, baseUrl, timeoutMs }, 'weather', 1);
    return { ok: true, detail: 'search key accepted' };
  } catch (err) {
    if (!(err instanceof SearchProviderError)) return { ok: false, problem: 'refused', detail: `the search check failed: ${(err as Error).message}` };
    const where = `${baseUrl.replace(/\/+$/, '')}/search`;
    switch (err.kind) {
      case 'auth':
        return { ok: false, status: err.status, problem: 'rejected-key', detail: `the search provider rejected the key (HTTP ${err.status}): wrong key` };
      case 'rate-limit':
        return { ok: true, degraded: true, status: err.status, problem: 'rate-limited', detail: `the search key is accepted but rate-limited or out of credit now (HTTP ${err.status})` };
      case 'network':
      case 'timeout':
        return { ok: false, problem: err.kind === 'timeout' ? 'timeout' : 'unreachable', detail: `${err.message} at ${where}: wrong SEARCH_BASE_URL, or the provider is down` };
      case 'server':
        return { ok: false, status: err.status, problem: 'server-error', detail: `the search provider failed (HTTP ${err.status}); try again later` };
      default:
        return { ok: false, status: err.status, problem: err.status === 404 ? 'wrong-url' : 'refused', detail: `${where}: ${err.message}${err.status === 404 ? ' (wrong SEARCH_BASE_URL?)' : ''}` };
    }
  }
}
