import { expect } from 'chai';
import { isPlainText, markdownPieces, PARSE_PIECE_CHARS, toWhatsApp, toWhatsAppParsed } from '../../../core/kernel/chat/whatsapp-format.js';
import { MESSAGE_LIMIT, splitMessage, splitSteps } from '../../../core/services/sending/split-message.js';

describe('WhatsApp formatting of model answers', () => {
  it('turns **bold** and __bold__ into *bold*', () => {
    expect(toWhatsApp('a **strong** and __also strong__ word')).to.equal('a *strong* and *also strong* word');
  });

  it('turns *italic* (and _italic_) into _italic_', () => {
    expect(toWhatsApp('an *italic* and _another_ one')).to.equal('an _italic_ and _another_ one');
  });

  it('turns ~~struck~~ into ~struck~', () => {
    expect(toWhatsApp('was ~~wrong~~ right')).to.equal('was ~wrong~ right');
  });

  it('turns a heading of any level into a bold line, without nested stars', () => {
    expect(toWhatsApp('# Title\n\ntext\n\n### A **big** step')).to.equal('*Title*\n\ntext\n\n*A big step*');
  });

  it('turns [text](url) into text (url), and shows a bare address once', () => {
    expect(toWhatsApp('see [the docs](https://example.org/a_b?x=1) or https://example.org/c_d')).to.equal('see the docs (https://example.org/a_b?x=1) or https://example.org/c_d');
  });

  it('turns a table into readable lines: the header in bold, each row with its cells named by column', () => {
    const table = '| City | Temp | Sky |\n|---|---|---|\n| Oslo | 3 °C | **rain** |\n| Rome | 18 °C | sun |';
    expect(toWhatsApp(table)).to.equal('*City · Temp · Sky*\n- Oslo · Temp: 3 °C · Sky: *rain*\n- Rome · Temp: 18 °C · Sky: sun');
  });

  it('keeps lists as lists: bullets, numbers as written, nesting and task boxes', () => {
    expect(toWhatsApp('- one **1**\n- two\n  - two and a half\n\n3. third\n4. fourth\n\n* star\n\n- [x] done')).to.equal(
      '- one *1*\n- two\n  - two and a half\n\n3. third\n4. fourth\n\n* star\n\n- [x] done',
    );
  });

  it('leaves code blocks and inline code exactly as written', () => {
    const block = '```\ndef f(**kwargs):\n    return __name__  # ~~not struck~~ [x](y)\n```';
    expect(toWhatsApp(`Run \`a **b** _c_\` then:\n\n${block}\n\nDone **now**.`)).to.equal(`Run \`a **b** _c_\` then:\n\n${block}\n\nDone *now*.`);
    // A fence's language word is dropped (WhatsApp would show it as the block's first line); the code stays as written.
    expect(toWhatsApp('```python\nprint(2*3*4)\n```')).to.equal('```\nprint(2*3*4)\n```');
    expect(toWhatsApp('~~~ js title="x"\nlet a = 1;\n~~~')).to.equal('~~~\nlet a = 1;\n~~~');
    expect(toWhatsApp('    indented **code**\n    stays')).to.equal('    indented **code**\n    stays');
  });

  it('leaves plain text alone: snake_case, escaped stars, arithmetic, quotes', () => {
    expect(toWhatsApp('my_file_name is 5 * 3 = 15, \\*not italic\\*')).to.equal('my_file_name is 5 * 3 = 15, *not italic*');
    expect(toWhatsApp('> quoted **line**')).to.equal('> quoted *line*');
    expect(toWhatsApp('2*3*4 = 24, and *this* is italic')).to.equal('2*3*4 = 24, and _this_ is italic');
  });

  it('a bold, italic or struck run glued to a letter or digit keeps its words without marks (WhatsApp would show the stars)', () => {
    expect(toWhatsApp('**Bold**text and **more** here')).to.equal('Boldtext and *more* here');
    expect(toWhatsApp('un**believ**able, 3**x**')).to.equal('unbelievable, 3x');
    expect(toWhatsApp('重要**事项**请看')).to.equal('重要事项请看');
    expect(toWhatsApp('*so*what and ~~old~~new')).to.equal('sowhat and oldnew');
    // Next to punctuation or a space WhatsApp formats it: the marks stay.
    expect(toWhatsApp('(**Bold**), **Bold**. *it*!')).to.equal('(*Bold*), *Bold*. _it_!');
  });
});

