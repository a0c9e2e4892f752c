import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { closeDatabase } from '../../../core/services/store/database.js';
import { DataHealth } from '../../../core/services/store/data-health.js';
import { registerDataHealth } from '../../../core/services/store/data-domain.js';
import { MemoryStore } from '../../../core/services/store/memory.js';
import { PrivacyRegistry } from '../../../core/services/store/privacy.js';
import { HistoryStore } from '../../../core/services/store/history.js';
import { coreStores } from '../../../core/kernel/bot/core-stores.js';
import { everyFileText } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

const ALICE = '6281100000001@s.whatsapp.net';
const BOB = '6281100000002@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';

/** A memory file as versions before the store database wrote it: `data/memory/<chat>.json`. */
async function writeEarlierMemory(dataDir: string, chatId: string, doc: unknown): Promise<string> {
  const file = path.join(dataDir, 'memory', `${chatId}.json`);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify(doc));
  return file;
}

describe('memory in the store database', () => {
  const folder = storeFolderPerTest({ inside: 'data' });
  let unregister: () => void;
  beforeEach(() => {
    unregister = registerDataHealth(new DataHealth(folder.dir));
  });
  afterEach(() => unregister());
  const texts = (facts: Array<{ text: string }>) => facts.map((f) => f.text);

  it('keeps facts and the archive per chat in store.db across a reopen, and writes no memory file', async () => {
    const memories = new MemoryStore(folder.dir, 2);
    for (const fact of ['one', 'two', 'three']) await memories.remember(ALICE, fact, ALICE);
    await memories.remember(GROUP, 'group fact', BOB);
    closeDatabase(folder.dir);
    const again = new MemoryStore(folder.dir, 2);
    expect(texts(await again.facts(ALICE))).to.deep.equal(['two', 'three']);
    expect(texts(await again.archived(ALICE))).to.deep.equal(['one']);
    expect(await again.facts(GROUP)).to.deep.equal([{ text: 'group fact', at: (await again.facts(GROUP))[0].at, by: BOB }]);
    expect((await again.chats()).sort()).to.deep.equal([ALICE, GROUP].sort());
    expect(existsSync(path.join(folder.dir, 'memory'))).to.equal(false);
    expect(existsSync(path.join(folder.dir, 'store.db'))).to.equal(true);
  });

  it('a data folder of the earlier layout is taken in at first use, nothing lost, its files kept aside under data/migrated/', async () => {
    const earlier = { version: 1, facts: [{ text: 'likes green tea', at: 5, by: ALICE }], archived: [{ text: 'lived in Porto', at: 1 }] };
    const file = await writeEarlierMemory(folder.dir, ALICE, earlier);
    await writeEarlierMemory(folder.dir, GROUP, { version: 1, facts: [{ text: 'meets on Fridays', at: 2, by: BOB }] });
    const memories = new MemoryStore(folder.dir);
    // Every chat is known at once (the .mydata export lists chats it never read).
    expect((await memories.chats()).sort()).to.deep.equal([ALICE, GROUP].sort());
    expect(await memories.facts(ALICE)).to.deep.equal(earlier.facts);
    expect(await memories.archived(ALICE)).to.deep.equal(earlier.archived);
    expect(existsSync(file)).to.equal(false);
    expect(JSON.parse(await readFile(path.join(folder.dir, 'migrated', 'memory', `${ALICE}.json`), 'utf8'))).to.deep.equal(earlier);
  });

  it('a crash after the import and before the file moved aside takes nothing in twice', async () => {
    const doc = { version: 1, facts: [{ text: 'likes green tea', at: 5 }] };
    await writeEarlierMemory(folder.dir, ALICE, doc);
    await new MemoryStore(folder.dir).facts(ALICE);
    // The crash: the file is back where it was (its move never happened), and the chat changed meanwhile.
    await writeEarlierMemory(folder.dir, ALICE, doc);
    await new MemoryStore(folder.dir).forget(ALICE, 'all');
    closeDatabase(folder.dir);
    expect(await new MemoryStore(folder.dir).facts(ALICE)).to.deep.equal([]);
  });

  it('a file dropped in for a chat while the bot runs is taken in at that chat\'s next read', async () => {
    const memories = new MemoryStore(folder.dir);
    await memories.remember(ALICE, 'works nights', ALICE);
    await writeEarlierMemory(folder.dir, ALICE, { version: 1, facts: [{ text: 'likes green tea', at: 1 }, { text: 'works nights', at: 2 }] });
    expect(texts(await memories.facts(ALICE))).to.deep.equal(['likes green tea', 'works nights']);
  });

  it('the facts an answer reads are those of the last change: after a remember, a forget, a delete and a chat move', async () => {
    const memories = new MemoryStore(folder.dir, 2);
    expect(await memories.facts(ALICE)).to.deep.equal([]);
    await memories.remember(ALICE, 'likes tea', ALICE);
    expect(texts(await memories.facts(ALICE))).to.deep.equal(['likes tea']);
    // What a caller does with the list it got changes nothing kept.
    (await memories.facts(ALICE)).pop();
    expect(texts(await memories.facts(ALICE))).to.deep.equal(['likes tea']);
    await memories.remember(ALICE, 'lives in Porto', ALICE);
    await memories.remember(ALICE, 'has a cat', ALICE);
    expect(texts(await memories.facts(ALICE))).to.deep.equal(['lives in Porto', 'has a cat']);
    await memories.forget(ALICE, 1);
    expect(texts(await memories.facts(ALICE))).to.deep.equal(['has a cat']);
    await memories.removeWhere(ALICE, (f) => f.text === 'has a cat');
    expect(await memories.facts(ALICE)).to.deep.equal([]);
    await memories.remember(BOB, 'plays chess', BOB);
    expect(texts(await memories.facts(BOB))).to.deep.equal(['plays chess']);
    await memories.moveChat(BOB, ALICE);
    expect(await memories.facts(BOB)).to.deep.equal([]);
    expect(texts(await memories.facts(ALICE))).to.deep.equal(['plays chess']);
    // After the database was closed (a stop) and opened again, read from it anew.
    closeDatabase(folder.dir);
    expect(texts(await memories.facts(ALICE))).to.deep.equal(['plays chess']);
  });

  it('refuses a fact once the archive is full too, and keeps what it had', async () => {
    const memories = new MemoryStore(folder.dir, 1, 1);
    await memories.remember(ALICE, 'one');
    await memories.remember(ALICE, 'two');
    let refused: Error | undefined;
    await memories.remember(ALICE, 'three').catch((err: Error) => (refused = err));
    expect(refused?.name).to.equal('MemoryFullError');
    expect(texts([...(await memories.archived(ALICE)), ...(await memories.facts(ALICE))])).to.deep.equal(['one', 'two']);
  });

  it("a person's delete and a forgotten fact leave their words in no file of data/ (database, WAL, copy kept aside)", async () => {
    await writeEarlierMemory(folder.dir, GROUP, { version: 1, facts: [{ text: 'Alice hides the key under the mat', at: 1, by: ALICE }, { text: 'Bob keeps bees', at: 2, by: BOB }] });
    const memories = new MemoryStore(folder.dir);
    await memories.remember(ALICE, 'my pin is 4417', ALICE);
    await memories.remember(ALICE, 'loves cycling', ALICE);
    const registry = new PrivacyRegistry();
    registry.adopt(coreStores(folder.dir, { histories: new HistoryStore(folder.dir), memories }));
    // The remembered facts' section of .mydata, as the bot wires it (from the core's declarations).
    const privacy = {
      exportFor: async (person: string[]) => (await registry.exportFor(person))['remembered facts'],
      deleteFor: async (person: string[]) => (await registry.deleteFor(person))['remembered facts'],
    };
    expect(await privacy.exportFor([ALICE])).to.deep.equal({
      [GROUP]: [{ text: 'Alice hides the key under the mat', at: 1, by: ALICE }],
      [ALICE]: (await memories.facts(ALICE)),
    });
    expect(await privacy.deleteFor([ALICE])).to.equal(3);
    await memories.remember(BOB, 'Bob likes figs', BOB);
    expect(await memories.forget(BOB, { containing: 'figs' })).to.have.length(1);
    const disk = await everyFileText(folder.dir, 'latin1');
    for (const words of ['hides the key', '4417', 'cycling', 'likes figs']) expect(disk, words).to.not.include(words);
    expect(disk).to.include('Bob keeps bees');
    expect(await privacy.exportFor([ALICE])).to.deep.equal({});
  });
});
