import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { RecallStore } from '../../../plugins/recall/log-store.js';

const ANA = '10000000001@s.whatsapp.net';

describe('recall: an index snapshot made with other index options', function () {
  let root: string;
  const start = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1, 1);
  const snapshot = () => path.join(root, ANA, `${new Date(start).toISOString().slice(0, 7)}.index`);

  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'recall-format-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('is not used (an older release wrote it): the month is indexed from its log, said in the log, and the snapshot replaced', async () => {
    const first = new RecallStore(root, {}, { snapshotMinLines: 10 });
    await first.chat(ANA).addMany(Array.from({ length: 30 }, (_, i) => ({ role: 'user' as const, senderId: ANA, text: i === 4 ? 'the gate code is pelican88' : `chatter ${i}`, at: start + i })));
    await first.chat(ANA).search('warm up');
    await first.flush();
    const text = await readFile(snapshot(), 'utf8');
    const newline = text.indexOf('\n');
    const header = JSON.parse(text.slice(0, newline)) as { format: string };
    const current = header.format;
    // Same checksum and file coverage, only the format differs (the index options of an older release).
    await writeFile(snapshot(), JSON.stringify({ ...header, format: 'flexsearch-0.7/forward/1' }) + text.slice(newline));

    const reasons: string[] = [];
    const restarted = new RecallStore(root, { indexRebuilt: (_f, _n, reason) => reasons.push(reason) }, { snapshotMinLines: 10 });
    assert.deepEqual((await restarted.chat(ANA).search('pelican88')).map((h) => h.message.text), ['the gate code is pelican88']);
    assert.deepEqual(reasons, ['its snapshot is stale: it was made with another index format (flexsearch-0.7/forward/1)']);
    await restarted.flush();
    assert.equal((JSON.parse((await readFile(snapshot(), 'utf8')).split('\n')[0]) as { format: string }).format, current);
  });
});
