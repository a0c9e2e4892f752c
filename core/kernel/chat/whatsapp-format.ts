import { createRequire } from 'node:module';
import type { Token, Tokens } from 'marked';

type Marked = typeof import('marked');

/**
 * marked (52 KB, and its rules built as it loads) is needed by the first answer with Markdown in it, not by a start:
 * where Node can require an ES module (20.19+) it loads then, synchronously; on an older Node, with this module.
 */
let lexer: Marked['Lexer'] | undefined = process.features.require_module ? undefined : (await import('marked')).Lexer;
const markdownLexer = (): Marked['Lexer'] => (lexer ??= (createRequire(import.meta.url)('marked') as Marked).Lexer);

/**
 * The model's Markdown as WhatsApp shows it, converted deterministically (weaker models ignore "use WhatsApp
 * formatting" in the prompt): `**x**`/`__x__` → `*x*`, `*x*`/`_x_` → `_x_`, `~~x~~` → `~x~`, `# Heading` → `*Heading*`,
 * `[text](url)` → `text (url)`, a table → one readable line per row, lists kept, code blocks and inline code exactly as
 * written. A bold, italic or struck run glued to a letter or digit (`**Bold**text`) loses its marks, not its words:
 * WhatsApp formats only at a word's edge and would show the stars. Parsed with marked's lexer (a GFM token stream carrying each token's raw text), so a star inside code, a
 * snake_case name or an escaped `\*` is never taken for formatting. Text that fails to parse is sent as it came.
 *
 * @example
 * toWhatsApp('## Plan\n**Do** [this](https://x.y)') // '*Plan*\n\n*Do* this (https://x.y)'
 */
export function toWhatsApp(markdown: string): string {
  // Most answers are plain sentences: nothing in them is Markdown, and the parse (10 µs for a line) would give them back
  // as they are.
  return isPlainText(markdown) ? tidy(markdown) : toWhatsAppParsed(markdown);
}

/**
 * Letters, digits, spaces and sentence punctuation only, no line starting with a space, a digit (a numbered list) or a
 * dash (a list, a rule, an underlined heading), no space before a line break (a hard break) and no `www.` (a link
 * GFM finds by itself): text in which Markdown sees nothing but paragraphs. Anything else goes through the parser.
 */
