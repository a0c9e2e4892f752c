import { definePlugin } from '../../core/plugin/define-plugin.js';
import type { PluginHost, ToolDefinition } from '../../core/plugin/types.js';
import type { PluginSection } from '../../core/config/schema.js';
import { AllProvidersFailedError } from '../../core/providers/types.js';
import { framedResults, shortLink, sourcesList, type SearchOutcome } from './format.js';
import { MAX_QUERY_CHARS, SearchUnavailableError, webSearchFor } from './web-search.js';

/** Results asked of the provider when neither the config nor the model says otherwise. */
export const DEFAULT_MAX_RESULTS = 5;

function maxResultsOf(section: PluginSection, asked?: unknown): number {
  const configured = typeof section.maxResults === 'number' && section.maxResults > 0 ? section.maxResults : DEFAULT_MAX_RESULTS;
  const wanted = typeof asked === 'number' && Number.isFinite(asked) ? asked : configured;
  return Math.max(1, Math.min(10, Math.round(wanted)));
}

const NO_SEARCH =
  "I can't search the web right now (no search service is configured), so I cannot check live information such as news, prices or the weather.";

/** The `web_search` tool the main model may call; results come back framed as data, numbered for citing. */
function webSearchTool(host: PluginHost): ToolDefinition {
  return {
    name: 'web_search',
    description:
      'Search the web for current or live information (news, prices, exchange rates, weather, scores, schedules, recent events) or facts you are unsure of. Returns numbered results to cite as [n].',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'what to search for, a few keywords' },
        max_results: { type: 'integer', minimum: 1, maximum: 10, description: 'how many results (default 5)' },
      },
      required: ['query'],
    },
    needs: ['search'],
    async run(args, call) {
      const query = typeof args.query === 'string' ? args.query.trim() : '';
      if (!query) return 'Error: the search query was empty. Call web_search again with a few keywords.';
      try {
        const outcome = await webSearchFor(host).search(query, maxResultsOf(host.options(), args.max_results));
        // The answer will name its sources even when the model forgets to.
        call.cite(outcome.hits.map((hit) => shortLink(hit.url)));
        return framedResults(outcome);
      } catch (err) {
        if (!(err instanceof SearchUnavailableError)) throw err;
        return 'Web search is unavailable right now. Tell the user plainly that you cannot check live information at the moment; do not guess or invent an answer.';
      }
    },
  };
}

/** The answer when the AI cannot summarise: the results themselves, so the search was not wasted. */
function plainResults(outcome: SearchOutcome): string {
  const lines = ['I could not reach the AI to summarise, but here is what the web search found:'];
  if (outcome.answer) lines.push(outcome.answer);
  outcome.hits.forEach((hit, i) => lines.push(`[${i + 1}] ${hit.title || shortLink(hit.url)}`));
  return lines.join('\n');
}

/**
 * Web search: a `web_search` tool for the main model and the `.search <words>` command, backed by a Tavily-style
 * search provider and, when its key is missing or it fails, by the audio provider's search model. Answers cite
 * their sources as short links. Without any search, the reply says plainly that live information cannot be checked.
 */
export default definePlugin({
  name: 'search',
  description: 'Searches the web for live information and cites the sources',
  needs: ['search'],
  missing: NO_SEARCH,
  optionsSchema: {
    type: 'object',
    properties: { maxResults: { type: 'integer', minimum: 1, maximum: 10 } },
  },
  triggers: [{ command: 'search', help: 'search the web and get a short summary with sources', usage: '.search <words>' }],
  tools: (host) => [webSearchTool(host)],
  async handle(ctx) {
    const query = (ctx.command?.args ?? '').replace(/\s+/g, ' ').trim();
    const prefix = ctx.host.config().prefix;
    if (!query) {
      await ctx.reply(`Tell me what to search for, for example: ${prefix}search rupiah to dollar rate today`);
      return;
    }
    if (query.length > MAX_QUERY_CHARS) {
      await ctx.reply(`That search is too long (${query.length} characters; the limit is ${MAX_QUERY_CHARS}). Please use a few keywords.`);
      return;
    }
    await ctx.typing(true).catch(() => undefined);
    let outcome: SearchOutcome;
    try {
      outcome = await webSearchFor(ctx.host).search(query, maxResultsOf(ctx.options));
    } catch (err) {
      if (!(err instanceof SearchUnavailableError)) throw err;
      ctx.log.warn({ causes: err.causes }, 'web search unavailable');
      await ctx.reply(err.message);
      return;
    } finally {
      await ctx.typing(false).catch(() => undefined);
    }
    if (!outcome.hits.length && !outcome.answer) {
      await ctx.reply(`I found nothing on the web for "${query}". Try other words?`);
      return;
    }
    let summary: string;
    try {
      summary = await ctx.ai.respond(ctx, {
        text: query,
        onlyTools: [],
        system: [
          'The user used the search command. Answer their search with a short summary (a few sentences) of what these web results say.',
          framedResults(outcome, 'Cite the results you use as [n] in the text. Do not list the sources at the end: they are added for you.'),
        ].join('\n'),
      });
    } catch (err) {
      if (!(err instanceof AllProvidersFailedError)) throw err;
      ctx.log.warn({ causes: err.causes }, 'could not summarise the search results');
      summary = plainResults(outcome);
    }
    const sources = sourcesList(outcome.hits);
    await ctx.reply(sources ? `${summary.trim()}\n\n${sources}` : summary.trim());
  },
});
