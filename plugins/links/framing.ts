import type { QuotedContentInput } from '../../core/index.js';
import type { LinkRead } from './read-link.js';

/**
 * What a link's content is and who wrote it, for the model: the one place a read link is described. The core frames
 * it (`respond`'s `content`, a tool's outside text): a user-role block, markers its text cannot close, never
 * instructions, never in the history.
 */
export function linkContent(read: LinkRead): QuotedContentInput {
  return {
    source: `${read.label} “${read.title}” at ${read.url}`,
    author: `the site ${new URL(read.url).hostname}`,
    text: read.text,
    ...(read.note ? { note: `Only part of it is given: ${read.note}; say so if it matters.` } : {}),
  };
}

/** A read link as the `fetch_url` tool's result: what it is and where from, then its text (the core frames it). */
export function toolResult(read: LinkRead): string {
  const c = linkContent(read);
  return [`${c.source}${c.note ? ` (${c.note})` : ''}`, '', c.text].join('\n');
}
