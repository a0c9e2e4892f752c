import { Lexer, type Token, type Tokens } from 'marked';

/**
 * The model's Markdown as WhatsApp shows it, converted deterministically (weaker models ignore "use WhatsApp
 * formatting" in the prompt): `**x**`/`__x__` → `*x*`, `*x*`/`_x_` → `_x_`, `~~x~~` → `~x~`, `# Heading` → `*Heading*`,
 * `[text](url)` → `text (url)`, a table → one readable line per row, lists kept, code blocks and inline code exactly as
 * written. Parsed with marked's lexer (a GFM token stream carrying each token's raw text), so a star inside code, a
 * snake_case name or an escaped `\*` is never taken for formatting. Text that fails to parse is sent as it came.
 *
 * @example
 * toWhatsApp('## Plan\n**Do** [this](https://x.y)') // '*Plan*\n\n*Do* this (https://x.y)'
 */
export function toWhatsApp(markdown: string): string {
  try {
    return blocks(Lexer.lex(markdown, { gfm: true }), '\n\n').replace(/\n{3,}/g, '\n\n').replace(/^\n+|\s+$/g, '');
  } catch {
    return markdown;
  }
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
      // Untouched: the fence, its language and every character inside, as the model wrote them.
      return token.raw.replace(/\n+$/, '');
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
  for (const token of tokens ?? []) {
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
        out += inBold ? inner : `*${inner}*`;
        break;
      }
      case 'em':
        out += `_${inline((token as Tokens.Em).tokens, inBold)}_`;
        break;
      case 'del':
        out += `~${inline((token as Tokens.Del).tokens, inBold)}~`;
        break;
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
  }
  return out;
}
