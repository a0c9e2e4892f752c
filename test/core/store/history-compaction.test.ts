import { expect } from 'chai';
import { appendFile, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { HistoryStore, type HistoryEntry } from '../../../core/services/store/history.js';
import { HISTORY_SCHEMA } from '../../../core/services/store/schemas.js';
import { tempDir } from '../../helpers/checkout.js';

const CHAT = '10000000006@s.whatsapp.net';
const said = (text: string, at: number, id?: string): HistoryEntry => ({ ...(id ? { id } : {}), role: 'user', text, at });
const line = (seq: number, text: string) => JSON.stringify({ seq, role: 'user', text, at: seq }) + '\n';

describe('history compaction: never holds up a message, and a crash in the middle of one loses nothing', () => {
  let dir: string;
  const folder = () => path.join(dir, 'history');
  const file = (ext: string) => path.join(folder(), `${CHAT}${ext}`);
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('a message appended while a compaction writes the JSON file is on disk before that write ends', async () => {
    const store = new HistoryStore(dir, 50, { compactEvery: 1000 });
    for (let i = 1; i <= 3; i++) await store.append(CHAT, said(`line ${i}`, i, `m${i}`));
    const order: string[] = [];
    // A privacy removal compacts (JSON rewritten with its fsync); a new message arrives right behind it.
    const removal = store.remove(CHAT, 'm2').then(() => order.push('removal'));
    // One turn of the event loop: the compaction has started (it waits for its JSON file's write from here on).
    await new Promise((resolve) => setImmediate(resolve));
    const appended = store.append(CHAT, said('line 4', 4)).then(() => order.push('append'));
    await appended;
    // The new message is on disk while the compaction still writes the JSON file (the lines it folds are set aside).
    expect(await readdir(folder()), 'the message waited for the compaction').to.include(`${CHAT}.folding.jsonl`);
    await removal;
    expect(order).to.deep.equal(['append', 'removal']);
    // Both reached the disk: the new message in the log, the removal everywhere.
    const again = new HistoryStore(dir, 50);
    expect((await again.recent(CHAT)).map((m) => m.text)).to.deep.equal(['line 1', 'line 3', 'line 4']);
    for (const name of await readdir(folder())) expect(await readFile(path.join(folder(), name), 'utf8'), name).not.to.include('line 2');
  });

  it('a crash after the log was set aside and before the JSON file was written: both logs are replayed, in order', async () => {
    const store = new HistoryStore(dir, 50, { compactEvery: 1000 });
    await store.append(CHAT, said('one', 1));
    await store.flush();
    // As a crash leaves it: the JSON file holds line 1, the folding file lines 2–3, the new log line 4.
    await writeFile(file('.folding.jsonl'), line(2, 'two') + line(3, 'three'));
    await writeFile(file('.jsonl'), line(4, 'four'));
    const again = new HistoryStore(dir, 50);
    expect((await again.recent(CHAT)).map((m) => m.text)).to.deep.equal(['one', 'two', 'three', 'four']);
    // Folded in at load: the JSON file holds everything, the folding file is gone and the log is empty.
    const doc = JSON.parse(await readFile(file('.json'), 'utf8')) as { version: number; messages: HistoryEntry[] };
    expect(doc.version).to.equal(HISTORY_SCHEMA.version);
    expect(doc.messages.map((m) => m.text)).to.deep.equal(['one', 'two', 'three', 'four']);
    expect(await readdir(folder())).not.to.include(`${CHAT}.folding.jsonl`);
    expect(await readFile(file('.jsonl'), 'utf8')).to.equal('');
  });

  it('a crash after the JSON file was written and before the folding file went: nothing is replayed twice', async () => {
    const store = new HistoryStore(dir, 50, { compactEvery: 1000 });
    for (const [i, text] of ['one', 'two', 'three'].entries()) await store.append(CHAT, said(text, i + 1));
    await store.flush();
    // The JSON file already holds lines 1–3; their folding file is still there, and the new log has line 4.
    await writeFile(file('.folding.jsonl'), line(2, 'two') + line(3, 'three'));
    await writeFile(file('.jsonl'), line(4, 'four'));
    await appendFile(file('.jsonl'), '{"seq":5,"role":"user","te');
    const again = new HistoryStore(dir, 50);
    expect((await again.recent(CHAT)).map((m) => m.text)).to.deep.equal(['one', 'two', 'three', 'four']);
    await again.append(CHAT, said('five', 5));
    expect((await new HistoryStore(dir, 50).recent(CHAT)).map((m) => m.text)).to.deep.equal(['one', 'two', 'three', 'four', 'five']);
  });

  it('a fold whose JSON file cannot be written keeps its lines aside: a later fold never replaces them', async () => {
    const store = new HistoryStore(dir, 50, { compactEvery: 1000 });
    for (let i = 1; i <= 3; i++) await store.append(CHAT, said(`m${i}`, i));
    // A folder where the JSON file goes: its atomic write cannot rename over it.
    await mkdir(path.join(file('.json'), 'blocker'), { recursive: true });
    await store.flush().then(
      () => expect.fail('the fold wrote a JSON file it could not write'),
      () => undefined,
    );
    for (let i = 4; i <= 5; i++) await store.append(CHAT, said(`m${i}`, i));
    await store.flush().catch(() => undefined);
    // Still not written: the lines of the first fold and the later ones are all on disk, none replaced.
    await rm(file('.json'), { recursive: true, force: true });
    const onDisk = async (ext: string) =>
      (await readFile(file(ext), 'utf8').catch(() => ''))
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { text: string }).text);
    expect([...(await onDisk('.folding.jsonl')), ...(await onDisk('.jsonl'))]).to.deep.equal(['m1', 'm2', 'm3', 'm4', 'm5']);
    // Once it can be written, the next fold folds everything and leaves no folding file.
    await store.flush();
    expect(await readdir(folder())).not.to.include(`${CHAT}.folding.jsonl`);
    expect((await new HistoryStore(dir, 50).recent(CHAT)).map((m) => m.text)).to.deep.equal(['m1', 'm2', 'm3', 'm4', 'm5']);
  });

  it('appends go on during compactions, and after them every line is in the JSON file or the log exactly once', async () => {
    const store = new HistoryStore(dir, 50, { compactEvery: 5 });
    for (let i = 1; i <= 40; i++) void store.append(CHAT, said(`m${i}`, i));
    await store.append(CHAT, said('m41', 41));
    // The compactions these started finish on their own (no flush); a restart then sees all 41, once each, in order.
    await store.whenIdle();
    const texts = (await new HistoryStore(dir, 50).recent(CHAT)).map((m) => m.text);
    expect(texts).to.deep.equal(Array.from({ length: 41 }, (_, i) => `m${i + 1}`));
  });
});

describe('history compaction: a chat folds once every compactEvery lines, not more', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('lines appended while a fold writes the JSON file do not ask for more folds', async () => {
    const store = new HistoryStore(dir, 50, { compactEvery: 5 });
    // Messages one after another, each line on disk before the next (as a chat's answers are): several arrive while
    // a fold's JSON file is still being written (its fsync takes milliseconds).
    for (let i = 1; i <= 100; i++) {
      await store.append(CHAT, said(`m${i}`, i));
      // A turn of the event loop between messages, as between two replies: a fold under way moves on meanwhile.
      await new Promise(setImmediate);
    }
    await store.whenIdle();
    // At most one fold per 5 lines (lines that came during a fold fold together later), never one per such line.
    expect(store.foldsWritten).to.be.within(1, 100 / 5);
    const texts = (await new HistoryStore(dir, 50).recent(CHAT)).map((m) => m.text);
    expect(texts).to.deep.equal(Array.from({ length: 50 }, (_, i) => `m${i + 51}`));
  });
});
