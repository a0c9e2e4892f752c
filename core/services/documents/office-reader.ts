/*
 * Runs INSIDE the jail only (node, no network, its own /in/doc and nothing else of the host): turns one untrusted
 * DOCX, ODT, XLSX, CSV or text file into plain text and prints one JSON line (`ReaderResult`) on stdout. The bot's
 * process never parses these bytes; it reads only this JSON. Zip containers are measured from their directory
 * before anything is inflated (a zip bomb is refused by what it declares, and the jail's memory and time limits
 * stop one that lies).
 *
 * Usage inside the jail: node /opt/jail/lib/office-reader.mjs <docx|odt|xlsx|csv|txt> /in/doc <maxChars> <maxUnzippedBytes>
 */
import { readFileSync } from 'node:fs';

/** What the reader prints: the text (cut to the budget) and how much of the document it holds. */
export type ReaderResult =
  | { ok: true; text: string; unit: 'rows' | 'characters'; kept: number; total: number; parts?: string[] }
  | { ok: false; reason: 'corrupt' | 'encrypted' | 'too-large'; detail: string };

class Refused extends Error {
  constructor(readonly reason: 'corrupt' | 'encrypted' | 'too-large', detail: string) {
    super(detail);
  }
}

/** Refuses a zip whose entries declare more than `maxBytes` inflated, or too many entries, before inflating any. */
async function checkZip(bytes: Uint8Array, maxBytes: number): Promise<void> {
  const { unzip } = await import('fflate');
  let declared = 0;
  let entries = 0;
  await new Promise<void>((resolve, reject) => {
    unzip(
      bytes,
      {
        filter(file) {
          entries++;
          declared += file.originalSize;
          return false;
        },
      },
      (err) => (err ? reject(new Refused('corrupt', `not a readable zip container (${err.message})`)) : resolve()),
    );
  });
  if (entries > 5000) throw new Refused('too-large', `it holds ${entries} files inside`);
  if (declared > maxBytes) throw new Refused('too-large', `it unpacks to ${Math.round(declared / 1_000_000)} MB`);
}

/** Keeps whole pieces (paragraphs, rows) while they fit `maxChars`. */
function keepWhole(pieces: string[], maxChars: number, separator: string): { text: string; kept: number } {
  let used = 0;
  let kept = 0;
  for (const piece of pieces) {
    const cost = piece.length + separator.length;
    if (used + cost > maxChars && kept > 0) break;
    used += cost;
    kept++;
    if (used >= maxChars) break;
  }
  return { text: pieces.slice(0, kept).join(separator).slice(0, maxChars), kept };
}

