import { Type } from '@sinclair/typebox';
import { expect } from 'chai';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { holdWrites } from '../../../core/services/store/atomic.js';
import { domainFor } from '../../../core/services/store/data-domain.js';
import { JsonFile } from '../../../core/services/store/json-file.js';
import type { DataSchema } from '../../../core/services/store/schemas.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { tempDir } from '../../helpers/checkout.js';

const exists = (file: string) => readFile(file).then(() => true, () => false);

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
    const release = await holdWrites(a.app.settings.dataDir);
    const inA = new JsonFile(path.join(a.app.settings.dataDir, 'notes.json'), () => ({ n: 0 }));
    const inB = new JsonFile(path.join(b.app.settings.dataDir, 'notes.json'), () => ({ n: 0 }));
    let aWritten: Promise<void>;
    try {
      await inA.update((d) => void (d.n = 1));
      aWritten = inA.flush();
      await inB.update((d) => void (d.n = 2));
      await inB.flush();
      expect(JSON.parse(await readFile(inB.file, 'utf8'))).to.deep.equal({ n: 2 });
      await domainFor(a.app.settings.dataDir).gate.whenWaiting(1);
      expect(await exists(inA.file), 'held while the backup of A copies').to.equal(false);
    } finally {
      release();
    }
    await aWritten!;
    expect(JSON.parse(await readFile(inA.file, 'utf8'))).to.deep.equal({ n: 1 });
  });

  it("a backup of one app flushes that app's pending documents, not the other's", async () => {
    const slow = { coalesceMs: 60_000 };
    const inA = new JsonFile(path.join(a.app.settings.dataDir, 'a.json'), () => ({ n: 0 }), slow);
    const inB = new JsonFile(path.join(b.app.settings.dataDir, 'b.json'), () => ({ n: 0 }), slow);
    await inA.update((d) => void (d.n = 1));
    await inB.update((d) => void (d.n = 2));
    // What the control channel runs when `npm run backup` asks app A to flush and hold.
    (await domainFor(a.app.settings.dataDir).holdWrites())();
    expect(JSON.parse(await readFile(inA.file, 'utf8'))).to.deep.equal({ n: 1 });
    expect(await exists(inB.file), "B's change waits for its own pause").to.equal(false);
    await inB.flush();
  });

  it('a file set aside in one app shows in that app only', async () => {
    const file = path.join(a.app.settings.dataDir, 'broken.json');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, '{ not json');
    await new JsonFile(file, () => ({})).get();
    expect(a.app.dataProblems().setAside.map((s) => s.file)).to.deep.equal([file]);
    expect(b.app.dataProblems().setAside).to.deep.equal([]);
  });
});

describe('a document comes back exactly as stored after a restart', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const reopen = async <T>(file: string, schema: DataSchema, initial: () => T) => {
    const doc = new JsonFile<T>(file, initial, { schema });
    return { value: await doc.get(), aside: (await readdir(dir)).filter((n) => n.includes('.corrupt-')) };
  };

  it('when its schema requires a key named "version" (the key the file version used to be stripped from)', async () => {
    const schema: DataSchema = { name: 'levels', version: 2, schema: Type.Object({ version: Type.Integer(), level: Type.String() }) };
    const file = path.join(dir, 'levels.json');
    const doc = new JsonFile(file, () => ({ version: 7, level: 'low' }), { schema });
    await doc.update((d) => void (d.level = 'high'));
    await doc.flush();
    const again = await reopen(file, schema, () => ({ version: 0, level: '' }));
    expect(again.aside, 'nothing set aside').to.deep.equal([]);
    expect(again.value).to.deep.equal({ version: 7, level: 'high' });
  });

  it('when it holds a "version" its open schema does not name', async () => {
    const schema: DataSchema = { name: 'open', version: 1, schema: { type: 'object' } };
    const file = path.join(dir, 'open.json');
    const doc = new JsonFile<Record<string, unknown>>(file, () => ({}), { schema });
    await doc.update((d) => void Object.assign(d, { version: 5, x: 1 }));
    await doc.flush();
    const again = await reopen(file, schema, () => ({}));
    expect(again.aside).to.deep.equal([]);
    expect(again.value).to.deep.equal({ version: 5, x: 1 });
  });

  it('a file written before this fix (its "version" overwritten by the document\'s own) still loads', async () => {
    const schema: DataSchema = { name: 'levels', version: 1, schema: Type.Object({ version: Type.Integer(), level: Type.String() }) };
    const file = path.join(dir, 'levels.json');
    await writeFile(file, JSON.stringify({ version: 9, level: 'mid' }));
    const again = await reopen(file, schema, () => ({ version: 0, level: '' }));
    expect(again.aside).to.deep.equal([]);
    expect(again.value).to.deep.equal({ version: 9, level: 'mid' });
  });
});
