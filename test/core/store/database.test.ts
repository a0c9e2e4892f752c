import { expect } from 'chai';
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createBackup, restoreBackup } from '../../../core/services/store/backup.js';
import { checkDataFiles } from '../../../cli/doctor/data-files.js';
import { DataHealth } from '../../../core/services/store/data-health.js';
import { registerDataHealth } from '../../../core/services/store/data-domain.js';
import { copyDatabase, databaseFor, DATABASE_FILE, closeDatabase, StoreDatabase } from '../../../core/services/store/database.js';
import { everyFileText } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

describe('the store database (one SQLite file per data folder)', () => {
  let health: DataHealth;
  let unregister: () => void;
  const folder = storeFolderPerTest({ closing: () => unregister() });
  beforeEach(() => {
    health = new DataHealth(folder.dir);
    unregister = registerDataHealth(health);
  });

  it('keeps what was written across a reopen, in WAL mode', () => {
    const db = new StoreDatabase(folder.dir);
    db.exec('CREATE TABLE notes (text TEXT)');
    db.transaction(() => {
      db.run('INSERT INTO notes VALUES (?)', ['first']);
      db.run('INSERT INTO notes VALUES (?)', ['second']);
    });
    db.close();
    const again = new StoreDatabase(folder.dir);
    expect(again.all<{ text: string }>('SELECT text FROM notes ORDER BY rowid').map((r) => r.text)).to.deep.equal(['first', 'second']);
    expect(again.get<{ journal_mode: string }>('PRAGMA journal_mode')?.journal_mode).to.equal('wal');
    again.close();
  });

  it('a transaction that throws leaves nothing of itself', () => {
    const db = new StoreDatabase(folder.dir);
    db.exec('CREATE TABLE notes (text TEXT)');
    expect(() =>
      db.transaction(() => {
        db.run('INSERT INTO notes VALUES (?)', ['half']);
        throw new Error('stop');
      }),
    ).to.throw('stop');
    expect(db.all('SELECT text FROM notes')).to.deep.equal([]);
    db.close();
  });

  it('deleted words are gone from the database file and its WAL once erased', async () => {
    const db = new StoreDatabase(folder.dir);
    db.exec('CREATE TABLE notes (text TEXT)');
    db.run('INSERT INTO notes VALUES (?)', ['kept-words-of-bob']);
    db.run('INSERT INTO notes VALUES (?)', ['secret-words-of-alice']);
    db.erase();
    expect(await everyFileText(folder.dir, 'latin1')).to.include('secret-words-of-alice');
    db.run('DELETE FROM notes WHERE text = ?', ['secret-words-of-alice']);
    db.erase();
    const onDisk = await everyFileText(folder.dir, 'latin1');
    expect(onDisk).not.to.include('secret-words-of-alice');
    expect(onDisk).to.include('kept-words-of-bob');
    db.close();
  });

  it('a file that is no database is set aside with its bytes, named in the data health, and a new one starts', async () => {
    const file = path.join(folder.dir, DATABASE_FILE);
    await writeFile(file, 'not a database: chat words kept for the owner '.repeat(100));
    const db = new StoreDatabase(folder.dir);
    db.exec('CREATE TABLE notes (text TEXT)');
    expect(health.setAside).to.have.length(1);
    expect(health.setAside[0].file).to.equal(file);
    expect(health.setAside[0].reason).to.match(/cannot be read/);
    expect(path.basename(health.setAside[0].movedTo)).to.match(/^store\.db\.corrupt-\d+$/);
    expect(await readFile(health.setAside[0].movedTo, 'utf8')).to.equal('not a database: chat words kept for the owner '.repeat(100));
    db.close();
  });

  it('databaseFor shares one connection per folder; closeDatabase closes it and the next use opens it again', () => {
    const a = databaseFor(folder.dir);
    expect(databaseFor(path.join(folder.dir, '.'))).to.equal(a);
    a.exec('CREATE TABLE notes (text TEXT)');
    a.run('INSERT INTO notes VALUES (?)', ['kept over the close']);
    closeDatabase(folder.dir);
    expect(a.open).to.equal(false);
    const b = databaseFor(folder.dir);
    expect(b).not.to.equal(a);
    expect(b.all<{ text: string }>('SELECT text FROM notes').map((r) => r.text)).to.deep.equal(['kept over the close']);
    // Closed under another spelling of the folder: the folder as a store names it does not find the closed one.
    closeDatabase(path.join(folder.dir, '.'));
    const c = databaseFor(folder.dir);
    expect(c).not.to.equal(b);
    expect(c.open).to.equal(true);
    closeDatabase(folder.dir);
  });

  it('copyDatabase makes a consistent private copy while the database is open, without its deleted rows', async () => {
    const db = new StoreDatabase(folder.dir);
    db.exec('CREATE TABLE notes (text TEXT)');
    db.run('INSERT INTO notes VALUES (?)', ['in-the-wal-only']);
    db.run('INSERT INTO notes VALUES (?)', ['deleted-before-copy']);
    db.run('DELETE FROM notes WHERE text = ?', ['deleted-before-copy']);
    const copy = path.join(folder.dir, 'copy', DATABASE_FILE);
    await (await import('node:fs/promises')).mkdir(path.dirname(copy));
    await copyDatabase(db.file, copy, 0o600);
    db.close();
    expect((await stat(copy)).mode & 0o777).to.equal(0o600);
    expect(await readdir(path.dirname(copy))).to.deep.equal([DATABASE_FILE]);
    const text = await readFile(copy, 'latin1');
    expect(text).to.include('in-the-wal-only').and.not.to.include('deleted-before-copy');
    const restored = new StoreDatabase(path.dirname(copy));
    expect(restored.all<{ text: string }>('SELECT text FROM notes').map((r) => r.text)).to.deep.equal(['in-the-wal-only']);
    restored.close();
  });

  it('a backup holds the database with what its WAL held, as one file; a restore brings it back', async () => {
    const data = path.join(folder.dir, 'data');
    const db = new StoreDatabase(data);
    db.exec('CREATE TABLE notes (text TEXT)');
    db.run('INSERT INTO notes VALUES (?)', ['written-before-the-backup']);
    // The bot is still running with the row in its WAL: the copy must carry it all the same.
    const backup = await createBackup({ dataDir: data, file: path.join(folder.dir, 'backup.tar.gz'), appVersion: 'test' });
    db.close();
    await rm(data, { recursive: true });
    const { manifest } = await restoreBackup({ dataDir: data, file: backup.file });
    expect(manifest.files.map((f) => f.path)).to.deep.equal([DATABASE_FILE]);
    const restored = new StoreDatabase(data);
    expect(restored.all<{ text: string }>('SELECT text FROM notes').map((r) => r.text)).to.deep.equal(['written-before-the-backup']);
    restored.close();
  });

  it('npm run doctor reads the database without changing it: a whole one passes, a damaged one is named', async () => {
    const db = new StoreDatabase(folder.dir);
    db.exec('CREATE TABLE notes (text TEXT)');
    db.run('INSERT INTO notes VALUES (?)', ['still running']);
    // Checked while the bot runs on it (its WAL open).
    expect(await checkDataFiles(folder.dir, [])).to.deep.include({ checked: 1, bad: [] });
    db.close();
    const file = path.join(folder.dir, DATABASE_FILE);
    const bytes = await readFile(file);
    bytes.fill(0x41, 100, bytes.length);
    await writeFile(file, bytes);
    const report = await checkDataFiles(folder.dir, []);
    expect(report.bad.map((b) => b.file)).to.deep.equal([DATABASE_FILE]);
    expect(report.bad[0].reason).to.match(/^the database (is damaged|cannot be read)/);
    expect(await readFile(file), 'left as it was').to.deep.equal(bytes);
    expect(health.setAside).to.deep.equal([]);
  });
});