function asCharacters(raw: string, maxChars: number): ReaderResult {
  const clean = raw.replace(/\r\n?/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
  if (clean.length <= maxChars) return { ok: true, text: clean, unit: 'characters', kept: clean.length, total: clean.length };
  const { text } = keepWhole(clean.split('\n'), maxChars, '\n');
  return { ok: true, text, unit: 'characters', kept: text.length, total: clean.length };
}

/** Rows of one or more tables, as `a | b | c` lines under their table's name, cut at whole rows. */
function asRows(tables: Array<{ name?: string; rows: unknown[][] }>, maxChars: number): ReaderResult {
  const cell = (v: unknown) => (v instanceof Date ? v.toISOString().slice(0, 10) : v === null || v === undefined ? '' : String(v).replace(/\s+/g, ' ').trim());
  let total = 0;
  let kept = 0;
  let used = 0;
  const out: string[] = [];
  const parts: string[] = [];
  for (const table of tables) {
    const rows = table.rows.map((r) => r.map(cell)).filter((r) => r.some(Boolean));
    total += rows.length;
    let keptHere = 0;
    if (table.name) out.push(`## ${table.name}`);
    for (const row of rows) {
      const line = row.join(' | ');
      if (used + line.length + 1 > maxChars && kept > 0) break;
      out.push(line);
      used += line.length + 1;
      kept++;
      keptHere++;
    }
    if (table.name) parts.push(`${table.name}: ${keptHere} of ${rows.length} rows`);
  }
  return { ok: true, text: out.join('\n').slice(0, maxChars), unit: 'rows', kept, total, ...(tables.length > 1 ? { parts } : {}) };
}

async function readDocx(bytes: Buffer, maxChars: number, maxUnzipped: number): Promise<ReaderResult> {
  await checkZip(bytes, maxUnzipped);
  const { default: mammoth } = await import('mammoth');
  const { value } = await mammoth.extractRawText({ buffer: bytes });
  return asCharacters(value, maxChars);
}

/** ODT: the paragraphs, headings, list items and table rows of content.xml, in order. */
async function readOdt(bytes: Buffer, maxChars: number, maxUnzipped: number): Promise<ReaderResult> {
  await checkZip(bytes, maxUnzipped);
  const { unzipSync, strFromU8 } = await import('fflate');
  const files = unzipSync(bytes, { filter: (f) => f.name === 'content.xml' || f.name === 'META-INF/manifest.xml' });
  const manifest = files['META-INF/manifest.xml'] ? strFromU8(files['META-INF/manifest.xml']) : '';
  if (/encryption-data/.test(manifest)) throw new Refused('encrypted', 'it is protected by a password');
  const content = files['content.xml'];
  if (!content) throw new Refused('corrupt', 'it has no content.xml');
  const { DOMParser } = await import('@xmldom/xmldom');
  const doc = new DOMParser().parseFromString(strFromU8(content), 'text/xml');
  const lines: string[] = [];
  const textOf = (node: Node): string => {
    let s = '';
    for (let child = node.firstChild; child; child = child.nextSibling) {
      if (child.nodeType === 3) s += child.nodeValue ?? '';
      else if (child.nodeType === 1) {
        const name = (child as Element).nodeName;
        if (name === 'text:s') s += ' '.repeat(Number((child as Element).getAttribute('text:c') ?? 1) || 1);
        else if (name === 'text:tab') s += '\t';
        else if (name === 'text:line-break') s += '\n';
        else if (name !== 'text:note') s += textOf(child);
      }
    }
    return s;
  };
  const walk = (node: Node) => {
    for (let child = node.firstChild; child; child = child.nextSibling) {
      if (child.nodeType !== 1) continue;
      const name = (child as Element).nodeName;
      if (name === 'text:p' || name === 'text:h') lines.push(textOf(child));
      else if (name === 'table:table-row') {
        const cells: string[] = [];
        for (let c = child.firstChild; c; c = c.nextSibling) if (c.nodeType === 1 && (c as Element).nodeName === 'table:table-cell') cells.push(textOf(c).trim());
        lines.push(cells.join(' | '));
      } else walk(child);
    }
  };
  walk(doc.documentElement as unknown as Node);
  return asCharacters(lines.join('\n'), maxChars);
}

async function readXlsx(bytes: Buffer, maxChars: number, maxUnzipped: number): Promise<ReaderResult> {
  await checkZip(bytes, maxUnzipped);
  const { default: readSheets } = await import('read-excel-file/node');
  const sheets = (await readSheets(bytes)) as Array<{ sheet: string; data: unknown[][] }>;
  return asRows(sheets.map((s) => ({ name: s.sheet, rows: s.data })), maxChars);
}

async function readCsv(bytes: Buffer, maxChars: number): Promise<ReaderResult> {
  const { default: Papa } = await import('papaparse');
  const parsed = Papa.parse<string[]>(bytes.toString('utf8').replace(/^\uFEFF/, ''), { skipEmptyLines: true });
  return asRows([{ rows: parsed.data }], maxChars);
}

async function main(): Promise<ReaderResult> {
  const [kind, file, maxCharsArg, maxUnzippedArg] = process.argv.slice(2);
  const maxChars = Number(maxCharsArg);
  const maxUnzipped = Number(maxUnzippedArg);
  const bytes = readFileSync(file!);
  switch (kind) {
    case 'docx':
      return readDocx(bytes, maxChars, maxUnzipped);
    case 'odt':
      return readOdt(bytes, maxChars, maxUnzipped);
    case 'xlsx':
      return readXlsx(bytes, maxChars, maxUnzipped);
    case 'csv':
      return readCsv(bytes, maxChars);
    case 'txt':
      return asCharacters(bytes.toString('utf8').replace(/^\uFEFF/, ''), maxChars);
    default:
      throw new Refused('corrupt', `unknown kind ${kind}`);
  }
}

// Run only as the jail's program (the bot's own process never imports this file for its effect).
if (process.argv[1]?.endsWith('office-reader.mjs')) {
  main()
    .then((result) => process.stdout.write(`${JSON.stringify(result)}\n`))
    .catch((err: unknown) => {
      const result: ReaderResult = err instanceof Refused ? { ok: false, reason: err.reason, detail: err.message } : { ok: false, reason: 'corrupt', detail: String((err as Error)?.message ?? err).slice(0, 300) };
      process.stdout.write(`${JSON.stringify(result)}\n`);
    });
}
