import { expect } from 'chai';
import { appendFile, readdir, readFile, readlink, rm } from 'node:fs/promises';
import path from 'node:path';
import { DataHealth, registerDataHealth } from '../../core/store/data-health.js';
import { HistoryStore, type HistoryEntry } from '../../core/store/history.js';
import { tempDir } from '../helpers/test-app.js';

const CHAT = '10000000009@s.whatsapp.net';
const said = (text: string, at: number, id?: string): HistoryEntry => ({ ...(id ? { id } : {}), role: 'user', text, at });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The files under `dir` this process holds open right now (Linux: /proc/self/fd). */
async function openFilesUnder(dir: string): Promise<string[]> {
  const fds = await readdir('/proc/self/fd');
  const targets = await Promise.all(fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
  return targets.filter((t) => t.startsWith(dir + path.sep)).map((t) => path.relative(dir, t)).sort();
}

describe('history log: when it is folded, and what a fold or a replay leaves', function () {
  let dir: string;
  const jsonFile = () => path.join(dir, 'history', `${CHAT}.json`);
  const logFile = () => path.join(dir, 'history', `${CHAT}.jsonl`);
  const logLines = async () => (await readFile(logFile(), 'utf8')).split('\n').filter(Boolean);
  const readJson = async () => JSON.parse(await readFile(jsonFile(), 'utf8')) as { messages: HistoryEntry[]; logSeq: number };
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('with maxMessages 3, 11 messages are 11 log lines and no JSON rewrite; the 12th folds them all in', async () => {
    const store = new HistoryStore(dir, 3);
    for (let i = 1; i <= 11; i++) await store.append(CHAT, said(`line ${i}`, i));
    await pause(20);
    expect((await logLines()).map((l) => JSON.parse(l).seq)).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(await readdir(path.join(dir, 'history'))).to.deep.equal([`${CHAT}.jsonl`]);
    await store.append(CHAT, said('line 12', 12));
    // The fold runs behind the reply: wait for it (bounded), never flush.
    let doc: { messages: HistoryEntry[]; logSeq: number } | undefined;
    for (let i = 0; i < 300 && !(doc && (await logLines()).length === 0); i++) {
      doc = await readJson().catch(() => undefined);
      if (!doc || (await logLines()).length) await pause(10);
    }
    expect(doc?.messages.map((m) => m.text)).to.deep.equal(['line 10', 'line 11', 'line 12']);
    expect(doc?.logSeq).to.equal(12);
    expect(await logLines()).to.deep.equal([]);
  });

  it('a message deleted for everyone after the log was folded is removed from the JSON file at once', async () => {
    const store = new HistoryStore(dir, 50, { compactEvery: 1000 });
    await store.append(CHAT, said('see you at noon', 1, 'keep'));
    await store.append(CHAT, said('my pin is 4711', 2, 'gone'));
    await store.flush();
    expect(await store.remove(CHAT, 'gone')).to.equal(true);
    expect(await readFile(jsonFile(), 'utf8')).not.to.include('4711');
    expect((await new HistoryStore(dir, 50).recent(CHAT)).map((m) => m.id)).to.deep.equal(['keep']);
  });

  it('a torn last line on its own (kill -9 mid-append) is skipped and reported, the lines before it kept', async () => {
    const health = new DataHealth(dir);
    const unregister = registerDataHealth(health);
    try {
      const crashed = new HistoryStore(dir, 50, { compactEvery: 1000 });
      await crashed.append(CHAT, said('whole line', 1));
      await appendFile(logFile(), '{"seq":2,"role":"user","text":"cut sh');
      expect((await new HistoryStore(dir, 50).recent(CHAT)).map((m) => m.text)).to.deep.equal(['whole line']);
      expect(health.skipped).to.equal(1);
    } finally {
      unregister();
    }
  });

  it('release (the chat got a new id) folds its log into the JSON file and closes the log, so the files can move', async () => {
    const store = new HistoryStore(dir, 50, { compactEvery: 1000 });
    await store.append(CHAT, said('before the move', 1));
    expect(await openFilesUnder(dir)).to.deep.equal([path.join('history', `${CHAT}.jsonl`)]);
    await store.release(CHAT);
    expect(await openFilesUnder(dir)).to.deep.equal([]);
    expect((await readJson()).messages.map((m) => m.text)).to.deep.equal(['before the move']);
    expect(await logLines()).to.deep.equal([]);
  });

  it('flush (stop, backup) leaves no log of any chat open', async () => {
    const store = new HistoryStore(dir, 50, { compactEvery: 1000 });
    await store.append(CHAT, said('one', 1));
    await store.append('120363000000000001@g.us', said('two', 2));
    expect(await openFilesUnder(dir)).to.have.length(2);
    await store.flush();
    expect(await openFilesUnder(dir)).to.deep.equal([]);
  });
});
