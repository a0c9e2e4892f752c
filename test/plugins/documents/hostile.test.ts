import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Jail } from '../../../core/services/jail/jail.js';
import { DocumentRefused } from '../../../core/media.js';
import { readDocument, type ReadLimits } from '../../../core/builtin.js';
import { lyingZipBombDocx, textPdf, xlsx } from './samples.js';

/**
 * Hostile documents through the real jail (bubblewrap, no network, an unprivileged uid, cgroup limits): external XML
 * entities aimed at a loopback server that must receive nothing and at a host file that must not show up, and a zip
 * bomb that lies about its size, which only the jail's memory and time limits can stop.
 */
describe('documents: hostile files in the real jail', function () {
  this.timeout(120_000);
  const jail = new Jail();
  const limits: ReadLimits = { maxChars: 20_000, maxPages: 50, maxScanPages: 2, maxUnzippedBytes: 50_000_000, seconds: 20, memoryMb: 256 };
  let server: http.Server;
  let hits: string[];
  let url: string;

  before(async () => {
    const support = await jail.detect();
    expect(support.bwrap.ok, 'these tests need the real jail (bubblewrap)').to.equal(true);
    hits = [];
    server = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      res.end('STOLEN-BY-ENTITY');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('an XLSX whose shared strings declare external entities (a loopback URL, /etc/hostname) reaches neither', async () => {
    const head = `<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE sst [<!ENTITY net SYSTEM "${url}/xxe-xlsx"><!ENTITY host SYSTEM "file:///etc/hostname">]>`;
    const bytes = xlsx([['&net;', '&host;'], ['plain', 42]], { sharedStringsHead: head });
    let text = '';
    try {
      text = (await readDocument(jail, bytes, { fileName: 'evil.xlsx' }, limits)).text;
    } catch (err) {
      expect(err).to.be.instanceOf(DocumentRefused);
    }
    expect(hits).to.deep.equal([]);
    expect(text).to.not.contain('STOLEN-BY-ENTITY');
    const hostname = (await import('node:os')).hostname();
    if (text) expect(text).to.not.contain(hostname);
  });

  it('a DOCX with external entities in document.xml reaches neither the network nor host files', async () => {
    // The entities sit in the XML prolog of the main part.
    const { strToU8, zipSync } = await import('fflate');
    const bytes = Buffer.from(
      zipSync({
        '[Content_Types].xml': strToU8('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'),
        '_rels/.rels': strToU8('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>'),
        'word/document.xml': strToU8(`<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE d [<!ENTITY net SYSTEM "${url}/xxe-docx"><!ENTITY host SYSTEM "file:///etc/passwd">]><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>a&net;b&host;c</w:t></w:r></w:p></w:body></w:document>`),
      }),
    );
    let text = '';
    try {
      text = (await readDocument(jail, bytes, { fileName: 'evil.docx' }, limits)).text;
    } catch (err) {
      expect(err).to.be.instanceOf(DocumentRefused);
    }
    expect(hits).to.deep.equal([]);
    expect(text).to.not.contain('STOLEN-BY-ENTITY').and.not.contain('root:');
  });

  it('a zip bomb that lies about its size (declares 1 KB, inflates to 600 MB) is stopped by the jail and refused in words', async () => {
    const bomb = lyingZipBombDocx(600);
    expect(bomb.length).to.be.below(2_000_000);
    // The jail stops it by its time (or memory) limit: a short one here, since the full 20 s would be spent inflating.
    const err = await readDocument(jail, bomb, { fileName: 'bomb.docx' }, { ...limits, seconds: 4 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(DocumentRefused);
    expect((err as Error).message).to.match(/^I (gave up reading|could not read) “bomb\.docx”/);
  });

  it('the jail has no network for the reader: a PDF pointing at a loopback URL is read without any request', async () => {
    const doc = await readDocument(jail, textPdf([[`see ${url}/from-pdf for details`]]), { fileName: 'link.pdf' }, limits);
    expect(doc.text).to.contain('/from-pdf');
    expect(hits).to.deep.equal([]);
  });
});