const PLAIN = /^(?![\s\S]*(?:(?:^|\n)[ \p{N}-]| \n|www\.))[\p{L}\p{N} \n,.;:'"?!()\u2019-]*$/iu;
export const isPlainText = (text: string) => PLAIN.test(text);

/** What the conversion does to the whole text last: no more than one blank line in a row, none at the start or end. */
const tidy = (text: string) => text.replace(/\n{3,}/g, '\n\n').replace(/^\n+/, '').trimEnd();

/** `toWhatsApp` through the Markdown parser, whatever the text (the plain-text shortcut gives the same for plain text). */
export function toWhatsAppParsed(markdown: string): string {
  let out = '';
  markdownPieces(markdown).forEach((piece, i) => {
    // Between pieces: a paragraph break where blank lines were, else the line break or space that was cut.
    if (i > 0) out += piece.before.split('\n').length > 2 ? '\n\n' : piece.before;
    out += piece.code ? codeBlock(piece.text) : convert(piece.text);
  });
  // (trimEnd, not a `\s+$` pattern: that one is tried again at every character of a long run of spaces.)
  return tidy(out);
}

function convert(markdown: string): string {
  try {
    return blocks(markdownLexer().lex(markdown, { gfm: true }), '\n\n');
  } catch {
    return markdown;
  }
}

/**
 * The most characters the Markdown parser gets at once. marked takes more than linear time on some texts (long runs
 * of `_` or `*` delimiters, deeply nested quotes), so a long answer is parsed in pieces of at most this size, cut
 * where a block ends: the work then grows linearly with the answer's length. An answer this short is parsed whole.
 */
export const PARSE_PIECE_CHARS = 2000;

/** A piece of an answer parsed on its own: `before` is what joins it to the previous piece's output. */
export interface MarkdownPiece {
  text: string;
  before: string;
  /** A fenced code block longer than a piece: kept exactly as written, never parsed. */
  code: boolean;
}

/**
 * `markdown` in pieces of at most `max` characters, for parsing one by one: whole blocks (paragraphs, lists, tables,
 * fenced code — blank lines inside a fence do not end it) packed together while they fit; a longer block is cut at a
 * line break, else a space, in its second half (else where it must). Joined by their `before`, the pieces are the text.
 */
export function markdownPieces(markdown: string, max = PARSE_PIECE_CHARS): MarkdownPiece[] {
  if (markdown.length <= max) return [{ text: markdown, before: '', code: false }];
  const pieces: MarkdownPiece[] = [];
  let packed: string | undefined;
  let packedBefore = '';
  const flush = () => {
    if (packed !== undefined) pieces.push({ text: packed, before: packedBefore, code: false });
    packed = undefined;
  };
  for (const block of markdownBlocks(markdown)) {
    const before = pieces.length || packed !== undefined ? block.before : '';
    if (packed !== undefined && packed.length + block.before.length + block.text.length <= max) {
      packed += block.before + block.text;
      continue;
    }
    flush();
    if (block.text.length <= max) {
      packed = block.text;
      packedBefore = before;
    } else if (block.fenced) {
      pieces.push({ text: block.text, before, code: true });
    } else {
      cutLong(block.text, max).forEach((part, i) => pieces.push({ text: part.text, before: i === 0 ? before : part.before, code: false }));
    }
  }
  flush();
  return pieces;
}

/**
 * The blocks of `markdown` (separated by blank lines outside fenced code), each with exactly the text that came
 * between it and the previous one (line breaks and blank lines), so nothing is lost.
 */
function markdownBlocks(markdown: string): Array<{ text: string; before: string; fenced: boolean }> {
  const blocks: Array<{ text: string; before: string; fenced: boolean }> = [];
  let blanks: string[] = [];
  let current: string[] = [];
  let fenced = false;
  let fence: string | undefined;
  const end = () => {
    if (!current.length) return;
    blocks.push({ text: current.join('\n'), before: (blocks.length ? '\n' : '') + blanks.map((b) => `${b}\n`).join(''), fenced });
    current = [];
    blanks = [];
    fenced = false;
  };
  for (const line of markdown.split('\n')) {
    const opener = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== undefined) {
      current.push(line);
      if (opener && opener[0] === fence[0] && opener.length >= fence.length && !line.trim().slice(opener.length).trim()) fence = undefined;
      continue;
    }
    if (!line.trim()) {
      end();
      blanks.push(line);
      continue;
    }
    if (opener) {
      end();
      fence = opener;
      fenced = true;
    }
    current.push(line);
  }
  end();
  // Blank lines at the very end: the last line has no break after it.
  if (blanks.length) blocks.push({ text: '', before: (blocks.length ? '\n' : '') + blanks.join('\n'), fenced: false });
  return blocks;
}

/** A text longer than `max` in parts of at most `max`: cut at a line break, else a space, in each part's second half. */
function cutLong(text: string, max: number): Array<{ text: string; before: string }> {
  const parts: Array<{ text: string; before: string }> = [];
  let from = 0;
  let before = '';
  while (text.length - from > max) {
    const window = text.slice(from + Math.floor(max / 2), from + max);
    const line = window.lastIndexOf('\n');
    const space = line === -1 ? window.lastIndexOf(' ') : -1;
    const at = line !== -1 ? line : space;
    if (at !== -1) {
      const cut = from + Math.floor(max / 2) + at;
      parts.push({ text: text.slice(from, cut), before });
      before = text[cut]!;
      from = cut + 1;
    } else {
      // Never between the halves of a surrogate pair.
      const hard = /[\uD800-\uDBFF]/.test(text[from + max - 1] ?? '') ? from + max - 1 : from + max;
      parts.push({ text: text.slice(from, hard), before });
      before = '';
      from = hard;
    }
  }
  parts.push({ text: text.slice(from), before });
  return parts;
}

/**
 * A code block as written, every character inside untouched, but a fence's language word dropped: WhatsApp has no
 * syntax colouring and would show `python` as the block's first line.
 */
function codeBlock(raw: string): string {
  const text = raw.replace(/\n+$/, '');
  const fence = /^ {0,3}(`{3,}|~{3,})[^\n]*/.exec(text);
  return fence ? fence[0].replace(/^( {0,3}(?:`{3,}|~{3,}))[^\n]*$/, '$1') + text.slice(fence[0].length) : text;
}

/** Block tokens joined by `separator` (blank lines between paragraphs; single lines inside a list item). */
function blocks(tokens: Token[], separator: string): string {
  const out: string[] = [];
  for (const token of tokens) {
    const text = block(token);
    if (text !== undefined) out.push(text);
  }
  return out.join(separator);
}

