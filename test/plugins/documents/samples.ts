import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { constants as zlibConstants, crc32, deflateRawSync } from 'node:zlib';
import { strToU8, zipSync } from 'fflate';

/*
 * Real documents made from scratch for the tests: PDFs written object by object (a text layer, or a JPEG page with
 * none), and DOCX, XLSX and ODT files zipped from their XML parts, plus hostile ones (a zip bomb posing as DOCX, an
 * XLSX with external entities, a script named .pdf).
 */

const escapePdf = (s: string) => s.replace(/[\\()]/g, (c) => `\\${c}`);

/** A PDF from raw objects (1-based, in order), with a correct cross-reference table. */
function pdfOf(objects: Array<string | Buffer>): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  const offsets: number[] = [];
  let length = parts[0]!.length;
  objects.forEach((body, i) => {
    offsets.push(length);
    const chunk = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`, 'latin1'), typeof body === 'string' ? Buffer.from(body, 'latin1') : body, Buffer.from('\nendobj\n', 'latin1')]);
    parts.push(chunk);
    length += chunk.length;
  });
  const xref = [`xref\n0 ${objects.length + 1}\n`, '0000000000 65535 f \n', ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`)].join('');
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`, 'latin1'));
  return Buffer.concat(parts);
}

/** A PDF whose pages carry these lines as real text (Helvetica), one array of lines per page. */
export function textPdf(pages: string[][]): Buffer {
  const n = pages.length;
  // 1 catalog, 2 pages, 3 font, then per page: page object, content stream.
  const kids = pages.map((_, i) => `${4 + i * 2} 0 R`).join(' ');
  const objects: string[] = ['<< /Type /Catalog /Pages 2 0 R >>', `<< /Type /Pages /Kids [${kids}] /Count ${n} >>`, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'];
  pages.forEach((lines, i) => {
    const stream = `BT /F1 12 Tf 72 720 Td 14 TL ${lines.map((l) => `(${escapePdf(l)}) Tj T*`).join(' ')} ET`;
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + i * 2} 0 R >>`);
    objects.push(`<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`);
  });
  return pdfOf(objects);
}

/** A scanned PDF: each page is one JPEG picture and there is no text layer. */
export function scannedPdf(jpeg: Buffer, width: number, height: number, pageCount = 1): Buffer {
  const kids = Array.from({ length: pageCount }, (_, i) => `${4 + i * 2} 0 R`).join(' ');
  const objects: Array<string | Buffer> = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${kids}] /Count ${pageCount} >>`,
    Buffer.concat([Buffer.from(`<< /Type /XObject /Subtype /Image /Width ${width} /Height ${height} /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode /Length ${jpeg.length} >>\nstream\n`, 'latin1'), jpeg, Buffer.from('\nendstream', 'latin1')]),
  ];
  for (let i = 0; i < pageCount; i++) {
    const draw = `q 612 0 0 792 0 0 cm /Im1 Do Q`;
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im1 3 0 R >> >> /Contents ${5 + i * 2} 0 R >>`);
    objects.push(`<< /Length ${draw.length} >>\nstream\n${draw}\nendstream`);
  }
  return pdfOf(objects);
}

