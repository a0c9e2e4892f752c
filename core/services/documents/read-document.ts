import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Jail, JailLimits } from '../jail/jail.js';
import type { ReaderResult } from './office-reader.js';
import { readerLibraries } from './reader-libraries.js';
import { DocumentRefused } from '../../api/errors.js';

/** The kinds of document the bot reads, as told by their bytes. */
export type DocumentKind = 'pdf' | 'docx' | 'odt' | 'xlsx' | 'csv' | 'txt';

const LABEL: Record<DocumentKind, string> = { pdf: 'PDF', docx: 'Word document', odt: 'OpenDocument text', xlsx: 'Excel spreadsheet', csv: 'CSV file', txt: 'text file' };

/** Reading limits: what a document may be, and how much of it reaches the model. */
export interface ReadLimits {
  /** Most characters of text handed on (the rest is cut, and the note says so). */
  maxChars: number;
  /** Most PDF pages read for text. */
  maxPages: number;
  /** Most pages of a scanned PDF rendered as images for the vision path. */
  maxScanPages: number;
  /** Most bytes a zip-based document (DOCX, XLSX, ODT) may declare unpacked. */
  maxUnzippedBytes: number;
  /** Wall-clock seconds of one jail run. */
  seconds: number;
  /** Memory of one jail run, MB. */
  memoryMb: number;
}

/** A read document: its text (with what was cut said in `note`), or page images when it is a scan. */
export interface DocumentText {
  kind: DocumentKind;
  label: string;
  text: string;
  /** What was cut, in words ("pages 1–50 of 120 were read"), or undefined when everything was read. */
  note?: string;
  /** JPEG pages of a scanned PDF (no text layer), for the vision path. */
  pageImages?: Buffer[];
  /** The PDF's page count, when known. */
  pages?: number;
}

