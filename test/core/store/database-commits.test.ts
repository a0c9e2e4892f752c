import { expect } from 'chai';
import { statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import FakeTimers from '@sinonjs/fake-timers';
import Database from 'libsql';
import { DataHealth } from '../../../core/services/store/data-health.js';
import { registerDataHealth } from '../../../core/services/store/data-domain.js';
import { DATABASE_FILE, StoreDatabase } from '../../../core/services/store/database.js';
import { tempDir } from '../../helpers/checkout.js';

/** What another process reading the file sees: only committed rows. */
function committedNotes(dir: string): string[] {
  const reader = new Database(path.join(dir, DATABASE_FILE), { readonly: true });
  try {
    return (reader.prepare('SELECT text FROM notes ORDER BY rowid').all() as Array<{ text: string }>).map((r) => r.text);
  } finally {
    reader.close();
  }
}

/*
 * What a message's writes cost: a store that gathers its changes (a document) rides along with the next transaction
 * instead of paying a commit of its own, and the WAL is copied into the database file when writes pause, never
 * inside the commit a reply waits for.
 */
describe('the store database: commits a message pays', () => {
  let dir: string;
  let unregister: () => void;
  let db: StoreDatabase | undefined;
  beforeEach(async () => {
    dir = await tempDir();
    unregister = registerDataHealth(new DataHealth(dir));
  });
  afterEach(async () => {
    db?.close();
    db = undefined;
    unregister();
    await rm(dir, { recursive: true, force: true });
  });

  it('a waiting write joins the next transaction and is told once it is committed; one that fails is undone alone', () => {
    db = new StoreDatabase(dir);
    db.exec('CREATE TABLE notes (text TEXT)');
    const told: string[] = [];
    db.ride(() => {
      db!.run('INSERT INTO notes VALUES (?)', ['rider']);
      told.push(`run, committed seen elsewhere: ${committedNotes(dir).includes('rider')}`);
      return () => told.push(`confirmed, committed seen elsewhere: ${committedNotes(dir).includes('rider')}`);
    });
    db.ride(() => {
      db!.run('INSERT INTO notes VALUES (?)', ['broken rider']);
      throw new Error('this rider fails');
    });
    expect(committedNotes(dir), 'a rider waits for a transaction').to.deep.equal([]);
    db.transaction(() => db!.run('INSERT INTO notes VALUES (?)', ['history row']));
    expect(committedNotes(dir)).to.deep.equal(['history row', 'rider']);
    expect(told).to.deep.equal(['run, committed seen elsewhere: false', 'confirmed, committed seen elsewhere: true']);
    // Ran once: the next transaction carries nothing of it.
    db.transaction(() => db!.run('INSERT INTO notes VALUES (?)', ['next row']));
    expect(committedNotes(dir)).to.deep.equal(['history row', 'rider', 'next row']);
    expect(told).to.have.length(2);
  });

  it('a transaction that throws takes its riders with it, and they are never told committed', () => {
    db = new StoreDatabase(dir);
    db.exec('CREATE TABLE notes (text TEXT)');
    let confirmed = false;
    db.ride(() => {
      db!.run('INSERT INTO notes VALUES (?)', ['rider']);
      return () => (confirmed = true);
    });
    expect(() =>
      db!.transaction(() => {
        db!.run('INSERT INTO notes VALUES (?)', ['row']);
        throw new Error('the work failed');
      }),
    ).to.throw('the work failed');
    expect(committedNotes(dir)).to.deep.equal([]);
    expect(confirmed).to.equal(false);
  });

  it('the WAL is copied into the database file once writes pause, not inside the commits of a busy stretch', () => {
    const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      db = new StoreDatabase(dir);
      db.exec('CREATE TABLE notes (text TEXT)');
      const file = path.join(dir, DATABASE_FILE);
      const before = statSync(file).size;
      // 1,500 commits of ~1 KB: past SQLite's own automatic checkpoint (1000 pages), which would have run inside one.
      for (let i = 0; i < 1500; i++) db.transaction(() => db!.run('INSERT INTO notes VALUES (?)', [`${i} ${'x'.repeat(1000)}`]));
      expect(statSync(file).size, 'no checkpoint during the busy stretch').to.equal(before);
      clock.tick(999);
      expect(statSync(file).size, 'not before a second of quiet').to.equal(before);
      clock.tick(1);
      expect(statSync(file).size, 'checkpointed once quiet').to.be.above(1_000_000);
    } finally {
      clock.uninstall();
    }
  });
});
