import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { appendFile, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DataHealth } from '../../../core/services/store/data-health.js';
import { registerDataHealth } from '../../../core/services/store/data-domain.js';
import { HistoryStore } from '../../../core/services/store/history.js';
import { checkDocument, HISTORY_SCHEMA } from '../../../core/services/store/schemas.js';
import { ROOT, tempDir } from '../../helpers/checkout.js';

const CHAT = '10000000007@s.whatsapp.net';
const dist = (rel: string) => JSON.stringify(path.join(ROOT, 'dist', rel));

/** Appends as fast as it can (a burst over three chats) and says which message was answered once append resolved. */
const APPENDER = `
const { HistoryStore } = await import(${dist('core/services/store/history.js')});
const [data, run] = process.argv.slice(2);
const store = new HistoryStore(data, 100000, { compactEvery: 7 });
const chats = ['a@s.whatsapp.net', 'b@s.whatsapp.net', 'c@s.whatsapp.net'];
for (let i = 0; ; i++) {
  await Promise.all(chats.map((chat) => store.append(chat, { id: run + chat + '-' + i, role: i % 2 ? 'assistant' : 'user', text: 'message ' + i + ' ' + 'x'.repeat(i % 50), at: i })));
  process.stdout.write(i + '\\n');
}
`;

/** Runs the appender and kills it with SIGKILL once it has answered `after` rounds; returns the last round answered. */
async function killDuringBurst(script: string, data: string, run: string, after: number): Promise<number> {
  const child = spawn(process.execPath, [script, data, run], { stdio: ['ignore', 'pipe', 'inherit'] });
  let answered = -1;
  let buffered = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) answered = Number(line);
      if (answered >= after) {
        child.kill('SIGKILL');
        resolve();
      }
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`appender exited early (${code})`))));
  });
  await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(undefined) : child.once('close', r)));
  // Lines that arrived after the kill was asked for were answered too.
  for (const line of buffered.split('\n').filter(Boolean)) answered = Math.max(answered, Number(line));
  return answered;
}

