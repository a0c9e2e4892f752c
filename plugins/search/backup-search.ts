import type { AiService } from '../../core/index.js';
import type { SearchHit } from './search-provider.js';

/** What the audio provider's search model found: its own short answer, and the pages it read when it says so. */
export interface BackupResult {
  answer: string;
  hits: SearchHit[];
}

const URL_IN_TEXT = /https?:\/\/[^\s<>()\[\]"'`]+[^\s<>()\[\]"'`.,;:!?]/g;

/** Pages named by the model: its `executed_tools[].search_results.results` (Groq compound), else URLs in the text. */
function hitsOf(message: unknown, answer: string): SearchHit[] {
  const hits: SearchHit[] = [];
  const tools = (message as { executed_tools?: unknown })?.executed_tools;
  if (Array.isArray(tools)) {
    for (const tool of tools) {
      const results = (tool as { search_results?: { results?: unknown } })?.search_results?.results;
      if (!Array.isArray(results)) continue;
      for (const r of results as Array<Partial<SearchHit>>) {
        if (typeof r?.url === 'string' && /^https?:\/\//i.test(r.url)) hits.push({ title: String(r.title ?? ''), url: r.url, content: String(r.content ?? '').slice(0, 1500) });
      }
    }
  }
  if (!hits.length) for (const url of new Set(answer.match(URL_IN_TEXT) ?? [])) hits.push({ title: '', url, content: '' });
  return hits;
}

/**
 * Backup search: asks the audio provider's model with built-in web search (`AUDIO_SEARCH_MODEL`) through the
 * chain's audio legs (their failover and cooldowns). Used when there is no search key or the provider fails.
 *
 * @example
 * const { answer, hits } = await backupSearch(host.ai, 'groq/compound', 'rupiah to dollar today');
 */
export async function backupSearch(ai: AiService, model: string, query: string): Promise<BackupResult> {
  const result = await ai.complete(
    [
      {
        role: 'system',
        content: 'Search the web for the query and report the current facts you find, briefly, with the URL of every source you used. Report only what the sources say.',
      },
      { role: 'user', content: query },
    ],
    { kind: 'audio', model, maxTokens: 1024 },
  );
  const answer = result.text.trim();
  return { answer, hits: hitsOf(result.message, answer) };
}
