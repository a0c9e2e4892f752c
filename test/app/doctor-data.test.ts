import { expect } from 'chai';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { dataCheck } from '../../cli/doctor/checks.js';
import { DATABASE_FILE, StoreDatabase } from '../../core/services/store/database.js';
import { HISTORY_SCHEMA } from '../../core/services/store/schemas.js';
import { storeFolderPerTest } from '../helpers/store-folder.js';

const CHAT = '15550100200@s.whatsapp.net';
/** The layout the store database replaced, as the doctor is handed it (a chat's history file of earlier versions). */
const EARLIER = [{ path: 'history/<chat>.json', schema: HISTORY_SCHEMA }];

/** `npm run doctor`'s `data files` line, in this process: what it says of the data folder this version keeps. */
describe('npm run doctor: the data folder (store database, earlier files, set-aside files)', () => {
  const folder = storeFolderPerTest({ prefix: 'wabot-doctor-data-' });

  async function healthyStore(): Promise<void> {
    const db = new StoreDatabase(folder.dir);
    db.exec('CREATE TABLE notes (text TEXT)');
    db.run('INSERT INTO notes VALUES (?)', ['kept']);
    db.close();
  }

  it('a healthy store.db and nothing left of the earlier layout: ✔ with the integrity check passed', async () => {
    await healthyStore();
    const check = await dataCheck(folder.dir, EARLIER);
    expect(check.status, check.detail).to.equal('ok');
    expect(check.detail).to.equal(`${DATABASE_FILE} passes its integrity check; no file of an earlier version left`);
  });

  it('a damaged store.db: ✘ naming it, with the fix (restore, or what the next start does), and the file left as it was', async () => {
    await healthyStore();
    const file = path.join(folder.dir, DATABASE_FILE);
    const bytes = await readFile(file);
    bytes.fill(0x41, 100, bytes.length);
    await writeFile(file, bytes);
    const check = await dataCheck(folder.dir, EARLIER);
    expect(check.status).to.equal('fail');
    expect(check.detail).to.match(/^store\.db (is damaged|cannot be read)/);
    expect(check.fix).to.include('npm run restore').and.include('store.db.corrupt-<time>');
    expect(await readFile(file), 'the doctor changes nothing').to.deep.equal(bytes);
  });

  it('a history file of the earlier layout still in place: ⚠ naming it, with the fix (start once; kept under migrated/)', async () => {
    await healthyStore();
    await mkdir(path.join(folder.dir, 'history'), { recursive: true });
    await writeFile(path.join(folder.dir, 'history', `${CHAT}.json`), JSON.stringify({ version: 1, messages: [{ role: 'user', text: 'hi', at: 1 }] }));
    const check = await dataCheck(folder.dir, EARLIER);
    expect(check.status).to.equal('warn');
    expect(check.detail).to.equal(`${DATABASE_FILE} passes its integrity check; 1 file(s) of an earlier version not yet taken into ${DATABASE_FILE}: ${path.join('history', `${CHAT}.json`)}`);
    expect(check.fix).to.include('npm start').and.include(path.join(folder.dir, 'migrated'));
  });

  it('an earlier file that would not load: ✘ naming it and why', async () => {
    await mkdir(path.join(folder.dir, 'history'), { recursive: true });
    await writeFile(path.join(folder.dir, 'history', `${CHAT}.json`), '{"version":1,"messages":[{"role":');
    const check = await dataCheck(folder.dir, EARLIER);
    expect(check.status).to.equal('fail');
    expect(check.detail).to.include(`${path.join('history', `${CHAT}.json`)} is not valid JSON`);
  });

  it('a store.db the bot set aside earlier: ⚠ naming it', async () => {
    await healthyStore();
    await writeFile(path.join(folder.dir, `${DATABASE_FILE}.corrupt-1764400000000`), 'old bytes');
    const check = await dataCheck(folder.dir, EARLIER);
    expect(check.status).to.equal('warn');
    expect(check.detail).to.equal(`${DATABASE_FILE} passes its integrity check; 1 file(s) set aside earlier: ${DATABASE_FILE}.corrupt-1764400000000`);
  });
});
