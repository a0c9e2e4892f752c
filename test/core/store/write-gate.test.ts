import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Type } from '../../../core/index.js';
import { holdWrites, writeFileAtomicSafe } from '../../../core/services/store/atomic.js';
import { PluginStores } from '../../../core/services/store/plugin-store.js';
import { Store } from '../../../core/services/store/store-declarations.js';
import { domainFor } from '../../../core/services/store/data-domain.js';
import { HistoryStore, type HistoryEntry } from '../../../core/services/store/history.js';
import { storedChatLogText, storedHistory } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

const CHAT = '10000000008@s.whatsapp.net';
const said = (text: string, at: number): HistoryEntry => ({ role: 'user', text, at });
/** A declared log, as a plugin's (recall's) lines go to the store. */
const LINES = Store.chatLog('lines', Type.Object({ text: Type.String() }));

describe('the write gate an online backup closes', function () {
  const folder = storeFolderPerTest();

  it('while a backup holds the writes, log appends wait (none lands half-copied) and then all land, in order', async () => {
    const store = new HistoryStore(folder.dir, 50);
    await store.append(CHAT, said('before the backup', 1));
    const lines = new PluginStores('recall', folder.dir, [LINES]).chat('chat').log(LINES);
    const release = await holdWrites(folder.dir);
    let history: Promise<void>;
    let recall: Promise<void>;
    try {
      history = store.append(CHAT, said('during the backup', 2));
      recall = lines.append({ text: 'during the backup' });
      // Both writes reached the closed gate and wait there.
      await domainFor(folder.dir).gate.whenWaiting(2);
      expect(storedHistory(folder.dir, CHAT).map((e) => e.text)).not.to.include('during the backup');
      expect(storedChatLogText(folder.dir, 'recall', 'lines')).not.to.include('during the backup');
    } finally {
      release();
    }
    await Promise.all([history!, recall!]);
    expect(storedHistory(folder.dir, CHAT).map((e) => e.text)).to.deep.equal(['before the backup', 'during the backup']);
    expect(storedChatLogText(folder.dir, 'recall', 'lines')).to.include('during the backup');
    // The next backup can hold the writes again (the writes that waited are done, none is counted as still running).
    (await holdWrites(folder.dir))();
  });

  it('a backup that holds the writes starts only once the atomic writes under way are on disk', async () => {
    const file = path.join(folder.dir, 'memory', 'chat.json');
    const content = JSON.stringify({ facts: Array.from({ length: 2000 }, (_, i) => `fact number ${i}`) });
    const writing = writeFileAtomicSafe(file, content);
    const release = await holdWrites(folder.dir);
    try {
      expect(await readFile(file, 'utf8').catch(() => 'not there yet')).to.equal(content);
    } finally {
      release();
    }
    await writing;
  });
});
