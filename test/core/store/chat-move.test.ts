import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { readdir, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { HistoryStore, type HistoryEntry } from '../../../core/services/store/history.js';
import { domainFor } from '../../../core/services/store/data-domain.js';
import { MemoryStore } from '../../../core/services/store/memory.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { storedHistory } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

const LID = '98765432100001@lid';
const PHONE = '6281211110000@s.whatsapp.net';
const said = (text: string, at: number): HistoryEntry => ({ id: `m-${at}`, role: 'user', senderId: PHONE, text, at });
const lidFiles = async (folder: string) => (await readdir(folder).catch(() => [] as string[])).filter((n) => n.startsWith(LID));

describe('history and memory: a private chat moving from its LID to its phone id', () => {
  const folder = storeFolderPerTest({ prefix: 'chat-move-' });

  it('history: lines still in the LID log move; a line written after the move goes under the phone id only, after a restart too', async () => {
    const histories = new HistoryStore(folder.dir, 50);
    await histories.append(LID, said('my cat is called Miso', 1000)); // in the append-only log, not folded yet
    expect(await histories.recent(PHONE)).to.deep.equal([]); // the phone chat is loaded (empty) before the move
    await histories.moveChat(LID, PHONE);
    expect(await histories.recent(LID), 'nothing of the LID stays in memory').to.deep.equal([]);
    await histories.append(PHONE, said('she is three', 3000));
    await histories.flush();
    expect(storedHistory(folder.dir, LID)).to.deep.equal([]);
    const after = new HistoryStore(folder.dir, 50);
    expect((await after.recent(PHONE)).map((e) => e.text)).to.deep.equal(['my cat is called Miso', 'she is three']);
    expect(await after.recent(LID)).to.deep.equal([]);
  });

  it('history: a summary of the LID chat coming back while the move is being written brings nothing back under the LID', async () => {
    const histories = new HistoryStore(folder.dir, 50);
    for (const [text, at] of [['my cat is called Miso', 1], ['she is three', 2], ['and black', 3]] as const) await histories.append(LID, said(text, at));
    await histories.flush();
    // The fold was asked for before the move; the model's summary comes back after the move began, before its write
    // (the write goes after this turn of the event loop).
    const folded = (await histories.recent(LID)).slice(0, 2);
    const moving = histories.moveChat(LID, PHONE);
    expect(await histories.fold(LID, folded, undefined, 'Miso is a black cat of three')).to.equal(false);
    await moving;
    await histories.flush();
    expect(await histories.recent(LID)).to.deep.equal([]);
    expect(storedHistory(folder.dir, LID)).to.deep.equal([]);
    const after = new HistoryStore(folder.dir, 50);
    expect(await after.recent(LID)).to.deep.equal([]);
    expect((await after.recent(PHONE)).map((e) => e.text)).to.deep.equal(['my cat is called Miso', 'she is three', 'and black']);
  });

  it('history: onto a chat with a history already, both merged in time order within the bound; again after a crash adds nothing', async () => {
    const histories = new HistoryStore(folder.dir, 4);
    for (const [text, at] of [['p1', 1], ['p3', 3], ['p5', 5]] as const) await histories.append(PHONE, said(text, at));
    for (const [text, at] of [['l2', 2], ['l4', 4], ['l6', 6]] as const) await histories.append(LID, said(text, at));
    await histories.flush();
    // The LID's history as an earlier version's file held it (what a crash of that version in a move leaves behind).
    const lidJson = JSON.stringify({ version: 1, messages: storedHistory(folder.dir, LID) });
    await histories.moveChat(LID, PHONE);
    expect((await histories.recent(PHONE)).map((e) => e.text)).to.deep.equal(['p3', 'l4', 'p5', 'l6']);
    // The crash: the LID's file is still there (its removal never happened); the next start moves it again.
    await mkdir(path.join(folder.dir, 'history'), { recursive: true });
    await writeFile(path.join(folder.dir, 'history', `${LID}.json`), lidJson);
    const restarted = new HistoryStore(folder.dir, 4);
    await restarted.moveChat(LID, PHONE);
    expect((await restarted.recent(PHONE)).map((e) => e.text)).to.deep.equal(['p3', 'l4', 'p5', 'l6']);
    await restarted.flush();
    expect(storedHistory(folder.dir, PHONE).map((e) => e.text)).to.deep.equal(['p3', 'l4', 'p5', 'l6']);
    expect(storedHistory(folder.dir, LID)).to.deep.equal([]);
    expect(await lidFiles(path.join(folder.dir, 'history'))).to.deep.equal([]);
  });

  it('memory: a change not written yet moves and never brings the LID file back; a fact remembered after the move goes under the phone id', async () => {
    const memories = new MemoryStore(folder.dir, 100);
    await memories.remember(LID, 'likes green tea', LID);
    await memories.remember(LID, 'wrong fact', LID);
    await memories.forget(LID, { containing: 'wrong' }); // its write waits a moment
    expect(await memories.facts(PHONE)).to.deep.equal([]); // loaded (empty) before the move
    await memories.moveChat(LID, PHONE);
    expect(await memories.facts(LID), 'nothing of the LID stays in memory').to.deep.equal([]);
    await memories.remember(PHONE, 'works nights', PHONE);
    // Every write still pending in the folder happens on its own first: none may bring the LID file back.
    await domainFor(folder.dir).whenIdle();
    await memories.flush();
    expect(await lidFiles(path.join(folder.dir, 'memory'))).to.deep.equal([]);
    const after = new MemoryStore(folder.dir, 100);
    expect((await after.facts(PHONE)).map((f) => f.text)).to.deep.equal(['likes green tea', 'works nights']);
    expect(await after.facts(LID)).to.deep.equal([]);
  });

  it('memory: onto a chat with facts already, merged by time, a fact held on both sides once, overflow archived (never dropped)', async () => {
    await mkdir(path.join(folder.dir, 'memory'), { recursive: true });
    const fact = (text: string, at: number) => ({ text, at });
    await writeFile(path.join(folder.dir, 'memory', `${PHONE}.json`), JSON.stringify({ version: 1, facts: [fact('phone one', 1), fact('both', 3), fact('phone four', 4)] }));
    await writeFile(path.join(folder.dir, 'memory', `${LID}.json`), JSON.stringify({ version: 1, facts: [fact('lid two', 2), fact('both', 3), fact('lid five', 5)], archived: [fact('lid zero', 0)] }));
    const memories = new MemoryStore(folder.dir, 4);
    await memories.moveChat(LID, PHONE);
    const again = new MemoryStore(folder.dir, 4);
    expect((await again.facts(PHONE)).map((f) => f.text)).to.deep.equal(['lid two', 'both', 'phone four', 'lid five']);
    expect((await again.archived(PHONE)).map((f) => f.text)).to.deep.equal(['lid zero', 'phone one']);
    expect(existsSync(path.join(folder.dir, 'memory', `${LID}.json`))).to.equal(false);
    // Moved again after a crash (the LID file back as it was): nothing doubles.
    await writeFile(path.join(folder.dir, 'memory', `${LID}.json`), JSON.stringify({ version: 1, facts: [fact('lid two', 2), fact('both', 3), fact('lid five', 5)], archived: [fact('lid zero', 0)] }));
    await new MemoryStore(folder.dir, 4).moveChat(LID, PHONE);
    const third = new MemoryStore(folder.dir, 4);
    expect((await third.facts(PHONE)).map((f) => f.text)).to.deep.equal(['lid two', 'both', 'phone four', 'lid five']);
    expect((await third.archived(PHONE)).map((f) => f.text)).to.deep.equal(['lid zero', 'phone one']);
  });
});

describe('a chat move that failed part-way is tried again at the chat\'s next message (not only after a restart)', () => {
  let t: TestBot | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  it('what a store could not move the first time follows the chat once it writes again', async () => {
    t = await startTestBot('bundled', { config: { access: { mode: 'everyone', allow: [], block: [] } } });
    // A store whose disk fails once (a full disk, a locked file), then works: chat id → what it keeps.
    const kept = new Map<string, string[]>([[LID, ['the LID chat\'s notes']]]);
    let failures = 1;
    t.app.bot.privacy.register({
      name: 'flaky notes',
      exportFor: async () => [],
      deleteFor: async () => 0,
      moveChat: async (from, to) => {
        if (failures-- > 0) throw new Error('EIO: the disk failed');
        kept.set(to, [...(kept.get(to) ?? []), ...(kept.get(from) ?? [])]);
        kept.delete(from);
      },
    });
    await t.app.bot.moveChat(LID, PHONE);
    expect(kept.get(LID)).to.deep.equal(['the LID chat\'s notes']);
    expect(t.logs().some((l) => /could not move all of a private chat's data/.test(String(l.msg)))).to.equal(true);
    await t.transport.push({ chatId: PHONE, senderId: PHONE, text: '.ping' });
    await t.app.bot.idle();
    expect(kept.get(PHONE)).to.deep.equal(['the LID chat\'s notes']);
    expect(kept.has(LID)).to.equal(false);
    // Done once: a later message moves nothing again.
    await t.transport.push({ chatId: PHONE, senderId: PHONE, text: '.ping' });
    await t.app.bot.idle();
    expect(failures).to.equal(-1);
  });
});