describe('the plain-text shortcut of the WhatsApp formatting (answers with no Markdown skip the parser)', () => {
  it('takes plain sentences, and gives them back exactly as the parser does', () => {
    const text = "\n\nHere is my answer: the train leaves at 8 from platform 3, doesn't it?\nYes (it’s well-known).\n\n\n\nSee you!\n";
    expect(isPlainText(text)).to.equal(true);
    expect(toWhatsApp(text)).to.equal(toWhatsAppParsed(text)).and.to.equal("Here is my answer: the train leaves at 8 from platform 3, doesn't it?\nYes (it’s well-known).\n\nSee you!");
  });

  it('leaves every text in which Markdown sees more than paragraphs to the parser', () => {
    const markdown = ['**bold**', 'snake_case', '`code`', '# heading', 'a [link](https://x.y)', 'see www.example.com', 'mail a@b.co', '1. first', '2) second', '- item', 'Title\n---', 'Title\n-', '  indented', 'hard  \nbreak', '> quote', 'a | b', 'x &amp; y', 'a\\*b', 'tab\there', '~~gone~~', '<b>html</b>', 'cost: 5 + 3 = 8'];
    for (const text of markdown) expect(isPlainText(text), JSON.stringify(text)).to.equal(false);
  });

  it('gives the same as the parser for 6,000 random plain texts (letters, digits, punctuation, spaces and line breaks)', () => {
    const alphabet = ['a', 'Z', 'é', 'ß', '1', '9', ' ', ' ', '\n', '\n', ',', '.', ';', ':', "'", '"', '?', '!', '(', ')', '’', '-', 'w', 'W'];
    let seed = 48;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    let plain = 0;
    for (let i = 0; i < 6_000; i++) {
      let text = random() < 0.1 ? 'www' : '';
      for (let n = 1 + Math.floor(random() * 40); n > 0; n--) text += alphabet[Math.floor(random() * alphabet.length)];
      if (!isPlainText(text)) continue;
      plain++;
      expect(toWhatsApp(text), JSON.stringify(text)).to.equal(toWhatsAppParsed(text));
    }
    expect(plain, 'the shortcut was taken (the check is not empty)').to.be.greaterThan(1_500);
  });
});

describe('splitting long messages', () => {
  const words = (n: number, seed: string) => Array.from({ length: n }, (_, i) => `${seed}${i}`).join(' ');
  const sameText = (parts: string[], text: string) => expect(parts.join(' ').replace(/\s+/g, ' ')).to.equal(text.replace(/\s+/g, ' '));

  it('leaves a message under the limit whole', () => {
    const text = words(100, 'w');
    expect(splitMessage(text)).to.deep.equal([text]);
  });

  it('cuts at paragraph boundaries into parts of at most ~4,000 characters, losing nothing', () => {
    // Each paragraph has line breaks of its own: a cut there would be a worse one.
    const paragraphs = Array.from({ length: 12 }, (_, i) => `Paragraph ${i}.\n${words(60, `p${i}a`)}\n${words(60, `p${i}b`)}.`);
    const text = paragraphs.join('\n\n');
    const parts = splitMessage(text);
    expect(parts.length).to.be.greaterThan(1);
    for (const part of parts) {
      expect(part.length).to.be.at.most(MESSAGE_LIMIT);
      // Each part is made of whole paragraphs.
      for (const piece of part.split('\n\n')) expect(paragraphs).to.include(piece);
    }
    sameText(parts, text);
  });

  it('no part is longer than 4,000 characters, wherever the space, line or paragraph break falls around the limit', () => {
    expect(MESSAGE_LIMIT).to.equal(4000);
    expect(splitMessage('x'.repeat(4000)), 'exactly the limit stays whole').to.deep.equal(['x'.repeat(4000)]);
    expect(splitMessage('x'.repeat(4001)).map((p) => p.length), 'one past it is cut').to.deep.equal([4000, 1]);
    for (const gap of [' ', '\n', '\n\n']) {
      for (let at = MESSAGE_LIMIT - 3; at <= MESSAGE_LIMIT + 3; at++) {
        const text = `${'x'.repeat(at)}${gap}${'y'.repeat(3000)} ${'z'.repeat(5000)}`;
        const parts = splitMessage(text);
        for (const part of parts) expect(part.length, `a break of ${JSON.stringify(gap)} at ${at}`).to.be.at.most(MESSAGE_LIMIT);
        expect(parts.join('').replace(/\s/g, ''), `nothing but whitespace lost (break at ${at})`).to.equal(text.replace(/\s/g, ''));
      }
    }
  });

  it('never cuts inside a word, even in one paragraph without line breaks', () => {
    const text = words(2000, 'word');
    const parts = splitMessage(text);
    expect(parts.length).to.be.greaterThan(1);
    const all = new Set(text.split(' '));
    for (const part of parts) for (const word of part.split(' ')) expect(all.has(word), word).to.equal(true);
    sameText(parts, text);
  });

  it('never cuts inside a code block that fits a message: the cut comes before it', () => {
    // Blank lines inside the block: paragraph-like breaks that must not count as paragraphs.
    const code = '```\n' + Array.from({ length: 60 }, (_, i) => `line ${i} = compute(${i}) + other(${i})${i % 5 === 4 ? '\n' : ''}`).join('\n') + '\n```';
    const text = `${words(400, 'intro')}\n\n${code}\n\n${words(50, 'after')}`;
    expect(text.length).to.be.greaterThan(MESSAGE_LIMIT);
    const parts = splitMessage(text);
    expect(parts.length).to.be.greaterThan(1);
    expect(parts.some((p) => p.includes(code)), 'the code block whole in one part').to.equal(true);
    sameText(parts, text);
  });

  it('never cuts between a link text and its address', () => {
    const link = 'the report (https://example.org/reports/2024?id=77)';
    const filler = words(1000, 'x');
    const text = `${filler.slice(0, MESSAGE_LIMIT - 30)} ${link} ${filler}`;
    expect(text.indexOf(link)).to.be.within(MESSAGE_LIMIT - 40, MESSAGE_LIMIT - 20);
    const parts = splitMessage(text);
    expect(parts.some((p) => p.includes('report (https://example.org/reports/2024?id=77)'))).to.equal(true);
    sameText(parts, text);
  });
});

