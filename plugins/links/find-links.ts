import type { MessageContext } from '../../core/index.js';

/** Characters that end a sentence more often than a link: left off the end of a link found in text. */
const TRAILING = /[.,;:!?'"’”»)\]}>]+$/;

/** A link as the cache and the model know it: no fragment (it names a place in the same page). */
export function linkKey(url: URL): string {
  const copy = new URL(url.href);
  copy.hash = '';
  return copy.href;
}

/**
 * The http(s) links in a message's text, in order, each once (fragment ignored). A closing bracket or a full stop at
 * the end belongs to the sentence, unless the link opened that bracket itself (`…/Foo_(bar)`).
 *
 * @example
 * linksIn('see https://example.com/a. and (https://example.com/b)'); // ['https://example.com/a', 'https://example.com/b']
 */
export function linksIn(text: string): URL[] {
  const found: URL[] = [];
  const seen = new Set<string>();
  for (const [raw] of text.matchAll(/\bhttps?:\/\/[^\s<>"'`]+/gi)) {
    let candidate = raw;
    for (;;) {
      const end = TRAILING.exec(candidate);
      if (!end) break;
      const last = candidate.at(-1)!;
      // A link that opened the bracket it ends with keeps it.
      if (last === ')' && count(candidate, '(') >= count(candidate, ')')) break;
      candidate = candidate.slice(0, -1);
    }
    let url: URL;
    try {
      url = new URL(candidate);
    } catch {
      continue;
    }
    if (!url.hostname) continue;
    const key = linkKey(url);
    if (seen.has(key)) continue;
    seen.add(key);
    found.push(url);
  }
  return found;
}

function count(text: string, char: string): number {
  return text.split(char).length - 1;
}

/**
 * The links a message brings to its answer: its own, then those of the text message it replies to (someone's link,
 * asked about in a reply: "what does it say?"). A quoted photo or file is its plugin's; a deleted one brings nothing.
 */
export function linksOf(ctx: Pick<MessageContext<unknown>, 'text' | 'message'>): URL[] {
  const own = linksIn(ctx.text);
  const quoted = ctx.message.quoted;
  if (!quoted || quoted.media || quoted.deleted) return own;
  const seen = new Set(own.map(linkKey));
  return [...own, ...linksIn(quoted.text).filter((url) => !seen.has(linkKey(url)))];
}
