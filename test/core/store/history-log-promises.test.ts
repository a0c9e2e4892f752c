import { expect } from 'chai';
import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { DataHealth } from '../../../core/services/store/data-health.js';
import { registerDataHealth } from '../../../core/services/store/data-domain.js';
import { HistoryStore, type HistoryEntry } from '../../../core/services/store/history.js';
import { tempDir } from '../../helpers/checkout.js';

const CHAT = '10000000008@s.whatsapp.net';
const said = (text: string, at: number): HistoryEntry => ({ role: 'user', text, at });

describe('history log: what it promises on disk', function () {
  let dir: string;
  const jsonFile = () => path.join(dir, 'history', `${CHAT}.json`);
  const logFile = () => path.join(dir, 'history', `${CHAT}.jsonl`);
  const jsonTexts = async () => (JSON.parse(await readFile(jsonFile(), 'utf8')) as { messages: HistoryEntry[] }).messages.map((m) => m.text);
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('.reset after the log was folded is on disk at once: a restart starts fresh', async () => {
    const store = new HistoryStore(dir, 50, { compactEvery: 1000 });
    await store.append(CHAT, said('my old topic is sailing', 1));
    await store.flush();
    expect(await store.clear(CHAT)).to.equal(1);
    expect(await readFile(jsonFile(), 'utf8')).not.to.include('sailing');
    expect(await new HistoryStore(dir, 50).recent(CHAT)).to.deep.equal([]);
  });

  it('the log is folded every 4 × maxMessages lines by default, and the JSON file keeps only the last maxMessages', async () => {
    const store = new HistoryStore(dir, 3);
    for (let i = 0; i < 25; i++) await store.append(CHAT, said(`line ${i}`, i));
    // A compaction never holds up an append (it may take lines that arrive meanwhile): let the ones these appends
    // started finish, without flushing; the next line then stays in the log.
    await store.whenIdle();
    await store.append(CHAT, said('line 25', 25));
    await store.whenIdle();
    const lines = (await readFile(logFile(), 'utf8')).split('\n').filter(Boolean);
    expect(lines.length).to.be.at.most(12);
    expect(lines.length).to.be.at.least(1);
    expect(await jsonTexts()).to.have.length(3);
  });

  it('a log replayed after a crash leaves a JSON file of at most maxMessages messages, the newest', async () => {
    const crashed = new HistoryStore(dir, 3, { compactEvery: 1000 });
    for (let i = 0; i < 8; i++) await crashed.append(CHAT, said(`line ${i}`, i));
    // No flush: the process died. The next start replays the log and folds it in.
    expect((await new HistoryStore(dir, 3).recent(CHAT)).map((m) => m.text)).to.deep.equal(['line 5', 'line 6', 'line 7']);
    expect(await jsonTexts()).to.deep.equal(['line 5', 'line 6', 'line 7']);
  });

  it('a message whose log line cannot be written is kept by the JSON file instead (and the failure reported)', async () => {
    const health = new DataHealth(dir);
    const unregister = registerDataHealth(health);
    try {
      // A folder stands where the chat's log should be: every append to it fails.
      await mkdir(logFile(), { recursive: true });
      const store = new HistoryStore(dir, 50, { compactEvery: 1000 });
      await store.append(CHAT, said('the meeting moved to thursday', 1));
      expect(health.unsaved().map((u) => u.file)).to.include(logFile());
      // Saved soon (changes are gathered for a few milliseconds), without waiting for a stop or the next fold.
      await store.whenIdle();
      expect(await jsonTexts()).to.deep.equal(['the meeting moved to thursday']);
      await rm(logFile(), { recursive: true });
      expect((await new HistoryStore(dir, 50).recent(CHAT)).map((m) => m.text)).to.deep.equal(['the meeting moved to thursday']);
    } finally {
      unregister();
    }
  });
});
