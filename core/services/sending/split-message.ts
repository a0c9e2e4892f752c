/** About as long as a WhatsApp message stays readable (WhatsApp itself folds longer ones behind "Read more"). */
export const MESSAGE_LIMIT = 4000;

/** A place to cut: the whitespace run `[start, end)` that goes, and how good a boundary it is (lower is better). */
interface Cut {
  start: number;
  end: number;
  rank: number;
}

const PARAGRAPH = 0;
const LINE = 1;
const SENTENCE = 2;
const WORD = 3;
/** A line break inside a code block: only when the block alone is longer than a message. */
const CODE_LINE = 4;

/**
 * Splits a long message into parts of at most `limit` characters: at a paragraph boundary where one falls in the
 * second half of the part, else a line break, a sentence's end, a space — never inside a word, a code block
 * (```…```), inline code or a link's `text (url)`. Only the whitespace at each cut goes; nothing else is lost. A code
 * block longer than a part is cut at one of its line breaks; a single "word" longer than a part (no whitespace at
 * all) is cut where it must.
 *
 * @example
 * splitMessage(longAnswer) // ['first paragraphs…', 'the rest…']
 */
export function splitMessage(text: string, limit = MESSAGE_LIMIT): string[] {
  if (text.length <= limit) return [text];
  const cuts = cutsOf(text);
  const parts: string[] = [];
  let from = 0;
  while (text.length - from > limit) {
    const end = from + limit;
    const cut = bestCut(cuts, from, end, from + Math.floor(limit / 2));
    if (cut) {
      parts.push(text.slice(from, cut.start));
      from = cut.end;
    } else {
      // No whitespace at all in a whole part: cut, but never between the halves of a surrogate pair.
      const hard = /[\uD800-\uDBFF]/.test(text[end - 1] ?? '') ? end - 1 : end;
      parts.push(text.slice(from, hard));
      from = hard;
    }
  }
  if (from < text.length) parts.push(text.slice(from));
  return parts.filter((part) => part.trim());
}

/** The best cut whose part ends within `(from, end]`: the best rank in the part's second half, else anywhere. */
function bestCut(cuts: Cut[], from: number, end: number, half: number): Cut | undefined {
  let best: Cut | undefined;
  let fallback: Cut | undefined;
  for (const cut of cuts) {
    if (cut.start <= from) continue;
    if (cut.start > end) break;
    if (cut.start >= half) {
      if (!best || cut.rank <= best.rank) best = cut;
    } else if (cut.rank < CODE_LINE && (!fallback || cut.rank <= fallback.rank)) fallback = cut;
  }
  // A code block's own line breaks come last: a cut before the block, however early, keeps it whole.
  if (best && best.rank === CODE_LINE && fallback) return fallback;
  return best ?? fallback;
}

/** Every whitespace run of `text` where a message may end, ranked, outside code and links. */
function cutsOf(text: string): Cut[] {
  const code = codeRanges(text);
  const links = linkRanges(text);
  const inside = (ranges: Array<[number, number]>, at: number) => ranges.some(([s, e]) => at > s && at < e);
  const cuts: Cut[] = [];
  for (const match of text.matchAll(/\s+/g)) {
    const start = match.index;
    const end = start + match[0].length;
    const run = match[0];
    const inCode = inside(code, start);
    if (inCode && !run.includes('\n')) continue;
    if (inside(links, start)) continue;
    let rank: number;
    if (inCode) rank = CODE_LINE;
    else if (/\n[^\S\n]*\n/.test(run)) rank = PARAGRAPH;
    else if (run.includes('\n')) rank = LINE;
    else if (/[.!?…:;]/.test(text[start - 1] ?? '')) rank = SENTENCE;
    else rank = WORD;
    // A code block's own line breaks keep the fence lines whole: never cut right after an opening fence's language.
    cuts.push({ start, end: inCode ? start + 1 : end, rank });
  }
  return cuts;
}

/** Fenced code blocks (from the opening ``` to the closing one, or the end) and inline `code` spans. */
function codeRanges(text: string): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  const fence = /^[^\S\n]{0,3}(```|~~~)/gm;
  let open: number | undefined;
  let marker = '';
  for (const match of text.matchAll(fence)) {
    if (open === undefined) {
      open = match.index;
      marker = match[1];
    } else if (match[1] === marker) {
      const close = text.indexOf('\n', match.index);
      ranges.push([open, close === -1 ? text.length : close]);
      open = undefined;
    }
  }
  if (open !== undefined) ranges.push([open, text.length]);
  for (const match of text.matchAll(/`[^`\n]+`/g)) {
    if (!ranges.some(([s, e]) => match.index >= s && match.index < e)) ranges.push([match.index, match.index + match[0].length]);
  }
  return ranges;
}

/** A link as the formatter writes it, `text (url)`: the url with its parentheses and the word before it. */
function linkRanges(text: string): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  for (const match of text.matchAll(/\S+ \((?:https?|mailto|ftp):[^\s)]*\)/g)) ranges.push([match.index, match.index + match[0].length]);
  return ranges;
}
