import { parseArgs } from 'node:util';
import { AnswerError, baseUrlFrom, DEFAULT_ACCESS_MODE } from './answers.js';

/** The answers given on the command line (undefined: not given, so asked, or the current value kept). */
export interface SetupFlags {
  baseUrl?: string;
  apiKey?: string;
  model?: string;
  owner?: string;
  audioKeys?: string;
  audioBaseUrl?: string;
  searchKey?: string;
  searchBaseUrl?: string;
  access?: string;
  dashboard?: 'keep' | 'new' | 'off';
  pairingPhone?: string;
  /** Accept the current or default value of everything not given; never ask. */
  yes: boolean;
  /** Write without checking the keys (an offline machine). */
  noCheck: boolean;
  /** Run by `npm start` on a fresh clone: the bot starts right after, so the last words say that instead of "Next". */
  thenStart: boolean;
  help: boolean;
  /** The access mode suggested for a new config.json. */
  defaultAccess: string;
}

export const USAGE = `npm run setup [-- <flags>]

Asks step by step in a terminal; every question also has a flag (scripts, CI). Run again, it offers the current
values and keeps what a flag does not change. Writes .env (mode 0600) and config.json (or ENV_FILE / CONFIG_FILE).

  --base-url <url>        the AI gateway's OpenAI-compatible base URL (e.g. https://api.openai.com/v1)
  --api-key <key>         its key (checked with one tiny real request)
  --model <name>          its model
  --owner <number>[,…]    your WhatsApp number(s), country code first, digits: config.json "owners"
  --access <mode>         who may chat privately: pairing (default for a new config), owners, allowList, everyone
  --audio-keys <k>[,…]    audio provider key(s) for voice notes (empty: none)
  --audio-base-url <url>  the audio provider's base URL (default Groq's)
  --search-key <key>      web search key (Tavily-style; empty: none)
  --search-base-url <url> the search provider's base URL
  --dashboard <keep|new|off>  the /config dashboard token: keep it, make a new one (shown once), or turn it off
  --pairing-phone <number>    link with a pairing code for this number instead of a QR (empty: QR)
  --yes, -y               do not ask: take the current or default value of everything not given
  --no-check              write without checking the keys
  --then-start            (npm start uses it on a fresh clone) the bot starts right after: end by saying so
  --help, -h              this text

A key given as a flag is visible to other users of this machine (ps) and kept in the shell history; typed at the
prompt it is hidden.`;

/** Parses set-up's command line; throws AnswerError naming a flag it does not know or a bad value. */
export function parseSetupFlags(argv: string[]): SetupFlags {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        'base-url': { type: 'string' },
        'api-key': { type: 'string' },
        model: { type: 'string' },
        owner: { type: 'string' },
        'audio-keys': { type: 'string' },
        'audio-base-url': { type: 'string' },
        'search-key': { type: 'string' },
        'search-base-url': { type: 'string' },
        access: { type: 'string' },
        dashboard: { type: 'string' },
        'pairing-phone': { type: 'string' },
        yes: { type: 'boolean', short: 'y', default: false },
        'no-check': { type: 'boolean', default: false },
        'then-start': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    throw new AnswerError((err as Error).message);
  }
  const v = parsed.values;
  const dashboard = v.dashboard?.trim();
  if (dashboard !== undefined && dashboard !== 'keep' && dashboard !== 'new' && dashboard !== 'off') throw new AnswerError(`--dashboard must be keep, new or off; got "${dashboard}"`);
  return {
    baseUrl: v['base-url'] !== undefined ? baseUrlFrom(v['base-url']) : undefined,
    apiKey: v['api-key']?.trim() || undefined,
    model: v.model?.trim() || undefined,
    owner: v.owner,
    audioKeys: v['audio-keys'],
    audioBaseUrl: v['audio-base-url'] !== undefined ? baseUrlFrom(v['audio-base-url']) : undefined,
    searchKey: v['search-key'],
    searchBaseUrl: v['search-base-url']?.trim() ? baseUrlFrom(v['search-base-url']) : v['search-base-url'] === undefined ? undefined : '',
    access: v.access,
    dashboard,
    pairingPhone: v['pairing-phone'],
    yes: v.yes ?? false,
    noCheck: v['no-check'] ?? false,
    thenStart: v['then-start'] ?? false,
    help: v.help ?? false,
    defaultAccess: DEFAULT_ACCESS_MODE,
  };
}