/**
 * Hostile shapes of a long answer (a model can be talked into any of them): runs of delimiters, a word as long as the
 * answer, thousands of code spans or links, deeply nested quotes. Before, splitting and converting them took time
 * growing with the square of their length (about 9 s at 60,000 characters); the work is measured here by counting.
 */
describe('formatting and splitting take linear work, whatever the shape of the answer', () => {
  const shapes: Record<string, (n: number) => string> = {
    'one long word': (n) => '['.repeat(n),
    backticks: (n) => '`'.repeat(n),
    'code spans': (n) => '`a` '.repeat(n / 4),
    links: (n) => 'see (https://a.example/x) '.repeat(n / 26),
    'emphasis runs': (n) => 'a_'.repeat(n / 2),
    'star runs': (n) => 'a*'.repeat(n / 2),
    'nested quotes': (n) => '> '.repeat(n / 2),
    'a code fence with blank lines': (n) => '```\n' + 'x = 1\n\n'.repeat(n / 7) + '```',
    words: (n) => 'word '.repeat(n / 5),
    'line breaks': (n) => 'a\n'.repeat(n / 2),
    paragraphs: (n) => '**bold** para.\n\n'.repeat(n / 16),
  };

  it('splitting: twice the text is about twice the steps, and a bounded number of steps per character', () => {
    for (const [shape, make] of Object.entries(shapes)) {
      const small = splitSteps(make(30_000));
      const big = splitSteps(make(60_000));
      expect(big, shape).to.be.at.most(2.2 * small + 100);
      expect(big, shape).to.be.at.most(4 * 60_000);
    }
  });

  it('converting: the parser never gets more than a piece at once, and the pieces are the text', () => {
    for (const [shape, make] of Object.entries(shapes)) {
      for (const n of [30_000, 60_000]) {
        const text = make(n);
        const pieces = markdownPieces(text);
        expect(pieces.map((p) => p.before + p.text).join(''), `${shape}: nothing lost`).to.equal(text);
        for (const piece of pieces.filter((p) => !p.code)) expect(piece.text.length, shape).to.be.at.most(PARSE_PIECE_CHARS);
        expect(pieces.length, `${shape}: pieces are packed`).to.be.at.most((2 * text.length) / PARSE_PIECE_CHARS + 2);
      }
    }
  });

  it('a hostile 60,000-character answer converts and splits into parts of at most 4,000 characters', function () {
    // A check of the result, not of time: the bound only keeps a loaded machine from failing it.
    this.timeout(120_000);
    for (const [shape, make] of Object.entries(shapes)) {
      const parts = splitMessage(toWhatsApp(make(60_000)));
      expect(parts.length, shape).to.be.at.least(1);
      for (const part of parts) expect(part.length, shape).to.be.at.most(MESSAGE_LIMIT);
    }
  });

  it('a long answer parsed in pieces reads as if parsed whole: formatting, paragraphs and a long code block kept', () => {
    const paragraph = (i: number) => `**Step ${i}**: ${Array.from({ length: 30 }, (_, j) => `w${i}.${j}`).join(' ')}, see [docs](https://x.example/${i}).`;
    const code = '```python\n' + Array.from({ length: 300 }, (_, i) => `print(${i})  # **not bold**${i % 10 === 9 ? '\n' : ''}`).join('\n') + '\n```';
    const text = [...Array.from({ length: 20 }, (_, i) => paragraph(i)), code, ...Array.from({ length: 20 }, (_, i) => paragraph(i + 20))].join('\n\n');
    expect(text.length).to.be.greaterThan(3 * PARSE_PIECE_CHARS);
    expect(code.length).to.be.greaterThan(PARSE_PIECE_CHARS);
    const converted = (i: number) => `*Step ${i}*: ${Array.from({ length: 30 }, (_, j) => `w${i}.${j}`).join(' ')}, see docs (https://x.example/${i}).`;
    expect(toWhatsApp(text)).to.equal([...Array.from({ length: 20 }, (_, i) => converted(i)), code.replace('```python', '```'), ...Array.from({ length: 20 }, (_, i) => converted(i + 20))].join('\n\n'));
  });
});
