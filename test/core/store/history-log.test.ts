import { expect } from 'chai';
import { spawn } from 'node:child_process';
import Database from 'libsql';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DataHealth } from '../../../core/services/store/data-health.js';
import { registerDataHealth } from '../../../core/services/store/data-domain.js';
import { HistoryStore } from '../../../core/services/store/history.js';
import { checkDatabaseFile, closeDatabase } from '../../../core/services/store/database.js';
import { ROOT } from '../../helpers/checkout.js';
import { storeDatabaseText, storedHistory, storedSummary } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

const CHAT = '10000000007@s.whatsapp.net';
const dist = (rel: string) => JSON.stringify(path.join(ROOT, 'dist', rel));

/**
 * Appends as fast as it can (a burst over three chats) and says which message was answered once append resolved. In
 * `turns` mode each round is a turn as the chat makes it: the question held for its answer (`heldForNextWrite`), the
 * answer appended once the event loop turned, both answered once both resolved.
 */
const APPENDER = `
const { HistoryStore } = await import(${dist('core/services/store/history.js')});
const [data, run, mode] = process.argv.slice(2);
const store = new HistoryStore(data, 100000);
const chats = ['a@s.whatsapp.net', 'b@s.whatsapp.net', 'c@s.whatsapp.net'];
const entry = (chat, i) => ({ id: run + chat + '-' + i, role: i % 2 ? 'assistant' : 'user', text: 'message ' + i + ' ' + 'x'.repeat(i % 50), at: i });
for (let i = 0; ; i++) {
  if (mode === 'turns') {
    await Promise.all(chats.map(async (chat) => {
      const question = store.append(chat, entry(chat, 2 * i), { heldForNextWrite: true });
      await new Promise((r) => setImmediate(r));
      await store.append(chat, entry(chat, 2 * i + 1));
      await question;
    }));
    process.stdout.write(2 * i + 1 + '\\n');
    continue;
  }
  await Promise.all(chats.map((chat) => store.append(chat, entry(chat, i))));
  process.stdout.write(i + '\\n');
}
`;

