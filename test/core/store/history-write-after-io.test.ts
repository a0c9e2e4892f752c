import { expect } from 'chai';
import sinon from 'sinon';
import { HELD_AT_MOST_MS, HistoryStore, type HistoryEntry } from '../../../core/services/store/history.js';
import { storedHistory } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

const CHAT = '10000000011@s.whatsapp.net';
const said = (text: string, at: number): HistoryEntry => ({ role: 'user', text, at });
const onDisk = (dir: string) => storedHistory(dir, CHAT).map((e) => e.text).join('\n');
/** Lets every queued promise job run, but no I/O and no check phase. */
const microtasks = async () => {
  for (let i = 0; i < 50; i++) await Promise.resolve();
};
/** Lets a few turns of the event loop pass (check phases included: a write asked for runs in one). */
const turns = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

describe('history: a row written while other I/O is out (writeAfterIo)', () => {
  const folder = storeFolderPerTest();

  it('the entry is read at once, its row reaches the disk only after this turn of the event loop, and the promise waits for it', async () => {
    const store = new HistoryStore(folder.dir, 50);
    await store.append(CHAT, said('first', 1));
    let saved = false;
    const saving = store.append(CHAT, said('how far is the station?', 2), { writeAfterIo: true }).then(() => (saved = true));
    expect((await store.recent(CHAT)).map((e) => e.text)).to.deep.equal(['first', 'how far is the station?']);
    await microtasks();
    expect(onDisk(folder.dir)).not.to.include('station', 'written before the turn ended: the caller paid for the write');
    expect(saved).to.equal(false);
    await saving;
    expect(onDisk(folder.dir)).to.include('how far is the station?');
  });

  it('an append made right after it never overtakes it on disk, and the next start reads both in order', async () => {
    const store = new HistoryStore(folder.dir, 50);
    const question = store.append(CHAT, said('question', 1), { writeAfterIo: true });
    const answer = store.append(CHAT, { role: 'assistant', text: 'answer', at: 2 });
    await Promise.all([question, answer]);
    expect(onDisk(folder.dir).split('\n')).to.deep.equal(['question', 'answer']);
    // No flush: read back as a crashed run's data.
    expect((await new HistoryStore(folder.dir, 50).recent(CHAT)).map((e) => e.text)).to.deep.equal(['question', 'answer']);
  });

  describe('a question held for its answer (heldForNextWrite)', () => {
    let clock: sinon.SinonFakeTimers | undefined;
    afterEach(() => {
      clock?.restore();
      clock = undefined;
    });
    /** Only setTimeout is faked: the write itself runs in a check phase (setImmediate), as in service. */
    const fakeTimeouts = () => (clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }));

    it('a quick answer takes the question along: one transaction for both, and neither is on disk before it', async () => {
      fakeTimeouts();
      const store = new HistoryStore(folder.dir, 50);
      await store.append(CHAT, said('earlier', 1));
      const before = store.foldsWritten;
      let saved = false;
      const question = store.append(CHAT, said('how far is the station?', 2), { heldForNextWrite: true }).then(() => (saved = true));
      expect((await store.recent(CHAT)).map((e) => e.text)).to.deep.equal(['earlier', 'how far is the station?']);
      // The model works (turns of the event loop pass, the deadline not reached): the question waits.
      await turns();
      expect(saved).to.equal(false);
      expect(onDisk(folder.dir)).not.to.include('station');
      await store.append(CHAT, { role: 'assistant', text: 'ten minutes on foot', at: 3 });
      await question;
      expect(store.foldsWritten - before, 'the question and its answer in one commit').to.equal(1);
      expect(onDisk(folder.dir).split('\n')).to.deep.equal(['earlier', 'how far is the station?', 'ten minutes on foot']);
    });

    it('a slow answer: the question is written on its own once HELD_AT_MOST_MS passed, not before', async () => {
      fakeTimeouts();
      const store = new HistoryStore(folder.dir, 50);
      let saved = false;
      const question = store.append(CHAT, said('what is the capital of Peru?', 1), { heldForNextWrite: true }).then(() => (saved = true));
      clock!.tick(HELD_AT_MOST_MS - 1);
      await turns();
      expect(saved).to.equal(false);
      expect(onDisk(folder.dir)).to.equal('');
      clock!.tick(1);
      await turns();
      expect(saved).to.equal(true);
      await question;
      expect(onDisk(folder.dir)).to.equal('what is the capital of Peru?');
      // Read back as a crashed run's data would be.
      expect((await new HistoryStore(folder.dir, 50).recent(CHAT)).map((e) => e.text)).to.deep.equal(['what is the capital of Peru?']);
    });

    it('writeHeld writes a held question at once (a turn that ends without an answer), and a write of another chat takes it too', async () => {
      fakeTimeouts();
      const store = new HistoryStore(folder.dir, 50);
      let saved = false;
      const question = store.append(CHAT, said('anyone there?', 1), { heldForNextWrite: true }).then(() => (saved = true));
      await turns();
      expect(saved).to.equal(false);
      store.writeHeld();
      await turns();
      expect(saved, 'written without waiting for the deadline').to.equal(true);
      await question;
      expect(onDisk(folder.dir)).to.equal('anyone there?');
      const OTHER = '10000000012@s.whatsapp.net';
      let second = false;
      const held = store.append(CHAT, said('still there?', 2), { heldForNextWrite: true }).then(() => (second = true));
      await store.append(OTHER, said('hello from another chat', 3));
      await turns();
      expect(second).to.equal(true);
      await held;
      expect(onDisk(folder.dir)).to.equal('anyone there?\nstill there?');
    });

    it('a flush (the stop, a backup) writes a held question', async () => {
      fakeTimeouts();
      const store = new HistoryStore(folder.dir, 50);
      void store.append(CHAT, said('before the stop', 1), { heldForNextWrite: true });
      await store.flush();
      expect(onDisk(folder.dir)).to.equal('before the stop');
    });
  });
});
