import { AllProvidersFailedError, type CommandContext, type PluginHost, type ToolCall } from '../../core/index.js';
import { framedResults, shortLink, sourcesList, type SearchOutcome } from './format.js';
import type { SearchOptions } from './index.js';
import { MAX_QUERY_CHARS, SearchUnavailableError, WebSearch } from './web-search.js';

// Searching and answering (the provider, the backup search, formatting): loaded by index.ts with the first `.search`
// or web_search call, not at start.

function maxResultsOf(options: SearchOptions, asked?: unknown): number {
  const wanted = typeof asked === 'number' && Number.isFinite(asked) ? asked : options.maxResults;
  return Math.max(1, Math.min(10, Math.round(wanted)));
}

/** The answer when the AI cannot summarise: the results themselves, so the search was not wasted. */
function plainResults(outcome: SearchOutcome): string {
  const lines = ['I could not reach the AI to summarise, but here is what the web search found:'];
  if (outcome.answer) lines.push(outcome.answer);
  outcome.hits.forEach((hit, i) => lines.push(`[${i + 1}] ${hit.title || shortLink(hit.url)}`));
  return lines.join('\n');
}

/** The `web_search` tool's and the `.search` command's handlers of one bot: they share the provider's rest state. */
export function searchHandlers(host: PluginHost<SearchOptions>) {
  const web = new WebSearch(host);

  /** `web_search`: results framed as data, numbered for citing. */
  async function tool(args: { query: string; max_results?: number }, call: ToolCall): Promise<string> {
    const query = args.query.trim();
    if (!query) return 'Error: the search query was empty. Call web_search again with a few keywords.';
    try {
      const outcome = await web.search(query, maxResultsOf(host.options(), args.max_results));
      // The answer will name its sources even when the model forgets to.
      call.cite(outcome.hits.map((hit) => shortLink(hit.url)));
      return framedResults(outcome);
    } catch (err) {
      if (!(err instanceof SearchUnavailableError)) throw err;
      return 'Web search is unavailable right now. Tell the user plainly that you cannot check live information at the moment; do not guess or invent an answer.';
    }
  }

  /** `.search <words>`: a short summary of the results, with its sources. */
  async function command(ctx: CommandContext<SearchOptions>): Promise<void> {
    const query = ctx.args.replace(/\s+/g, ' ').trim();
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
      outcome = await web.search(query, maxResultsOf(host.options()));
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
  }

  return { tool, command };
}
