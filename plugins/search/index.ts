import { AllProvidersFailedError, definePlugin, defineTool, Type, type PluginHost } from '../../core/index.js';
import { framedResults, shortLink, sourcesList, type SearchOutcome } from './format.js';
import { MAX_QUERY_CHARS, SearchUnavailableError, WebSearch } from './web-search.js';

/** Results asked of the provider when neither the config nor the model says otherwise. */
export const DEFAULT_MAX_RESULTS = 5;

const options = Type.Object({
  maxResults: Type.Integer({ title: 'Results per search', minimum: 1, maximum: 10, default: DEFAULT_MAX_RESULTS, description: 'results asked of the search provider' }),
});
type SearchOptions = { maxResults: number };

function maxResultsOf(options: SearchOptions, asked?: unknown): number {
  const wanted = typeof asked === 'number' && Number.isFinite(asked) ? asked : options.maxResults;
  return Math.max(1, Math.min(10, Math.round(wanted)));
}

const NO_SEARCH =
  "I can't search the web right now (no search service is configured), so I cannot check live information such as news, prices or the weather.";

/** The `web_search` tool the main model may call; results come back framed as data, numbered for citing. */
function webSearchTool(web: WebSearch, host: PluginHost<SearchOptions>) {
  return defineTool({
    name: 'web_search',
    live: true,
    progress: 'searching the web…',
    // Web pages are written by anyone: outside text.
    effects: { outsideText: true, acts: 'nothing' },
    description:
      'Search the web for current or live information (news, prices, exchange rates, weather, scores, schedules, recent events) or facts you are unsure of. Returns numbered results to cite as [n].',
    parameters: Type.Object({
      query: Type.String({ description: 'what to search for, a few keywords' }),
      max_results: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, description: 'how many results (default 5)' })),
    }),
    needs: ['search'],
    async run(args, call) {
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
    },
  });
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
 * The plugin owns the `search` capability and its settings.
 */
export default definePlugin({
  name: 'search',
  description: 'Searches the web for live information and cites the sources',
  needs: ['search'],
  missing: NO_SEARCH,
  options,
  provides: [
    {
      name: 'search',
      detect: (host: PluginHost<unknown>) => {
        const backup = host.settings.audio.keys.length > 0;
        if (host.setting('SEARCH_API_KEY')?.trim()) return { ok: true, detail: 'search provider key set' + (backup ? ', audio provider as backup' : '') };
        if (backup) return { ok: true, detail: 'no SEARCH_API_KEY; audio provider search model as backup' };
        return { ok: false, notConfigured: true, detail: 'no SEARCH_API_KEY and no audio key: the bot cannot check live information' };
      },
      missing: NO_SEARCH,
      fix: 'set SEARCH_API_KEY (or audio keys) in .env (npm run setup)',
    },
  ],
  settings: [
    { name: 'SEARCH_API_KEY', description: 'key of the Tavily-style search provider' },
    { name: 'SEARCH_BASE_URL', description: 'its base URL (default https://api.tavily.com)' },
    { name: 'AUDIO_SEARCH_MODEL', description: 'the audio provider model with built-in web search, the backup (default groq/compound)' },
  ],
  setup: (host) => {
    // One per bot: the tool and the command share the provider's rest state.
    const web = new WebSearch(host);
    return {
      tools: [webSearchTool(web, host)],
      commands: [
        {
          command: 'search',
          help: 'search the web and get a short summary with sources',
          usage: '.search <words>',
          run: async (ctx) => {
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
          },
        },
      ],
    };
  },
});