function block(token: Token): string | undefined {
  switch (token.type) {
    case 'space':
    case 'def':
      return undefined;
    case 'heading':
      // A heading is bold already: bold inside it would close the stars early.
      return `*${inline((token as Tokens.Heading).tokens, true)}*`;
    case 'paragraph':
      return inline((token as Tokens.Paragraph).tokens);
    case 'text': {
      const t = token as Tokens.Text;
      return t.tokens ? inline(t.tokens) : t.text;
    }
    case 'code':
      return codeBlock(token.raw);
    case 'list':
      return list(token as Tokens.List);
    case 'table':
      return table(token as Tokens.Table);
    case 'blockquote':
      return blocks((token as Tokens.Blockquote).tokens, '\n\n')
        .split('\n')
        .map((line) => `> ${line}`)
        .join('\n');
    case 'hr':
      return '———';
    default:
      // html and anything newer than this code: the model's own text, never lost.
      return token.raw.replace(/\n+$/, '');
  }
}

/** A list stays a list: each item behind its own marker (as written, `+` shown as `-`), nested lists indented. */
function list(token: Tokens.List): string {
  return token.items
    .map((item, i) => {
      const written = /^\s*([-+*]|\d{1,9}[.)])/.exec(item.raw)?.[1];
      const marker = token.ordered ? (written ?? `${Number(token.start || 1) + i}.`) : written === '*' ? '*' : '-';
      const box = item.task ? (item.checked ? '[x] ' : '[ ] ') : '';
      const body = blocks(item.tokens.filter((t) => t.type !== 'checkbox'), '\n');
      const indent = ' '.repeat(marker.length + 1);
      return `${marker} ${box}${body.split('\n').join(`\n${indent}`)}`;
    })
    .join('\n');
}

/** A table as lines a phone shows well: the header in bold, then one line per row, each cell named by its column. */
function table(token: Tokens.Table): string {
  const headers = token.header.map((cell) => inline(cell.tokens));
  const lines = [`*${token.header.map((cell) => inline(cell.tokens, true)).join(' · ')}*`];
  for (const row of token.rows) {
    const cells = row.map((cell, i) => {
      const value = inline(cell.tokens);
      return i === 0 || !headers[i] ? value : `${headers[i]}: ${value}`;
    });
    lines.push(`- ${cells.join(' · ')}`);
  }
  return lines.join('\n');
}

/** Inline tokens as WhatsApp text; `inBold`: already inside stars (a heading), so bold adds none. */
function inline(tokens: Token[] | undefined, inBold = false): string {
  let out = '';
  const list = tokens ?? [];
  list.forEach((token, i) => {
    // WhatsApp shows a marker as formatting only at a word's edge: `*Bold*text` would show its stars. A run glued to
    // a letter or digit (`**Bold**text`, `un**believ**able`, CJK text without spaces) keeps its words, not its marks.
    const glued = WORD_END.test(out) || WORD_START.test(list[i + 1]?.raw ?? '');
    switch (token.type) {
      case 'text': {
        const t = token as Tokens.Text;
        out += t.tokens ? inline(t.tokens, inBold) : t.text;
        break;
      }
      case 'escape':
        out += (token as Tokens.Escape).text;
        break;
      case 'strong': {
        const inner = inline((token as Tokens.Strong).tokens, true);
        out += inBold || glued ? inner : `*${inner}*`;
        break;
      }
      case 'em':
        // `2*3*4` is arithmetic, not emphasis: stars between two letters or digits stay as written.
        if (token.raw.startsWith('*') && WORD_END.test(out)) out += token.raw;
        else if (glued) out += inline((token as Tokens.Em).tokens, inBold);
        else out += `_${inline((token as Tokens.Em).tokens, inBold)}_`;
        break;
      case 'del': {
        const inner = inline((token as Tokens.Del).tokens, inBold);
        out += glued ? inner : `~${inner}~`;
        break;
      }
      case 'codespan':
        out += token.raw;
        break;
      case 'br':
        out += '\n';
        break;
      case 'link': {
        const link = token as Tokens.Link;
        const text = inline(link.tokens, inBold);
        // A bare address or <autolink> is its own text: shown once.
        out += text === link.href || `mailto:${text}` === link.href || !text.trim() ? text || link.href : `${text} (${link.href})`;
        break;
      }
      case 'image': {
        const image = token as Tokens.Image;
        out += image.text ? `${image.text} (${image.href})` : image.href;
        break;
      }
      default:
        out += token.raw;
    }
  });
  return out;
}

const WORD_END = /[\p{L}\p{N}]$/u;
const WORD_START = /^[\p{L}\p{N}]/u;
