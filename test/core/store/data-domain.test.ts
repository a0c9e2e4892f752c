import { Type } from '@sinclair/typebox';
import { expect } from 'chai';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { holdWrites } from '../../../core/services/store/atomic.js';
import { domainFor } from '../../../core/services/store/data-domain.js';
import { closeDatabase } from '../../../core/services/store/database.js';
import { PluginStores } from '../../../core/services/store/plugin-store.js';
import { Store, type DocDeclaration } from '../../../core/services/store/store-declarations.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { storedDocuments } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

const NOTES = Store.doc('notes', Type.Object({ n: Type.Integer() }), () => ({ n: 0 }));
/** A declared document of `dataDir` (`writeDelayMs`: how long its changes are gathered before one write). */
const notesIn = (dataDir: string, writeDelayMs?: number) => new PluginStores('notes', dataDir, [NOTES], undefined, writeDelayMs).doc(NOTES);
/** The document as the store database holds it, or undefined before its first write. */
const stored = (dataDir: string) => storedDocuments(dataDir, 'notes', 'notes')['']?.n;

describe('each app keeps its own data state (write gate, pending writes, health)', function () {
  this.timeout(20000);
  let a: TestBot;
  let b: TestBot;
  beforeEach(async () => {
    a = await startTestBot([]);
    b = await startTestBot([]);
  });
  afterEach(async () => {
    await a.stop();
    await b.stop();
  });

  it("a backup holding one app's writes never holds the other's", async () => {
    const [dirA, dirB] = [a.app.settings.dataDir, b.app.settings.dataDir];
    const release = await holdWrites(dirA);
    const inA = notesIn(dirA);
    const inB = notesIn(dirB);
    let aWritten: Promise<unknown>;
    try {
      aWritten = inA.save((d) => void (d.n = 1));
      await inB.save((d) => void (d.n = 2));
      expect(stored(dirB)).to.equal(2);
      await domainFor(dirA).gate.whenWaiting(1);
      expect(stored(dirA), 'held while the backup of A copies').to.equal(undefined);
    } finally {
      release();
    }
    await aWritten!;
    expect(stored(dirA)).to.equal(1);
  });

  it("a backup of one app flushes that app's pending documents, not the other's", async () => {
    const [dirA, dirB] = [a.app.settings.dataDir, b.app.settings.dataDir];
    const inA = notesIn(dirA, 60_000);
    const inB = notesIn(dirB, 60_000);
    await inA.update((d) => void (d.n = 1));
    await inB.update((d) => void (d.n = 2));
    // What the control channel runs when `npm run backup` asks app A to flush and hold.
    (await domainFor(dirA).holdWrites())();
    expect(stored(dirA)).to.equal(1);
    expect(stored(dirB), "B's change waits for its own pause").to.equal(undefined);
    await inB.save(() => undefined);
  });

  it('a file set aside in one app shows in that app only', async () => {
    // Where earlier versions kept the document: taken in at its first use, or set aside when it is no JSON.
    const file = path.join(a.app.settings.dataDir, 'notes', 'notes.json');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, '{ not json');
    await notesIn(a.app.settings.dataDir).get();
    expect(a.app.dataProblems().setAside.map((s) => s.file)).to.deep.equal([file]);
    expect(b.app.dataProblems().setAside).to.deep.equal([]);
  });
});

describe('a document comes back exactly as stored after a restart', () => {
  const folder = storeFolderPerTest();

  /** The document read anew from the store database (a restart), and what was set aside. */
  const reopen = async <T>(decl: DocDeclaration<T>) => {
    closeDatabase(folder.dir);
    const value = await new PluginStores('test', folder.dir, [decl]).doc(decl).get();
    return { value, aside: (await readdir(folder.dir, { recursive: true })).filter((n) => String(n).includes('.corrupt-')) };
  };
  const LEVELS = Type.Object({ version: Type.Integer(), level: Type.String() });

  it('when its schema requires a key named "version" (the key the file version used to be stripped from)', async () => {
    const levels = Store.doc('levels', LEVELS, () => ({ version: 7, level: 'low' }), { version: 2 });
    await new PluginStores('test', folder.dir, [levels]).doc(levels).save((d) => void (d.level = 'high'));
    const again = await reopen(levels);
    expect(again.aside, 'nothing set aside').to.deep.equal([]);
    expect(again.value).to.deep.equal({ version: 7, level: 'high' });
  });

  it('when it holds a "version" its open schema does not name', async () => {
    const open = Store.doc('open', Type.Unsafe<Record<string, unknown>>({ type: 'object' }), () => ({}));
    await new PluginStores('test', folder.dir, [open]).doc(open).save((d) => void Object.assign(d, { version: 5, x: 1 }));
    const again = await reopen(open);
    expect(again.aside).to.deep.equal([]);
    expect(again.value).to.deep.equal({ version: 5, x: 1 });
  });

  it('a file written before this fix (its "version" overwritten by the document\'s own) still loads', async () => {
    const levels = Store.doc('levels', LEVELS, () => ({ version: 0, level: '' }));
    // Where earlier versions kept the document: taken in at its first use.
    await mkdir(path.join(folder.dir, 'test'), { recursive: true });
    await writeFile(path.join(folder.dir, 'test', 'levels.json'), JSON.stringify({ version: 9, level: 'mid' }));
    const again = await reopen(levels);
    expect(again.aside).to.deep.equal([]);
    expect(again.value).to.deep.equal({ version: 9, level: 'mid' });
  });
});