const EXTENSION_KIND: Record<string, DocumentKind> = { pdf: 'pdf', docx: 'docx', odt: 'odt', xlsx: 'xlsx', csv: 'csv', tsv: 'csv', txt: 'txt', md: 'txt', markdown: 'txt', text: 'txt', log: 'txt' };
const MIME_KIND: Array<[RegExp, DocumentKind]> = [
  [/^application\/pdf/i, 'pdf'],
  [/wordprocessingml/i, 'docx'],
  [/opendocument\.text/i, 'odt'],
  [/spreadsheetml/i, 'xlsx'],
  [/^text\/(csv|tab-separated-values)/i, 'csv'],
  [/^text\//i, 'txt'],
];

/** What the sender's name or mimetype says the file is (only to tell CSV from plain text, and to catch disguises). */
export function claimedKind(fileName: string | undefined, mimetype: string | undefined): DocumentKind | undefined {
  const ext = fileName?.toLowerCase().match(/\.([a-z0-9]+)$/)?.[1];
  if (ext && EXTENSION_KIND[ext]) return EXTENSION_KIND[ext];
  return MIME_KIND.find(([re]) => re.test(mimetype ?? ''))?.[1];
}

/** True for bytes that are UTF-8 text (no NUL, few control characters). */
function isText(bytes: Buffer): boolean {
  const sample = bytes.subarray(0, 64 * 1024);
  if (sample.includes(0)) return false;
  try {
    // Cut at a character boundary: a multi-byte character may straddle the end of the sample.
    new TextDecoder('utf-8', { fatal: true }).decode(bytes.length > sample.length ? sample.subarray(0, sample.length - 4) : sample);
  } catch {
    return false;
  }
  let control = 0;
  for (const b of sample) if (b < 9 || (b > 13 && b < 32)) control++;
  return control <= sample.length / 100;
}

/**
 * The document's kind from its bytes (file-type's magic numbers and zip contents; UTF-8 text for TXT/CSV), never from
 * the name or mimetype the sender claims. A file whose bytes are not a document the bot reads, or that claims to be
 * another kind than it is (a script named `.pdf`), is refused with a sentence saying what it is.
 *
 * @example
 * await documentKind(bytes, 'report.pdf', 'application/pdf') // 'pdf'
 */
export async function documentKind(bytes: Buffer, fileName?: string, mimetype?: string): Promise<DocumentKind> {
  if (!bytes.length) throw new DocumentRefused('That file is empty, so there is nothing for me to read.');
  const claimed = claimedKind(fileName, mimetype);
  const found = await (await import('file-type')).fileTypeFromBuffer(bytes);
  let kind: DocumentKind | undefined;
  if (found?.ext === 'pdf' || found?.ext === 'docx' || found?.ext === 'odt' || found?.ext === 'xlsx') kind = found.ext;
  else if (!found && isText(bytes)) kind = claimed === 'csv' ? 'csv' : 'txt';
  const called = fileName ? `“${fileName.slice(0, 80)}”` : 'That file';
  if (!kind) {
    if (found?.ext === 'cfb') throw new DocumentRefused(`I could not read ${called}: it is password-protected or an old Office format (.doc/.xls). Please send it without a password, as PDF, DOCX or XLSX.`);
    const seen = found ? ` (it is ${found.ext.toUpperCase()})` : ' (its contents are not text)';
    throw new DocumentRefused(`I could not read ${called}: I read PDF, Word (DOCX), OpenDocument (ODT), Excel (XLSX), CSV and text files, and this is none of them${seen}.`);
  }
  // Text is text whatever it is called; a file claiming to be a PDF, Word or Excel file must be one.
  const binaryClaim = claimed === 'pdf' || claimed === 'docx' || claimed === 'odt' || claimed === 'xlsx';
  if (binaryClaim && claimed !== kind) {
    throw new DocumentRefused(`I did not read ${called}: it claims to be a ${LABEL[claimed]} but it is ${kind === 'txt' || kind === 'csv' ? 'plain text (a script, perhaps)' : `a ${LABEL[kind]}`}. Please send the real file.`);
  }
  return kind;
}

function limitsOf(limits: ReadLimits, outputBytes: number): JailLimits {
  return { wallSeconds: limits.seconds, cpuSeconds: limits.seconds, memoryMb: limits.memoryMb, maxProcesses: 16, maxOutputBytes: outputBytes, diskBytes: 64 * 1024 * 1024 };
}

function failedRun(result: { stopped?: string; outOfMemory: boolean; setupFailed?: string }, called: string): DocumentRefused | undefined {
  if (result.setupFailed) return new DocumentRefused(`I could not read ${called} right now (the reader could not start). Please try again later.`);
  if (result.stopped === 'time' || result.stopped === 'cpu') return new DocumentRefused(`I gave up reading ${called}: it took too long (a very large or damaged file).`);
  if (result.outOfMemory) return new DocumentRefused(`I gave up reading ${called}: it needs too much memory to open (a very large or damaged file).`);
  return undefined;
}

const cutNote = (unit: string, kept: number, total: number) => `only the first ${kept.toLocaleString('en')} of ${total.toLocaleString('en')} ${unit} were read (the document is too long)`;

/** DOCX, ODT, XLSX, CSV and text: node runs the office reader inside the jail; its JSON line is all the bot reads. */
async function readOffice(jail: Jail, bytes: Buffer, kind: Exclude<DocumentKind, 'pdf'>, limits: ReadLimits, called: string): Promise<DocumentText> {
  const result = await jail.run({
    kind: 'code',
    program: '/usr/bin/node',
    args: [`--max-old-space-size=${Math.max(64, limits.memoryMb - 64)}`, '/opt/jail/lib/office-reader.mjs', kind, 'in/doc', String(limits.maxChars), String(limits.maxUnzippedBytes)],
    inputs: { doc: bytes },
    libraries: readerLibraries(),
    limits: limitsOf(limits, limits.maxChars * 8 + 64 * 1024),
  });
  const failed = failedRun(result, called);
  if (failed) throw failed;
  let answer: ReaderResult;
  try {
    answer = JSON.parse(result.stdout.trim().split('\n').pop() ?? '') as ReaderResult;
  } catch {
    throw new DocumentRefused(`I could not read ${called}: it seems damaged.`);
  }
  if (!answer.ok) {
    if (answer.reason === 'encrypted') throw new DocumentRefused(`I could not read ${called}: it is protected by a password.`);
    if (answer.reason === 'too-large') throw new DocumentRefused(`I did not read ${called}: ${answer.detail}, more than I open (a compressed “zip bomb”, or simply too big).`);
    throw new DocumentRefused(`I could not read ${called}: it seems damaged (${answer.detail.slice(0, 120)}).`);
  }
  const unit = answer.unit === 'rows' ? 'rows' : 'characters';
  const note = answer.kept < answer.total ? `${cutNote(unit, answer.kept, answer.total)}${answer.parts ? `: ${answer.parts.join('; ')}` : ''}` : undefined;
  return { kind, label: LABEL[kind], text: answer.text, ...(note ? { note } : {}) };
}

/** A PDF: pdfinfo (pages, password), pdftotext of the first pages, and for a scan pdftoppm's page images — all jailed. */
async function readPdf(jail: Jail, bytes: Buffer, limits: ReadLimits, called: string): Promise<DocumentText> {
  const info = await jail.run({ kind: 'code', program: '/usr/bin/pdfinfo', args: ['in/doc'], inputs: { doc: bytes }, limits: limitsOf(limits, 64 * 1024) });
  const infoFailed = failedRun(info, called);
  if (infoFailed) throw infoFailed;
  if (info.exitCode !== 0) {
    if (/password/i.test(info.stderr)) throw new DocumentRefused(`I could not read ${called}: it is protected by a password.`);
    throw new DocumentRefused(`I could not read ${called}: it is not a PDF I can open (it seems damaged).`);
  }
  const pages = Number(/^Pages:\s+(\d+)/m.exec(info.stdout)?.[1] ?? 0);
  if (!pages) throw new DocumentRefused(`I could not read ${called}: the PDF has no pages I can open.`);
  const lastPage = Math.min(pages, limits.maxPages);
  const text = await jail.run({
    kind: 'code',
    program: '/usr/bin/pdftotext',
    args: ['-f', '1', '-l', String(lastPage), '-enc', 'UTF-8', '-eol', 'unix', 'in/doc', '-'],
    inputs: { doc: bytes },
    limits: limitsOf(limits, limits.maxChars * 4 + 64 * 1024),
  });
  const textFailed = failedRun(text, called);
  if (textFailed) throw textFailed;
  if (text.exitCode !== 0 && !text.truncated) throw new DocumentRefused(`I could not read ${called}: the PDF seems damaged.`);
  // pdftotext ends each page with a form feed.
  const pageTexts = text.stdout.split('\f').slice(0, lastPage).map((p) => p.replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim());
  const letters = pageTexts.join('').replace(/\s/g, '').length;
  if (letters < 16 * pageTexts.length) return readScan(jail, bytes, pages, limits, called);
  let used = 0;
  let kept = 0;
  for (const page of pageTexts) {
    if (used + page.length > limits.maxChars && kept > 0) break;
    used += page.length + 2;
    kept++;
  }
  const body = pageTexts
    .slice(0, kept)
    .map((p, i) => `[page ${i + 1}]\n${p}`)
    .join('\n\n')
    .slice(0, limits.maxChars);
  const note = kept < pages ? `only pages 1–${kept} of ${pages} were read (the document is too long)` : undefined;
  return { kind: 'pdf', label: LABEL.pdf, text: body, pages, ...(note ? { note } : {}) };
}

/** A PDF without a text layer: its first pages as JPEG images (pdftoppm in the jail), for the vision path. */
async function readScan(jail: Jail, bytes: Buffer, pages: number, limits: ReadLimits, called: string): Promise<DocumentText> {
  const last = Math.min(pages, limits.maxScanPages);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'document-'));
  try {
    const result = await jail.run({
      kind: 'code',
      program: '/usr/bin/pdftoppm',
      args: ['-f', '1', '-l', String(last), '-r', '110', '-scale-to', '1568', '-jpeg', '-jpegopt', 'quality=80', 'in/doc', 'out/page'],
      inputs: { doc: bytes },
      outputTo: dir,
      limits: { ...limitsOf(limits, 64 * 1024), diskBytes: 32 * 1024 * 1024 },
    });
    const failed = failedRun(result, called);
    if (failed) throw failed;
    const files = result.outputs.filter((f) => /^page-\d+\.jpg$/.test(f)).sort((a, b) => Number(/\d+/.exec(a)![0]) - Number(/\d+/.exec(b)![0]));
    if (result.exitCode !== 0 || !files.length) throw new DocumentRefused(`I could not read ${called}: it has no text and its pages could not be turned into pictures.`);
    const pageImages = await Promise.all(files.map((f) => readFile(path.join(dir, f))));
    const note = files.length < pages ? `only pages 1–${files.length} of ${pages} were looked at as pictures (it is a scan without text)` : undefined;
    return { kind: 'pdf', label: LABEL.pdf, text: '', pageImages, pages, ...(note ? { note } : {}) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Reads an untrusted document inside the jail (never in the bot's process): its kind from its bytes, then its text
 * cut to `maxChars` at whole pages or rows (the note says what was kept), or a scan's page images.
 *
 * @example
 * const doc = await readDocument(host.jail, bytes, { fileName: 'q3.pdf', mimetype: 'application/pdf' }, limits);
 */
export async function readDocument(jail: Jail, bytes: Buffer, claimed: { fileName?: string; mimetype?: string }, limits: ReadLimits): Promise<DocumentText> {
  const kind = await documentKind(bytes, claimed.fileName, claimed.mimetype);
  const support = await jail.detect();
  if (!support.bwrap.ok) throw new DocumentRefused(`I cannot read documents on this server: they are opened only inside the jail, and it does not work here (${support.bwrap.reason}).`);
  const called = claimed.fileName ? `“${claimed.fileName.slice(0, 80)}”` : `that ${LABEL[kind]}`;
  return kind === 'pdf' ? readPdf(jail, bytes, limits, called) : readOffice(jail, bytes, kind, limits, called);
}
