import { expect } from 'chai';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import documentsPlugin from '../../../plugins/documents/index.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

const ANN = '6281200000031@s.whatsapp.net';
const LIMIT = 10_000;

/** A CSV of about `bytes` bytes (CSV is stored as is: its size is its bytes). */
const csv = (bytes: number) => Buffer.from(`name,score\n${Array.from({ length: Math.ceil(bytes / 12) }, (_, i) => `p${String(i).padStart(5, '0')},${i % 100}`).join('\n')}\n`);

/**
 * maxDocumentBytes holds for the bytes WhatsApp actually hands over, not only for the size the sender's client
 * declared: a modified client can declare 1 KB and serve far more.
 */
describe('documents: maxDocumentBytes against the real size, whatever size was declared', function () {
  this.timeout(60_000);
  let t: TestBot | undefined;
  let downloads: number;

  beforeEach(async () => {
    downloads = 0;
    t = await startTestBot(documentsPlugin, { options: { maxDocumentBytes: LIMIT } });
  });
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  const send = (fileName: string, bytes: Buffer, declared: number | undefined) =>
    t!.send({ chatId: ANN, senderId: ANN, text: 'who scored best?', media: { kind: 'document', mimetype: 'text/csv', fileName, ...(declared === undefined ? {} : { size: declared }), download: async () => (downloads++, bytes) } });
  const kept = () => readdir(path.join(t!.dir, 'data', 'media', 'documents', 'files')).catch(() => [] as string[]);

  it('a document declared small but larger than maxDocumentBytes is refused in words: nothing reaches the model, nothing is kept', async () => {
    const big = csv(LIMIT * 3);
    expect(big.length).to.be.greaterThan(LIMIT);
    const replies = await send('scores.csv', big, 1_000);
    // (In the plugin's words or the core's download limit's: either refuses in words.)
    expect(replies.join('\n')).to.match(/too large for me/);
    expect(t!.model.requests).to.have.length(0);
    expect(await kept()).to.deep.equal([]);
    // Without any declared size, the same.
    expect((await send('undeclared.csv', big, undefined)).join('\n')).to.match(/too large for me/);
    expect(t!.model.requests).to.have.length(0);
  });

  it('one declared larger than maxDocumentBytes is refused before downloading; one within it is read', async () => {
    expect((await send('declared.csv', csv(100), LIMIT + 1)).join('\n')).to.match(/“declared\.csv” is too large for me/);
    expect(downloads, 'not downloaded').to.equal(0);
    const small = csv(LIMIT / 2);
    await send('small.csv', small, small.length);
    expect(t!.model.requests).to.have.length(1);
    expect(JSON.stringify(t!.model.requests[0]!.messages)).to.contain('p00001').and.to.contain('p00100');
    expect(await kept()).to.have.length(1);
  });
});
