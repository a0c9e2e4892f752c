import { createRequire } from 'node:module';

// A CommonJS package, required: an ES import of one has Node parse its source for export names and wrap it (~5 ms of
// a start for each such package).
const { closest, distance } = createRequire(import.meta.url)('fastest-levenshtein') as typeof import('fastest-levenshtein');

/**
 * Every setting the core reads from `.env` (plugins declare theirs in `settings`). A name in `.env` that is neither
 * here, nor a plugin's, nor a numbered audio key is a typo the bot would silently ignore.
 */
export const CORE_SETTING_NAMES: readonly string[] = [
  'PRIMARY_GATEWAY_API_KEY', 'PRIMARY_GATEWAY_BASE_URL', 'PRIMARY_GATEWAY_MODEL', 'PRIMARY_GATEWAY_PREMIUM_MODEL',
  'API_KEY', 'BASE_URL', 'MODEL', 'PREMIUM_MODEL',
  'AUDIO_API_KEYS', 'AUDIO_BASE_URL', 'AUDIO_CHAT_MODEL',
  'PUBLIC_BASE_URL', 'SITE_PORT', 'CONFIG_TOKEN', 'WEB_ALLOWED_HOSTS', 'METRICS_TOKEN',
  'PAIRING_PHONE', 'BAILEYS_LOG_LEVEL', 'WA_WEBSOCKET_URL',
  'DATA_DIR', 'CONFIG_FILE', 'UPSTREAM_TIMEOUT_MS', 'STARTUP_PROBE', 'LOG_LEVEL', 'LOG_FORMAT', 'FFMPEG_PATH',
  'JAIL_UID', 'JAIL_GID', 'EGRESS_ALLOW_PRIVATE_HOSTS',
];

/** `AUDIO_API_KEY_1`, `AUDIO_API_KEY_FALLBACK_2` …: the numbered audio keys. */
const NUMBERED = /^AUDIO_API_KEY_(?:FALLBACK_)?\d+$/;
const ASSIGNMENT = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/;

/** The setting a misspelt name most likely meant, when it is close enough to be a typo (not another word). */
function likelyMeant(name: string, known: readonly string[]): string | undefined {
  if (!known.length) return undefined;
  const upper = name.toUpperCase();
  const best = closest(upper, known as string[]);
  return distance(upper, best) <= Math.max(2, Math.floor(best.length / 4)) ? best : undefined;
}

/**
 * What in a `.env` text the bot would ignore without a word: names it does not read (with the setting it most likely
 * meant) and lines that are not `NAME=value`. One line per problem, with the line number; never a value (a junk
 * line may be a pasted key).
 *
 * @example envFileProblems('PRIMARY_GATWAY_MODEL=x\n', names) // ['line 1: PRIMARY_GATWAY_MODEL is not a setting the bot reads (did you mean PRIMARY_GATEWAY_MODEL?)']
 */
export function envFileProblems(text: string, knownNames: Iterable<string>): string[] {
  const known = [...new Set(knownNames)];
  const problems: string[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (!line.trim() || line.trim().startsWith('#')) continue;
    const assignment = ASSIGNMENT.exec(line);
    if (!assignment) {
      problems.push(`line ${i + 1} is not NAME=value and is ignored`);
      continue;
    }
    const lineNo = i + 1;
    // A quoted value may go on over several lines (dotenv reads it so): skip to its closing quote.
    const value = assignment[2].trim();
    const quote = value[0];
    if ((quote === '"' || quote === "'" || quote === '`') && !value.slice(1).includes(quote)) {
      while (i + 1 < lines.length && !lines[i + 1].includes(quote)) i++;
      i++;
    }
    const name = assignment[1];
    if (known.includes(name) || NUMBERED.test(name)) continue;
    if (name === 'ENV_FILE') {
      problems.push(`line ${lineNo}: ENV_FILE is read from the real environment only (it names this file)`);
      continue;
    }
    const meant = likelyMeant(name, known);
    problems.push(`line ${lineNo}: ${name} is not a setting the bot reads${meant ? ` (did you mean ${meant}?)` : ''}`);
  }
  return problems;
}
