import { expect } from 'chai';
import { statSync } from 'node:fs';
import path from 'node:path';
import FakeTimers from '@sinonjs/fake-timers';
import { DataHealth } from '../../../core/services/store/data-health.js';
import { registerDataHealth } from '../../../core/services/store/data-domain.js';
import { DATABASE_FILE, StoreDatabase } from '../../../core/services/store/database.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

/* What a message's writes cost: the WAL is copied into the database file when writes pause, never inside the commit a reply waits for. */
describe('the store database: commits a message pays', () => {
  let unregister: () => void;
  let db: StoreDatabase | undefined;
  const folder = storeFolderPerTest({
    closing: () => {
      db?.close();
      db = undefined;
      unregister();
    },
  });
  beforeEach(() => {
    unregister = registerDataHealth(new DataHealth(folder.dir));
  });

  it('the WAL is copied into the database file once writes pause, not inside the commits of a busy stretch', () => {
    const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      db = new StoreDatabase(folder.dir);
      db.exec('CREATE TABLE notes (text TEXT)');
      const file = path.join(folder.dir, DATABASE_FILE);
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
