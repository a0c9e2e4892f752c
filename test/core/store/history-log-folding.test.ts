import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { appendFile, mkdir, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DataHealth } from '../../../core/services/store/data-health.js';
import { registerDataHealth } from '../../../core/services/store/data-domain.js';
import { HistoryStore, type HistoryEntry } from '../../../core/services/store/history.js';
import { ROOT, tempDir } from '../../helpers/checkout.js';

const CHAT = '10000000009@s.whatsapp.net';
const said = (text: string, at: number, id?: string): HistoryEntry => ({ ...(id ? { id } : {}), role: 'user', text, at });

/** Opens the chat in a fresh store (replaying its log), then appends one message; prints what happened. */
const OPEN_AND_APPEND = `
const { HistoryStore } = await import(${JSON.stringify(path.join(ROOT, 'dist', 'core', 'services', 'store', 'history.js'))});
const [data, chat] = process.argv.slice(2);
const store = new HistoryStore(data, 50);
const result = {};
try {
  result.recent = (await store.recent(chat)).map((m) => m.text);
  await store.append(chat, { role: 'user', text: 'written while the disk is full', at: 9 });
  result.appended = true;
} catch (err) {
  result.error = err.message;
}
process.stdout.write(JSON.stringify(result));
process.exit(0);
`;

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
    // Nothing runs in the background that could still fold them.
    await store.whenIdle();
    expect((await logLines()).map((l) => JSON.parse(l).seq)).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(await readdir(path.join(dir, 'history'))).to.deep.equal([`${CHAT}.jsonl`]);
    await store.append(CHAT, said('line 12', 12));
    // The fold runs behind the reply: wait for it, never flush.
    await store.whenIdle();
    const doc = await readJson();
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

  it('a chat whose log cannot be folded at load (the JSON file cannot be written: a full disk) still loads and keeps new messages', async function () {
    this.timeout(10000);
    const folder = path.join(dir, 'history');
    await mkdir(folder, { recursive: true });
    const lines = [1, 2, 3].map((seq) => JSON.stringify({ seq, role: 'user', text: `message number ${seq} with some words`, at: seq }) + '\n').join('');
    // Three whole lines (240 bytes) and the torn start of a fourth: what kill -9 mid-append leaves.
    await writeFile(logFile(), lines + '{"seq":4,"role":"user","te');
    const script = path.join(dir, 'open-and-append.mjs');
    await writeFile(script, OPEN_AND_APPEND);
    // A 300-byte file size limit: the log still takes a line, the folded JSON file (~350 bytes) cannot be written.
    const run = spawnSync('prlimit', ['--fsize=300', process.execPath, script, dir, CHAT], { encoding: 'utf8' });
    if (run.error) throw new Error(`prlimit (util-linux) is needed for this test: ${run.error.message}`);
    expect(run.status, run.stderr).to.equal(0);
    const texts = ['message number 1 with some words', 'message number 2 with some words', 'message number 3 with some words'];
    expect(JSON.parse(run.stdout)).to.deep.equal({ recent: texts, appended: true });
    // The next start (the disk has room again) has every message: the new line did not follow the torn one.
    expect((await new HistoryStore(dir, 50).recent(CHAT)).map((m) => m.text)).to.deep.equal([...texts, 'written while the disk is full']);
  });
});