/** Runs the appender and kills it with SIGKILL once it has answered `after` rounds; returns the last round answered. */
async function killDuringBurst(script: string, data: string, run: string, after: number, mode = 'burst'): Promise<number> {
  const child = spawn(process.execPath, [script, data, run, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
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

describe('history in the store database', function () {
  const temp = storeFolderPerTest();
  const texts = (entries: Array<{ text: string }>) => entries.map((e) => e.text);

  it('a message costs one row: the appends of one turn share one transaction, and nothing is written under data/history', async () => {
    const store = new HistoryStore(temp.dir, 50);
    const before = store.foldsWritten;
    await Promise.all(Array.from({ length: 5 }, (_, i) => store.append(CHAT, { id: `m${i}`, role: 'user', text: `hello ${i}`, at: i })));
    expect(store.foldsWritten - before, 'one transaction for the five appends of one turn').to.equal(1);
    expect(texts(storedHistory(temp.dir, CHAT))).to.deep.equal(['hello 0', 'hello 1', 'hello 2', 'hello 3', 'hello 4']);
    expect(existsSync(path.join(temp.dir, 'history'))).to.equal(false);
  });

  it('keeps the last maxMessages of a chat, in memory and (trimmed a batch at a time) in the database', async () => {
    const store = new HistoryStore(temp.dir, 4);
    for (let i = 0; i < 30; i++) await store.append(CHAT, { role: 'user', text: `t${i}`, at: i });
    expect(texts(await store.recent(CHAT))).to.deep.equal(['t26', 't27', 't28', 't29']);
    const rows = storedHistory(temp.dir, CHAT);
    expect(rows.length).to.be.within(4, 5);
    expect(texts(rows).slice(-4)).to.deep.equal(['t26', 't27', 't28', 't29']);
    expect(texts(await new HistoryStore(temp.dir, 4).recent(CHAT))).to.deep.equal(['t26', 't27', 't28', 't29']);
  });

  it('a data/history folder of the earlier layout is taken in at first use, nothing lost: the JSON file, its logs replayed over it (a torn last line and lines already folded skipped and counted), the summary; then kept aside under data/migrated/', async () => {
    const folder = path.join(temp.dir, 'history');
    await mkdir(folder, { recursive: true });
    const summary = { text: 'they talked about sailing', at: 5, folded: 4, people: [CHAT], recent: [{ id: 'old-1', role: 'user', senderId: CHAT }] };
    await writeFile(path.join(folder, `${CHAT}.json`), JSON.stringify({ version: 1, logSeq: 1, messages: [{ id: 'one', role: 'user', senderId: CHAT, text: 'one', at: 1 }], summary }));
    // A crash of that version between rewriting the JSON file and emptying the log: the folded line is still there.
    await writeFile(path.join(folder, `${CHAT}.jsonl`), JSON.stringify({ seq: 1, role: 'user', text: 'one', at: 1 }) + '\n');
    await appendFile(path.join(folder, `${CHAT}.jsonl`), JSON.stringify({ seq: 2, role: 'assistant', text: 'two', at: 2, answers: CHAT }) + '\n');
    await appendFile(path.join(folder, `${CHAT}.jsonl`), JSON.stringify({ seq: 3, role: 'user', text: 'not valid', at: 'x' }) + '\n');
    await appendFile(path.join(folder, `${CHAT}.jsonl`), '{"seq":4,"role":"user","te');
    // A compaction it did not finish: its folding file comes before the log.
    const GROUP = '120363000000000009@g.us';
    await writeFile(path.join(folder, `${GROUP}.folding.jsonl`), JSON.stringify({ seq: 1, role: 'user', senderId: CHAT, text: 'in the group', at: 3 }) + '\n');
    await writeFile(path.join(folder, `${GROUP}.jsonl`), JSON.stringify({ seq: 2, role: 'assistant', text: 'group answer', at: 4 }) + '\n');
    const health = new DataHealth(temp.dir);
    const unregister = registerDataHealth(health);
    try {
      const store = new HistoryStore(temp.dir, 50);
      // Every chat is known at once (the .mydata export and the local API list chats they never read).
      expect(await store.chatIds()).to.deep.equal([CHAT, GROUP].sort());
      expect(health.skipped).to.equal(2);
      expect(await store.recent(CHAT)).to.deep.equal([
        { id: 'one', role: 'user', senderId: CHAT, text: 'one', at: 1 },
        { role: 'assistant', text: 'two', at: 2, answers: CHAT },
      ]);
      expect(await store.summary(CHAT)).to.deep.equal(summary);
      expect(texts(await store.recent(GROUP))).to.deep.equal(['in the group', 'group answer']);
      expect(await readdir(folder)).to.deep.equal([]);
      expect((await readdir(path.join(temp.dir, 'migrated', 'history'))).sort()).to.deep.equal([`${CHAT}.json`, `${CHAT}.jsonl`, `${GROUP}.folding.jsonl`, `${GROUP}.jsonl`].sort());
      // Read back from the file alone, after a restart.
      closeDatabase(temp.dir);
      expect(texts(storedHistory(temp.dir, CHAT))).to.deep.equal(['one', 'two']);
      const again = new HistoryStore(temp.dir, 50);
      expect(texts(await again.recent(CHAT))).to.deep.equal(['one', 'two']);
      expect((await again.summary(CHAT))?.text).to.equal('they talked about sailing');
      await again.append(CHAT, { role: 'user', text: 'three', at: 6 });
      expect(texts(await new HistoryStore(temp.dir, 50).recent(CHAT))).to.deep.equal(['one', 'two', 'three']);
    } finally {
      unregister();
    }
  });

  it('a crash between taking the files in and moving them aside takes nothing in twice', async () => {
    const folder = path.join(temp.dir, 'history');
    await mkdir(folder, { recursive: true });
    const file = path.join(folder, `${CHAT}.json`);
    const bytes = JSON.stringify({ version: 1, messages: [{ id: 'a', role: 'user', text: 'only once', at: 1 }] });
    await writeFile(file, bytes);
    expect(texts(await new HistoryStore(temp.dir, 50).recent(CHAT))).to.deep.equal(['only once']);
    // The same file again, as if the move aside never happened.
    await writeFile(file, bytes);
    closeDatabase(temp.dir);
    expect(texts(await new HistoryStore(temp.dir, 50).recent(CHAT))).to.deep.equal(['only once']);
    expect(existsSync(file)).to.equal(false);
  });

  it('changedSince says whether a chat was written at or after a time', async () => {
    const store = new HistoryStore(temp.dir, 50);
    expect(await store.changedSince(CHAT, 0)).to.equal(false);
    const before = Date.now() - 1000;
    await store.append(CHAT, { role: 'user', text: 'hello', at: 1 });
    expect(await store.changedSince(CHAT, before)).to.equal(true);
    expect(await store.changedSince(CHAT, Date.now() + 60_000)).to.equal(false);
    expect(await store.changedSince('10000000099@s.whatsapp.net', before)).to.equal(false);
  });

  it('a revoked message leaves neither store.db nor its WAL', async () => {
    const store = new HistoryStore(temp.dir, 50);
    await store.append(CHAT, { id: 'keep', role: 'user', text: 'fine', at: 1 });
    await store.append(CHAT, { id: 'gone', role: 'user', text: 'secret words', at: 2 });
    expect(await storeDatabaseText(temp.dir)).to.include('secret words');
    expect(await store.remove(CHAT, 'gone')).to.equal(true);
    expect(await storeDatabaseText(temp.dir)).not.to.include('secret words');
    expect((await new HistoryStore(temp.dir, 50).recent(CHAT)).map((m) => m.id)).to.deep.equal(['keep']);
  });

  it('appends go on during a rewrite (a fold, an edit), and afterwards every message is there exactly once, in order', async () => {
    const store = new HistoryStore(temp.dir, 50);
    for (let i = 1; i <= 20; i++) void store.append(CHAT, { id: `m${i}`, role: 'user', text: `m${i}`, at: i });
    const folding = store.fold(CHAT, (await store.recent(CHAT)).slice(0, 5), undefined, 'the first five');
    for (let i = 21; i <= 40; i++) void store.append(CHAT, { id: `m${i}`, role: 'user', text: `m${i}`, at: i });
    expect(await folding).to.equal(true);
    await store.updateWhere(CHAT, (e) => e.id === 'm30', (e) => ({ ...e, text: 'm30 edited' }));
    await store.whenIdle();
    const expected = Array.from({ length: 35 }, (_, i) => (i + 6 === 30 ? 'm30 edited' : `m${i + 6}`));
    expect(texts(storedHistory(temp.dir, CHAT))).to.deep.equal(expected);
    expect(texts(await new HistoryStore(temp.dir, 50).recent(CHAT))).to.deep.equal(expected);
  });

  it('a fold deletes the folded rows and writes the summary in one transaction; the kept rows are not written again', async () => {
    const store = new HistoryStore(temp.dir, 50);
    for (let i = 1; i <= 30; i++) void store.append(CHAT, { id: `m${i}`, role: 'user', text: `m${i}`, at: i });
    await store.whenIdle();
    const rowsOf = () => {
      const db = new Database(path.join(temp.dir, 'store.db'), { readonly: true, fileMustExist: true });
      try {
        return db.prepare('SELECT seq, item FROM "chat-log:core:history" WHERE chat = ? ORDER BY seq').all(CHAT) as Array<{ seq: number; item: string }>;
      } finally {
        db.close();
      }
    };
    const before = rowsOf();
    const transactions = store.foldsWritten;
    const folding = store.fold(CHAT, (await store.recent(CHAT)).slice(0, 12), undefined, 'the first twelve');
    // Appended while the fold is on its way: written in the same transaction, after the kept rows.
    void store.append(CHAT, { id: 'm31', role: 'user', text: 'm31', at: 31 });
    expect(await folding).to.equal(true);
    await store.whenIdle();
    expect(store.foldsWritten - transactions, 'the fold and the append share one transaction').to.equal(1);
    const after = rowsOf();
    expect(after.map((r) => JSON.parse(r.item).text)).to.deep.equal(Array.from({ length: 19 }, (_, i) => `m${i + 13}`));
    // The kept rows are the very rows written before (same seq): a fold no longer rewrites the chat.
    expect(after.slice(0, 18)).to.deep.equal(before.slice(12));
    expect(storedSummary(temp.dir, CHAT)?.text).to.equal('the first twelve');
    // Read back from the database alone, the chat is as it was in memory.
    closeDatabase(temp.dir);
    const again = new HistoryStore(temp.dir, 50);
    expect(texts(await again.recent(CHAT))).to.deep.equal(Array.from({ length: 19 }, (_, i) => `m${i + 13}`));
    expect((await again.summary(CHAT))?.folded).to.equal(12);
  });

  it('a process killed with SIGKILL during a burst keeps every answered message (questions held for their answers too), and the database is whole', async function () {
    this.timeout(30000);
    const script = path.join(temp.dir, 'appender.mjs');
    await writeFile(script, APPENDER);
    const data = path.join(temp.dir, 'data');
    const answered: Record<string, number> = {};
    for (const [run, after, mode] of [['r1:', 5, 'burst'], ['r2:', 40, 'burst'], ['r3:', 90, 'burst'], ['r4:', 61, 'turns']] as const) {
      answered[run] = await killDuringBurst(script, data, run, after, mode);
      // What the next start reads: the database and its WAL as the killed process left them.
      expect(checkDatabaseFile(path.join(data, 'store.db'))).to.equal(undefined);
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
      // The next run's process writes the file: this one lets go of it.
      closeDatabase(data);
    }
  });
});