/** A JPEG made by the real ffmpeg (a test card with text-like detail). */
export async function jpegOf(width: number, height: number): Promise<Buffer> {
  const file = path.join(os.tmpdir(), `scan-${process.pid}-${Date.now()}.jpg`);
  await promisify(execFile)('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=size=${width}x${height}`, '-frames:v', '1', file]);
  try {
    return await readFile(file);
  } finally {
    await rm(file, { force: true });
  }
}

const xmlEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A Word document (DOCX) with these paragraphs. */
export function docx(paragraphs: string[]): Buffer {
  const body = paragraphs.map((p) => `<w:p><w:r><w:t xml:space="preserve">${xmlEscape(p)}</w:t></w:r></w:p>`).join('');
  return Buffer.from(
    zipSync({
      '[Content_Types].xml': strToU8('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'),
      '_rels/.rels': strToU8('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>'),
      'word/document.xml': strToU8(`<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`),
    }),
  );
}

/** An Excel workbook (XLSX) with one sheet of these rows (strings through the shared-strings table, numbers as numbers). */
export function xlsx(rows: Array<Array<string | number>>, options: { sharedStringsHead?: string; sheetName?: string } = {}): Buffer {
  const strings: string[] = [];
  const col = (i: number) => String.fromCharCode(65 + i);
  const sheetRows = rows
    .map((row, r) => `<row r="${r + 1}">${row.map((v, c) => (typeof v === 'number' ? `<c r="${col(c)}${r + 1}"><v>${v}</v></c>` : `<c r="${col(c)}${r + 1}" t="s"><v>${strings.push(v) - 1}</v></c>`)).join('')}</row>`)
    .join('');
  const shared = `${options.sharedStringsHead ?? '<?xml version="1.0" encoding="UTF-8"?>'}<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="${strings.length}" uniqueCount="${strings.length}">${strings.map((s) => `<si><t>${s.startsWith('&') ? s : xmlEscape(s)}</t></si>`).join('')}</sst>`;
  return Buffer.from(
    zipSync({
      '[Content_Types].xml': strToU8('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>'),
      '_rels/.rels': strToU8('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>'),
      'xl/workbook.xml': strToU8(`<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="${options.sheetName ?? 'Sales'}" sheetId="1" r:id="rId1"/></sheets></workbook>`),
      'xl/_rels/workbook.xml.rels': strToU8('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>'),
      'xl/worksheets/sheet1.xml': strToU8(`<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${sheetRows}</sheetData></worksheet>`),
      'xl/sharedStrings.xml': strToU8(shared),
    }),
  );
}

/** An OpenDocument text (ODT) with these paragraphs. */
export function odt(paragraphs: string[]): Buffer {
  const body = paragraphs.map((p) => `<text:p>${xmlEscape(p)}</text:p>`).join('');
  return Buffer.from(
    zipSync({
      mimetype: [strToU8('application/vnd.oasis.opendocument.text'), { level: 0 }],
      'META-INF/manifest.xml': strToU8('<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2"><manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>'),
      'content.xml': strToU8(`<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2"><office:body><office:text>${body}</office:text></office:body></office:document-content>`),
    }),
  );
}

/** A zip bomb posing as a DOCX: a real DOCX skeleton whose document.xml unpacks to `megabytes` MB of spaces. */
export function zipBombDocx(megabytes: number): Buffer {
  const spaces = Buffer.alloc(1024 * 1024, 0x20);
  let crc = 0;
  for (let i = 0; i < megabytes; i++) crc = crc32(spaces, crc);
  return zipOf([
    { name: '[Content_Types].xml', data: CONTENT_TYPES, method: 0, size: CONTENT_TYPES.length, crc: crc32(CONTENT_TYPES) },
    { name: 'word/document.xml', data: deflatedSpaces(megabytes), method: 8, size: megabytes * 1024 * 1024, crc },
  ]);
}

/**
 * A zip bomb that lies: a DOCX whose document.xml declares `declaredBytes` unpacked (in the local header and the
 * central directory) but inflates to `realMegabytes` MB, so only the jail's memory and time limits can stop it.
 */
export function lyingZipBombDocx(realMegabytes: number, declaredBytes = 1000): Buffer {
  return zipOf([
    { name: '[Content_Types].xml', data: CONTENT_TYPES, method: 0, size: CONTENT_TYPES.length, crc: 0 },
    { name: 'word/document.xml', data: deflatedSpaces(realMegabytes), method: 8, size: declaredBytes, crc: 0 },
  ]);
}

const CONTENT_TYPES = Buffer.from('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>');

/**
 * A raw deflate stream that inflates to `megabytes` MB of spaces, made in milliseconds: one megabyte compressed with a
 * full flush (byte-aligned blocks, no reference to what came before, not final) repeated, then an empty final block.
 * Compressing the whole buffer took 25-40 s of a test on a busy machine.
 */
function deflatedSpaces(megabytes: number): Buffer {
  const megabyte = deflateRawSync(Buffer.alloc(1024 * 1024, 0x20), { level: 9, finishFlush: zlibConstants.Z_FULL_FLUSH });
  return Buffer.concat([...Array.from({ length: megabytes }, () => megabyte), deflateRawSync(Buffer.alloc(0))]);
}

/** A zip archive of these entries, each with the compressed bytes, method, unpacked size and CRC-32 its headers declare. */
function zipOf(entries: Array<{ name: string; data: Buffer; method: number; size: number; crc: number }>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(e.method, 8);
    local.writeUInt32LE(e.crc, 14);
    local.writeUInt32LE(e.data.length, 18);
    local.writeUInt32LE(e.size, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, e.data);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(e.method, 10);
    central.writeUInt32LE(e.crc, 16);
    central.writeUInt32LE(e.data.length, 20);
    central.writeUInt32LE(e.size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += 30 + name.length + e.data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}
