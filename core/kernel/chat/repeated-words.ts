import type { ChatMessage } from '../../services/providers/chat-types.js';
import { carriesContent } from './quoted-content.js';

/**
 * How many words in a row an answer must repeat from others' words to count as carrying them: a planted instruction
 * repeated by the model is far longer, while an answer that speaks of a page or a tool's result in its own words
 * (or names a few of its words) is the bot's own and leaves the chat free to act.
 */
export const REPEATED_RUN_WORDS = 8;

const wordsOf = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];

function runsOf(words: string[], n: number): Set<string> {
  const runs = new Set<string>();
  for (let i = 0; i + n <= words.length; i++) runs.add(words.slice(i, i + n).join(' '));
  return runs;
}

/** The text of a message, whatever its content's shape (a string, or parts of which some are text). */
function textOf(message: ChatMessage): string {
  const content = (message as { content?: unknown }).content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : '')).join('\n');
  return '';
}

/**
 * Others' words the model read in this turn: the framed content of people's turns (quotes, documents, pages,
 * summaries, others' facts) and of tool results (what a tool brought in from outside; the bot's own words in a tool
 * result, an error say, are not framed).
 */
export function outsideTexts(messages: ChatMessage[]): string[] {
  return messages.map((m) => (m.role === 'tool' || m.role === 'user' ? textOf(m) : '')).filter(carriesContent);
}

/** True when `answer` repeats at least `run` words in a row of one of `sources` (case and punctuation aside). */
export function repeatsWordsOf(answer: string, sources: string[], run = REPEATED_RUN_WORDS): boolean {
  const said = runsOf(wordsOf(answer), run);
  if (!said.size) return false;
  for (const source of sources) {
    const words = wordsOf(source);
    for (let i = 0; i + run <= words.length; i++) if (said.has(words.slice(i, i + run).join(' '))) return true;
  }
  return false;
}

/**
 * True when a tool call's arguments repeat others' words that an earlier answer repeated: a run of `run` of their
 * words (all of them when fewer, at least three) stands in one of `answers` in the same order. A later turn may act in
 * the asker's own words, never on words planted in a page or a quote that the bot once repeated.
 */
export function argumentsRepeat(args: string, answers: string[], run = REPEATED_RUN_WORDS): boolean {
  const n = Math.min(run, wordsOf(args).length);
  return n >= 3 && repeatsWordsOf(args, answers, n);
}