describe('history: append-only log folded into the JSON file', function () {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('a message costs one log line, not a rewrite of the JSON file, and flush folds the log into the readable JSON', async () => {
    const store = new HistoryStore(dir, 50, { compactEvery: 10 });
    for (let i = 0; i < 5; i++) await store.append(CHAT, { id: `m${i}`, role: 'user', text: `hello ${i}`, at: i });
    const folder = path.join(dir, 'history');
    const log = (await readFile(path.join(folder, `${CHAT}.jsonl`), 'utf8')).trim().split('\n');
    expect(log.map((l) => JSON.parse(l).text)).to.deep.equal(['hello 0', 'hello 1', 'hello 2', 'hello 3', 'hello 4']);
    expect((await readdir(folder)).includes(`${CHAT}.json`)).to.equal(false);
    await store.flush();
    const doc = JSON.parse(await readFile(path.join(folder, `${CHAT}.json`), 'utf8'));
    expect(doc.messages.map((m: { text: string }) => m.text)).to.deep.equal(['hello 0', 'hello 1', 'hello 2', 'hello 3', 'hello 4']);
    expect(await readFile(path.join(folder, `${CHAT}.jsonl`), 'utf8')).to.equal('');
  });

  it('compacts every compactEvery lines, so the log never grows beyond that', async () => {
    const store = new HistoryStore(dir, 50, { compactEvery: 4 });
    for (let i = 0; i < 9; i++) await store.append(CHAT, { role: 'user', text: `t${i}`, at: i });
    // The background compaction finishes on its own, without a flush.
    await store.whenIdle();
    const log = await readFile(path.join(dir, 'history', `${CHAT}.jsonl`), 'utf8');
    expect(log.split('\n').filter(Boolean).length).to.be.below(4);
    const doc = JSON.parse(await readFile(path.join(dir, 'history', `${CHAT}.json`), 'utf8'));
    expect(doc.messages.length).to.be.at.least(8);
  });

  it('replays the log over the JSON file at load, skipping (and counting) a torn last line and lines already folded in', async () => {
    const folder = path.join(dir, 'history');
    const health = new DataHealth(dir);
    const unregister = registerDataHealth(health);
    try {
      const first = new HistoryStore(dir, 50, { compactEvery: 1000 });
      await first.append(CHAT, { role: 'user', text: 'one', at: 1 });
      await first.flush();
      // Crash between rewriting the JSON file and emptying the log: the folded line is still there.
      await writeFile(path.join(folder, `${CHAT}.jsonl`), JSON.stringify({ seq: 1, role: 'user', text: 'one', at: 1 }) + '\n');
      await appendFile(path.join(folder, `${CHAT}.jsonl`), JSON.stringify({ seq: 2, role: 'assistant', text: 'two', at: 2 }) + '\n');
      await appendFile(path.join(folder, `${CHAT}.jsonl`), JSON.stringify({ seq: 3, role: 'user', text: 'not valid', at: 'x' }) + '\n');
      await appendFile(path.join(folder, `${CHAT}.jsonl`), '{"seq":4,"role":"user","te');
      const again = new HistoryStore(dir, 50);
      expect((await again.recent(CHAT)).map((m) => m.text)).to.deep.equal(['one', 'two']);
      expect(health.skipped).to.equal(2);
      // The log was folded in at load: the next append does not follow the torn line.
      await again.append(CHAT, { role: 'user', text: 'three', at: 3 });
      const third = new HistoryStore(dir, 50);
      expect((await third.recent(CHAT)).map((m) => m.text)).to.deep.equal(['one', 'two', 'three']);
    } finally {
      unregister();
    }
  });

  it('changedSince says whether a chat was written at or after a time, without loading it', async () => {
    const store = new HistoryStore(dir, 50, { compactEvery: 1000 });
    expect(await store.changedSince(CHAT, 0)).to.equal(false);
    const before = Date.now() - 1000;
    await store.append(CHAT, { role: 'user', text: 'hello', at: 1 });
    expect(await store.changedSince(CHAT, before)).to.equal(true);
    expect(await store.changedSince(CHAT, Date.now() + 60_000)).to.equal(false);
    expect(await store.changedSince('10000000099@s.whatsapp.net', before)).to.equal(false);
  });

  it('a revoked message leaves neither the JSON file nor the log', async () => {
    const store = new HistoryStore(dir, 50, { compactEvery: 1000 });
    await store.append(CHAT, { id: 'keep', role: 'user', text: 'fine', at: 1 });
    await store.append(CHAT, { id: 'gone', role: 'user', text: 'secret words', at: 2 });
    expect(await store.remove(CHAT, 'gone')).to.equal(true);
    const folder = path.join(dir, 'history');
    for (const name of await readdir(folder)) expect(await readFile(path.join(folder, name), 'utf8')).not.to.include('secret words');
    expect((await new HistoryStore(dir, 50).recent(CHAT)).map((m) => m.id)).to.deep.equal(['keep']);
  });

  it('a process killed with SIGKILL during a burst keeps every answered message, and every file parses', async function () {
    this.timeout(30000);
    const script = path.join(dir, 'appender.mjs');
    await writeFile(script, APPENDER);
    const data = path.join(dir, 'data');
    const answered: Record<string, number> = {};
    for (const [run, after] of [['r1:', 5], ['r2:', 40], ['r3:', 90]] as const) {
      answered[run] = await killDuringBurst(script, data, run, after);
      const folder = path.join(data, 'history');
      const store = new HistoryStore(data, 100000);
      for (const chat of ['a@s.whatsapp.net', 'b@s.whatsapp.net', 'c@s.whatsapp.net']) {
        const ids = (await store.recent(chat)).map((m) => m.id!);
        expect(new Set(ids).size, 'a message replayed twice').to.equal(ids.length);
        // Every round answered before a kill is there, in order, in every earlier run too.
        for (const [tag, last] of Object.entries(answered)) {
          const mine = ids.filter((id) => id.startsWith(tag + chat + '-')).map((id) => Number(id.split('-').pop()));
          expect(mine.slice(0, last + 1), `${tag}${chat} lost answered messages`).to.deep.equal(Array.from({ length: last + 1 }, (_, i) => i));
        }
      }
      for (const name of await readdir(folder)) {
        const text = await readFile(path.join(folder, name), 'utf8');
        if (name.endsWith('.jsonl')) for (const line of text.split('\n').filter(Boolean)) JSON.parse(line);
        else if (name.endsWith('.json')) expect(checkDocument(HISTORY_SCHEMA, JSON.parse(text)).ok).to.equal(true);
      }
    }
  });
});
