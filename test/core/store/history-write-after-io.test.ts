import { expect } from 'chai';
import { rm } from 'node:fs/promises';
import { closeDatabase } from '../../../core/services/store/database.js';
import { HistoryStore, type HistoryEntry } from '../../../core/services/store/history.js';
import { tempDir } from '../../helpers/checkout.js';
import { storedHistory } from '../../helpers/disk-text.js';

const CHAT = '10000000011@s.whatsapp.net';
const said = (text: string, at: number): HistoryEntry => ({ role: 'user', text, at });
const onDisk = (dir: string) => storedHistory(dir, CHAT).map((e) => e.text).join('\n');
/** Lets every queued promise job run, but no I/O and no check phase. */
const microtasks = async () => {
  for (let i = 0; i < 50; i++) await Promise.resolve();
};

describe('history: a row written while other I/O is out (writeAfterIo)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(async () => {
    closeDatabase(dir);
    await rm(dir, { recursive: true, force: true });
  });

  it('the entry is read at once, its row reaches the disk only after this turn of the event loop, and the promise waits for it', async () => {
    const store = new HistoryStore(dir, 50);
    await store.append(CHAT, said('first', 1));
    let saved = false;
    const saving = store.append(CHAT, said('how far is the station?', 2), { writeAfterIo: true }).then(() => (saved = true));
    expect((await store.recent(CHAT)).map((e) => e.text)).to.deep.equal(['first', 'how far is the station?']);
    await microtasks();
    expect(onDisk(dir)).not.to.include('station', 'written before the turn ended: the caller paid for the write');
    expect(saved).to.equal(false);
    await saving;
    expect(onDisk(dir)).to.include('how far is the station?');
  });

  it('an append made right after it never overtakes it on disk, and the next start reads both in order', async () => {
    const store = new HistoryStore(dir, 50);
    const question = store.append(CHAT, said('question', 1), { writeAfterIo: true });
    const answer = store.append(CHAT, { role: 'assistant', text: 'answer', at: 2 });
    await Promise.all([question, answer]);
    expect(onDisk(dir).split('\n')).to.deep.equal(['question', 'answer']);
    // No flush: read back as a crashed run's data.
    expect((await new HistoryStore(dir, 50).recent(CHAT)).map((e) => e.text)).to.deep.equal(['question', 'answer']);
  });
});
