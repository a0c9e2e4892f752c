/** About as long as a WhatsApp message stays readable (WhatsApp itself folds longer ones behind "Read more"). */
export const MESSAGE_LIMIT = 4000;

/** The longest model answer sent when config.json sets no `ai.maxAnswerChars`: four messages. */
export const DEFAULT_MAX_ANSWER_CHARS = 16_000;

/**
 * `text` cut to at most `max` characters where a paragraph, line or word ends in its last half (else where it must),
 * with the line that says so (`note`, WhatsApp formatting) for the caller to send after it: never silently shortened.
 * A text within `max` comes back as it is, without a note.
 *
 * @example capAnswer(hugeAnswer, 16_000) // { text: 'first 15,9xx characters…', note: '_(My answer was cut here: …)_' }
 */
export function capAnswer(text: string, max: number): { text: string; note?: string } {
  if (text.length <= max) return { text };
  const half = Math.floor(max / 2);
  const window = text.slice(half, max + 1);
  let at = -1;
  for (const boundary of ['\n\n', '\n', ' ']) {
    at = window.lastIndexOf(boundary);
    if (at !== -1) break;
  }
  let end = at === -1 ? max : half + at;
  if (at === -1 && /[\uD800-\uDBFF]/.test(text[end - 1] ?? '')) end--;
  return { text: text.slice(0, end).trimEnd(), note: `_(My answer was cut here: it was longer than the ${max.toLocaleString('en-US')} characters an answer may have.)_` };
}

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
  return split(text, limit, { steps: 0 });
}

/**
 * How many elementary steps splitting `text` takes (cuts looked at, characters marked): the measure the tests use to
 * show the work grows linearly with the text, whatever its shape.
 */
export function splitSteps(text: string, limit = MESSAGE_LIMIT): number {
  const meter = { steps: 0 };
  split(text, limit, meter);
  return meter.steps;
}

interface Meter {
  steps: number;
}

function split(text: string, limit: number, meter: Meter): string[] {
  if (text.length <= limit) return [text];
  const cuts = cutsOf(text, meter);
  const parts: string[] = [];
  let from = 0;
  // Cuts before `from` are never looked at again: each part starts its search where the last one ended.
  const next = { index: 0 };
  while (text.length - from > limit) {
    const end = from + limit;
    const cut = bestCut(cuts, next, from, end, from + Math.floor(limit / 2), meter);
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
function bestCut(cuts: Cut[], next: { index: number }, from: number, end: number, half: number, meter: Meter): Cut | undefined {
  while (next.index < cuts.length && cuts[next.index]!.start <= from) {
    next.index++;
    meter.steps++;
  }
  let best: Cut | undefined;
  let fallback: Cut | undefined;
  for (let i = next.index; i < cuts.length; i++) {
    const cut = cuts[i]!;
    meter.steps++;
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
function cutsOf(text: string, meter: Meter): Cut[] {
  // One mark per character (inside code, inside a link): a look-up per whitespace run instead of a search of ranges.
  const code = new Uint8Array(text.length);
  const links = new Uint8Array(text.length);
  for (const [s, e] of codeRanges(text)) mark(code, s, e, meter);
  for (const [s, e] of linkRanges(text)) mark(links, s, e, meter);
  const cuts: Cut[] = [];
  for (const match of text.matchAll(/\s+/g)) {
    meter.steps++;
    const start = match.index;
    const end = start + match[0].length;
    const run = match[0];
    const inCode = code[start] === 1;
    if (inCode && !run.includes('\n')) continue;
    if (links[start] === 1) continue;
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

/** Marks the positions strictly inside `[s, e]` (a cut exactly at a range's edge is outside it). */
function mark(marks: Uint8Array, s: number, e: number, meter: Meter): void {
  for (let at = s + 1; at < e; at++) {
    marks[at] = 1;
    meter.steps++;
  }
}

/** Fenced code blocks (from the opening ``` to the closing one, or the end) and inline `code` spans outside them. */
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
  // Fences come in order and do not overlap: one pass along them finds whether a span starts inside one.
  const fences = ranges.length;
  let f = 0;
  for (const match of text.matchAll(/`[^`\n]+`/g)) {
    while (f < fences && ranges[f]![1] <= match.index) f++;
    if (f < fences && match.index >= ranges[f]![0]) continue;
    ranges.push([match.index, match.index + match[0].length]);
  }
  return ranges;
}

/**
 * A link as the formatter writes it, `text (url)`: the url with its parentheses and the word before it. Found from
 * the ` (scheme:` each one has, and the word walked back from there: each character is looked at a bounded number
 * of times (a pattern starting with `\S+` would try every start of a long word again).
 */
function linkRanges(text: string): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  for (const match of text.matchAll(/ \((?:https?|mailto|ftp):[^\s)]*\)/g)) {
    let word = match.index;
    while (word > 0 && !/\s/.test(text[word - 1]!)) word--;
    if (word === match.index) continue;
    ranges.push([word, match.index + match[0].length]);
  }
  return ranges;
}
