import { expect } from 'chai';
import path from 'node:path';
import { storeDatabaseText } from '../../helpers/disk-text.js';
import { databaseFor } from '../../../core/services/store/database.js';
import { BurstTurns, BURST_TURNS_STORE, MERGED_KEPT_MS } from '../../../core/kernel/pipeline/burst-turns.js';
import { coreStores } from '../../../core/kernel/bot/core-stores.js';
import { HistoryStore } from '../../../core/services/store/history.js';
import { MemoryStore } from '../../../core/services/store/memory.js';
import { PrivacyRegistry } from '../../../core/services/store/privacy.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

const LID = '123456789@lid';
const PHONE = '15550002222@s.whatsapp.net';
const GROUP = '120363000000000009@g.us';
const ANN = '15550003333@s.whatsapp.net';
const BOB = '15550004444@s.whatsapp.net';

describe('burst turns on disk (which turn each merged message was answered in)', () => {
  const folder = storeFolderPerTest();
  let clock: number;
  beforeEach(() => {
    clock = 1_000_000;
  });
  /** The burst turns, as the bot opens them, with the privacy controls of the core's declared stores. */
  const open = () => {
    const stores = coreStores(folder.dir, { histories: new HistoryStore(folder.dir), memories: new MemoryStore(folder.dir) }, () => clock);
    const privacy = new PrivacyRegistry();
    privacy.adopt(stores);
    return Object.assign(new BurstTurns(stores.record(BURST_TURNS_STORE), () => clock), { privacy });
  };

  it('a chat that moves from its LID to its phone id takes its entries along, across a restart', async () => {
    const turns = open();
    await turns.note(LID, [{ id: 'a', senderId: LID }, { id: 'b', senderId: LID }], 'b');
    await turns.privacy.moveChat(LID, PHONE);
    const again = open();
    expect(await again.turnOf(PHONE, 'a')).to.deep.equal({ id: 'b', merged: true });
    expect(await again.turnOf(LID, 'a')).to.deep.equal({ id: 'a', merged: false });
    // On disk (the store database) both entries are the phone id's chat's.
    const onDisk = databaseFor(folder.dir).all<{ chat: string }>('SELECT chat FROM "record:core:merged" ORDER BY seq');
    expect(onDisk.map((m) => m.chat)).to.deep.equal([PHONE, PHONE]);
  });

  it('forgets entries older than the delete-for-everyone window, and a member cannot drop another member\'s', async () => {
    const turns = open();
    await turns.note(GROUP, [{ id: 'a1', senderId: ANN }, { id: 'a2', senderId: ANN }], 'a2');
    const participant = turns.privacy;
    expect(await participant.revoke(GROUP, 'a2', [BOB])).to.equal(0);
    expect(await turns.turnOf(GROUP, 'a1')).to.deep.equal({ id: 'a2', merged: true });
    expect(await participant.revoke(GROUP, 'a2', [ANN])).to.equal(2);
    expect(await turns.turnOf(GROUP, 'a1')).to.deep.equal({ id: 'a1', merged: false });
    await turns.note(GROUP, [{ id: 'c1', senderId: ANN }, { id: 'c2', senderId: ANN }], 'c2');
    clock += MERGED_KEPT_MS + 1;
    expect(await turns.turnOf(GROUP, 'c1')).to.deep.equal({ id: 'c1', merged: false });
    await turns.note(GROUP, [{ id: 'd1', senderId: BOB }, { id: 'd2', senderId: BOB }], 'd2');
    await turns.flush();
    const file = await storeDatabaseText(folder.dir);
    expect(file).to.include('d1');
    expect(file).to.not.include('c1');
  });

  it('a person\'s delete removes what they sent in a group and everything of their private chat, nothing else', async () => {
    const turns = open();
    await turns.note(GROUP, [{ id: 'g1', senderId: ANN }, { id: 'g2', senderId: ANN }], 'g2');
    await turns.note(GROUP, [{ id: 'h1', senderId: BOB }, { id: 'h2', senderId: BOB }], 'h2');
    await turns.note(ANN, [{ id: 'p1', senderId: ANN }, { id: 'p2', senderId: ANN }], 'p2');
    expect((await turns.privacy.deleteFor([ANN]))['messages answered together']).to.equal(4);
    expect((await turns.turnOf(GROUP, 'h1')).merged).to.equal(true);
    expect((await turns.turnOf(GROUP, 'g1')).merged).to.equal(false);
    expect((await turns.turnOf(ANN, 'p1')).merged).to.equal(false);
  });
});
