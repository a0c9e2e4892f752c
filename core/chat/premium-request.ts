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

/** Compiled once per phrase: this runs on every message. */
const compiled = new Map<string, RegExp>();
function wholePhrase(phrase: string): RegExp {
  let re = compiled.get(phrase);
  if (!re) {
    re = new RegExp(`(^|[^\\p{L}\\p{N}])${escape(phrase.toLowerCase())}($|[^\\p{L}\\p{N}])`, 'u');
    if (compiled.size < 500) compiled.set(phrase, re);
  }
  return re;
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
    const re = wholePhrase(phrase);
    if (!re.test(lower)) continue;
    // Cut the phrase where it stands as words (not inside an earlier word such as "reuse"), keeping its neighbours.
    const rest = text.replace(new RegExp(re.source, 'iu'), (_m, before: string, after: string) => `${before} ${after}`).replace(/^[\s,.:;!-]+|[\s,:;-]+$/g, '').replace(/\s{2,}/g, ' ').trim();
    return { premium: true, text: rest };
  }
  return { premium: false, text };
}
