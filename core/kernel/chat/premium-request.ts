/**
 * Phrases that explicitly ask for the premium model, in English and Indonesian. The premium rule is the core's
 * (DESIGN: the premium model serves one message only when the user asks for it), so chat (plugins/premium) and
 * vision share these defaults; each plugin can override them in its options.
 */
export const DEFAULT_PREMIUM_PHRASES = [
  'use the premium model',
  'use premium model',
  'use the premium',
  'with the premium model',
  'premium model please',
  'pakai model premium',
  'pakai premium',
  'pake model premium',
  'pake premium',
  'gunakan model premium',
  'gunakan premium',
];

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Compiled once per phrase (with its lower case, a cheap first check): this runs on every message. */
const compiled = new Map<string, { lower: string; re: RegExp }>();
function wholePhrase(phrase: string): { lower: string; re: RegExp } {
  let found = compiled.get(phrase);
  if (!found) {
    const lower = phrase.toLowerCase();
    found = { lower, re: new RegExp(`(^|[^\\p{L}\\p{N}])${escape(lower)}($|[^\\p{L}\\p{N}])`, 'u') };
    if (compiled.size < 500) compiled.set(phrase, found);
  }
  return found;
}

/**
 * Looks for an explicit premium request in a caption. Returns the caption without the phrase, and whether it asked.
 *
 * @example
 * premiumRequest('use the premium model: what is this?') // { premium: true, text: 'what is this?' }
 */
export function premiumRequest(text: string, phrases: string[] = DEFAULT_PREMIUM_PHRASES): { premium: boolean; text: string } {
  const lower = text.toLowerCase();
  for (const phrase of phrases) {
    const { lower: words, re } = wholePhrase(phrase);
    // Nearly every message holds no phrase at all: a plain substring search says so before the word-boundary regex.
    if (!lower.includes(words) || !re.test(lower)) continue;
    // Cut the phrase where it stands as words (not inside an earlier word such as "reuse"), keeping its neighbours.
    const rest = text.replace(new RegExp(re.source, 'iu'), (_m, before: string, after: string) => `${before} ${after}`).replace(/^[\s,.:;!-]+|[\s,:;-]+$/g, '').replace(/\s{2,}/g, ' ').trim();
    return { premium: true, text: rest };
  }
  return { premium: false, text };
}
