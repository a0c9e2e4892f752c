import { definePlugin, defineTool, Type, type PluginHost } from '../../core/index.js';
import { atFirstUse } from '../../core/builtin.js';
import type { searchHandlers } from './handling.js';

/** Results asked of the provider when neither the config nor the model says otherwise. */
export const DEFAULT_MAX_RESULTS = 5;

const options = Type.Object({
  maxResults: Type.Integer({ title: 'Results per search', minimum: 1, maximum: 10, default: DEFAULT_MAX_RESULTS, description: 'results asked of the search provider' }),
});
export type SearchOptions = { maxResults: number };

type SearchHandlers = ReturnType<typeof searchHandlers>;

const NO_SEARCH =
  "I can't search the web right now (no search service is configured), so I cannot check live information such as news, prices or the weather.";

/** The `web_search` tool the main model may call; results come back framed as data, numbered for citing. */
function webSearchTool(handlers: () => Promise<SearchHandlers>) {
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
    run: async (args, call) => (await handlers()).tool(args, call),
  });
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
    // One per bot: the tool and the command share the provider's rest state. They load with the first search
    // (handling.ts: the provider, the backup search, formatting), not at start.
    const handlers = atFirstUse(async () => (await import('./handling.js')).searchHandlers(host));
    return {
      tools: [webSearchTool(handlers)],
      commands: [
        {
          command: 'search',
          help: 'search the web and get a short summary with sources',
          usage: '.search <words>',
          run: async (ctx) => (await handlers()).command(ctx),
        },
      ],
    };
  },
});
