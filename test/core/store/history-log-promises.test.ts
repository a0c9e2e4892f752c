import { expect } from 'chai';
import path from 'node:path';
import { databaseFor } from '../../../core/services/store/database.js';
import { DataHealth } from '../../../core/services/store/data-health.js';
import { registerDataHealth } from '../../../core/services/store/data-domain.js';
import { HistoryStore, type HistoryEntry } from '../../../core/services/store/history.js';
import { storeDatabaseText, storedHistory } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

const CHAT = '10000000008@s.whatsapp.net';
const said = (text: string, at: number): HistoryEntry => ({ role: 'user', text, at });

describe('history: what it promises on disk', function () {
  const folder = storeFolderPerTest();

  it('.reset is on disk at once, its words in no file: a restart starts fresh', async () => {
    const store = new HistoryStore(folder.dir, 50);
    await store.append(CHAT, said('my old topic is sailing', 1));
    await store.flush();
    expect(await store.clear(CHAT)).to.equal(1);
    expect(await storeDatabaseText(folder.dir)).not.to.include('sailing');
    expect(await new HistoryStore(folder.dir, 50).recent(CHAT)).to.deep.equal([]);
  });

  it('a restart after a crash (no flush) reads at most maxMessages messages, the newest', async () => {
    const crashed = new HistoryStore(folder.dir, 3);
    for (let i = 0; i < 8; i++) await crashed.append(CHAT, said(`line ${i}`, i));
    // No flush: the process died. What was appended is committed.
    expect((await new HistoryStore(folder.dir, 3).recent(CHAT)).map((m) => m.text)).to.deep.equal(['line 5', 'line 6', 'line 7']);
  });

  it('a message whose row cannot be written stays in memory, the failure is reported, and it is written once the database takes writes again', async () => {
    const health = new DataHealth(folder.dir);
    const unregister = registerDataHealth(health);
    try {
      const store = new HistoryStore(folder.dir, 50);
      await store.append(CHAT, said('before the failure', 1));
      // Every write of a history row fails from now on (as on a full disk).
      databaseFor(folder.dir).exec(`CREATE TEMP TRIGGER refuse BEFORE INSERT ON "chat-log:core:history" BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END;`);
      await store.append(CHAT, said('the meeting moved to thursday', 2));
      expect((await store.recent(CHAT)).map((m) => m.text)).to.deep.equal(['before the failure', 'the meeting moved to thursday']);
      expect(health.unsaved().map((u) => u.file)).to.deep.equal([`${path.join(folder.dir, 'store.db')} (chat history)`]);
      let failed: unknown;
      await store.flush().catch((err: unknown) => (failed = err));
      expect((failed as Error)?.message, 'a stop is told what could not be saved').to.include('chat history');
      expect(storedHistory(folder.dir, CHAT).map((m) => m.text)).to.deep.equal(['before the failure']);
      databaseFor(folder.dir).exec('DROP TRIGGER refuse');
      await store.flush();
      expect(health.unsaved()).to.deep.equal([]);
      expect((await new HistoryStore(folder.dir, 50).recent(CHAT)).map((m) => m.text)).to.deep.equal(['before the failure', 'the meeting moved to thursday']);
    } finally {
      unregister();
    }
  });
});
