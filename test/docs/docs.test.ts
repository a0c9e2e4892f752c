import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../helpers/checkout.js';

/** Files below `dir` (relative to ROOT) whose names end in `ext`, as paths relative to ROOT. */
function filesUnder(dir: string, ext: string): string[] {
  const full = path.join(ROOT, dir);
  if (!existsSync(full)) return [];
  return readdirSync(full, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith(ext) && statSync(path.join(full, name)).isFile())
    .map((name) => path.join(dir, name));
}

/** Markdown without fenced code blocks and inline code, where link-like text is only an example. */
function withoutCode(markdown: string): string {
  return markdown.replace(/^(\s*)(```|~~~)[\s\S]*?^\1\2[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** The anchors GitHub gives a page's headings: lowercased, punctuation dropped, spaces to dashes, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of withoutCode(markdown.replace(/`([^`\n]*)`/g, '$1')).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n ? `${base}-${n}` : base);
  }
  return anchors;
}

/** Relative link targets of a Markdown page (inline links and images), outside code. */
export function relativeLinks(markdown: string): string[] {
  return [...withoutCode(markdown).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
    .map((m) => m[1])
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** Problems with the relative links of one page: a missing file, or an anchor no heading of the target has. */
export function brokenLinks(page: string, markdown: string, exists: (file: string) => boolean, read: (file: string) => string): string[] {
  const problems: string[] = [];
  for (const link of relativeLinks(markdown)) {
    const [file, anchor] = link.split('#', 2);
    const target = file ? path.normalize(path.join(path.dirname(page), decodeURIComponent(file))) : page;
    if (target.startsWith('..')) problems.push(`${page}: ${link} leaves the project`);
    else if (!exists(target)) problems.push(`${page}: ${link} points at ${target}, which does not exist`);
    else if (anchor && target.endsWith('.md') && !headingAnchors(read(target)).has(anchor)) problems.push(`${page}: ${link}: ${target} has no heading #${anchor}`);
  }
  return problems;
}

/** The `PLUGIN_…` codes written in the core's source. */
function sourceCodes(): Set<string> {
  const codes = new Set<string>();
  for (const file of filesUnder('core', '.ts')) for (const [code] of readFileSync(path.join(ROOT, file), 'utf8').matchAll(/\bPLUGIN_[A-Z][A-Z0-9_]*[A-Z0-9]\b/g)) codes.add(code);
  // The local API's and the hooks' codes, as their unions write them (quoted: API_KEY settings are no codes).
  for (const [, code] of readFileSync(path.join(ROOT, 'core', 'api', 'errors.ts'), 'utf8').matchAll(/'((?:API|HOOK)_[A-Z][A-Z0-9_]*[A-Z0-9])'/g)) codes.add(code!);
  return codes;
}

const ERRORS_PAGE = path.join('docs', 'reference', 'errors.md');

/** The error reference's sections: code → the text under its `## PLUGIN_…` heading. */
function documentedCodes(): Map<string, string> {
  const page = readFileSync(path.join(ROOT, ERRORS_PAGE), 'utf8');
  const sections = new Map<string, string>();
  const parts = page.split(/^## /m).slice(1);
  for (const part of parts) {
    const [heading, ...body] = part.split('\n');
    const code = /^`?((?:PLUGIN|API|HOOK)_[A-Z0-9_]+)`?\s*$/.exec(heading.trim())?.[1];
    if (code) sections.set(code, body.join('\n'));
  }
  return sections;
}

describe('docs: they stay true', () => {
  it('finds the error codes in the core (the check below is not empty)', () => {
    expect([...sourceCodes()]).to.include.members(['PLUGIN_BAD_DEFINITION', 'PLUGIN_DUPLICATE_COMMAND', 'API_SCOPE_REFUSED', 'API_TOKEN_INVALID']);
  });

  it('explains every PLUGIN_ code of the source in docs/reference/errors.md, each with its cause and its fix', () => {
    const documented = documentedCodes();
    const undocumented = [...sourceCodes()].filter((code) => !documented.has(code));
    expect(undocumented, `add a "## <code>" section with **Cause.** and **Fix.** to ${ERRORS_PAGE}`).to.deep.equal([]);
    for (const [code, text] of documented) {
      const cause = /\*\*Cause\.\*\*([\s\S]*?)(?=\*\*Fix\.\*\*|$)/.exec(text)?.[1].trim() ?? '';
      const fix = /\*\*Fix\.\*\*([\s\S]*)/.exec(text)?.[1].trim() ?? '';
      expect(cause.length, `${code}: its cause, in words`).to.be.greaterThan(40);
      expect(fix.length, `${code}: its fix, in words`).to.be.greaterThan(40);
    }
  });

  it('documents no PLUGIN_ code that the source no longer has', () => {
    const source = sourceCodes();
    const stale = [...documentedCodes().keys()].filter((code) => !source.has(code));
    expect(stale, `remove these sections from ${ERRORS_PAGE}, or bring the codes back`).to.deep.equal([]);
  });

  it('keeps the README a door: at most 260 lines, with both set-up commands and the map of the docs', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    expect(readme.split('\n').length).to.be.at.most(260);
    // CI (.ci/run) runs exactly `npm ci && npm test`: the README must say the same.
    expect(readFileSync(path.join(ROOT, '.ci', 'run'), 'utf8')).to.match(/^npm ci && npm test$/m);
    expect(readme).to.include('| run the bot | `npm start` |');
    expect(readme).to.include('| run the tests | `npm test` |');
    expect(relativeLinks(readme)).to.include.members(['docs/users/commands.md', 'docs/reference/errors.md', 'docs/plugin-authors/writing-a-plugin.md']);
  });

  it('has every relative link of the README, docs/ and the plugins\' READMEs point at a file (and heading) that exists', () => {
    const pages = ['README.md', ...filesUnder('docs', '.md'), ...filesUnder('plugins', 'README.md')];
    expect(pages.length).to.be.greaterThan(20);
    const problems = pages.flatMap((page) =>
      brokenLinks(page, readFileSync(path.join(ROOT, page), 'utf8'), (file) => existsSync(path.join(ROOT, file)), (file) => readFileSync(path.join(ROOT, file), 'utf8')),
    );
    expect(problems).to.deep.equal([]);
  });

  it('gives every plugin folder its own README', () => {
    const plugins = readdirSync(path.join(ROOT, 'plugins'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
    expect(plugins.filter((name) => !existsSync(path.join(ROOT, 'plugins', name, 'README.md')))).to.deep.equal([]);
  });

  describe('the link check itself', () => {
    const pages: Record<string, string> = {
      'docs/a.md': '# Page A\n\n## Safe sending\n\n## Privacy: `.mydata`\n\n## Safe sending\n',
      'docs/b.md': '# B\n',
    };
    const check = (markdown: string) => brokenLinks('docs/b.md', markdown, (f) => f in pages, (f) => pages[f]);

    it('accepts links to pages and headings that exist, and ignores web links and code', () => {
      expect(check('[a](a.md) [s](a.md#safe-sending) [s2](a.md#safe-sending-1) [p](a.md#privacy-mydata) [w](https://x.example/y) `[c](nowhere.md)`\n```\n[d](nowhere.md)\n```\n')).to.deep.equal([]);
    });

    it('refuses a missing page, a missing heading and a link out of the project', () => {
      expect(check('[x](c.md)')).to.have.length(1);
      expect(check('[x](a.md#unsafe-sending)')).to.have.length(1);
      expect(check('[x](#nothing)')).to.have.length(1);
      expect(check('[x](../../../etc/passwd)')).to.have.length(1);
    });
  });
});
