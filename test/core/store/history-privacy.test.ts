import { expect } from 'chai';
import { closeDatabase } from '../../../core/services/store/database.js';
import { HistoryStore } from '../../../core/services/store/history.js';
import { MemoryStore } from '../../../core/services/store/memory.js';
import { PrivacyRegistry } from '../../../core/services/store/privacy.js';
import { coreStores } from '../../../core/kernel/bot/core-stores.js';
import { storeDatabaseText } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

const ANA = '6281100000001@s.whatsapp.net';
const BOB = '6281100000002@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';

describe('history in the store database: a person\'s delete', () => {
  const folder = storeFolderPerTest();

  it('leaves none of their words in store.db or its WAL: their private chat, what they wrote in a group and the answers to them, a summary that folded them, rows past the bound not trimmed yet; the others\' words stay', async () => {
    // A bound of 8: rows past it are trimmed two at a time, so a few older rows are still in the table.
    const histories = new HistoryStore(folder.dir, 8);
    const privacy = new PrivacyRegistry();
    privacy.adopt(coreStores(folder.dir, { histories, memories: new MemoryStore(folder.dir) }));
    await histories.append(ANA, { id: 'a1', role: 'user', senderId: ANA, text: 'ana private tulip plan', at: 1 });
    await histories.append(ANA, { role: 'assistant', text: 'noted the tulip plan', at: 2, answers: ANA });
    await histories.append(GROUP, { id: 'g1', role: 'user', senderId: ANA, text: 'ana group saffron secret', at: 3 });
    await histories.append(GROUP, { role: 'assistant', text: 'answer about saffron', at: 4, answers: ANA });
    await histories.append(GROUP, { id: 'g0', role: 'user', senderId: BOB, text: 'bob likes basil', at: 5 });
    // A summary folding Ana's message, in a chat of its own.
    const FOLDED = '120363000000000002@g.us';
    await histories.append(FOLDED, { id: 'f1', role: 'user', senderId: ANA, text: 'ana folded marigold note', at: 5 });
    await histories.append(FOLDED, { id: 'f2', role: 'user', senderId: BOB, text: 'bob keeps his cactus', at: 6 });
    expect(await histories.fold(FOLDED, (await histories.recent(FOLDED)).slice(0, 1), undefined, 'ana said marigold')).to.equal(true);
    // In a third chat Ana's two messages have left the window of 8 but are still rows of the table (10 rows: none
    // trimmed yet), and nothing of her is in the window.
    const OLDER = '120363000000000003@g.us';
    await histories.append(OLDER, { id: 'o1', role: 'user', senderId: ANA, text: 'ana old lavender words', at: 7 });
    await histories.append(OLDER, { id: 'o2', role: 'user', senderId: ANA, text: 'ana old juniper words', at: 8 });
    for (let i = 0; i < 8; i++) await histories.append(OLDER, { id: `b${i}`, role: 'user', senderId: BOB, text: `bob says pine ${i}`, at: 10 + i });
    expect((await histories.recent(OLDER)).map((e) => e.senderId)).to.deep.equal(Array(8).fill(BOB));
    await histories.flush();
    closeDatabase(folder.dir); // the WAL checkpointed: the rows past the window are in the file itself
    const before = await storeDatabaseText(folder.dir);
    for (const words of ['tulip', 'saffron', 'marigold', 'lavender', 'juniper']) expect(before, words).to.include(words);

    const counts = await privacy.deleteFor([ANA]);
    expect(counts.history).to.be.at.least(2);
    expect(counts['conversation summaries']).to.equal(1);
    const after = await storeDatabaseText(folder.dir);
    for (const words of ['tulip', 'saffron', 'marigold', 'lavender', 'juniper']) expect(after, words).not.to.include(words);
    expect(after).to.include('bob says pine 7').and.include('bob keeps his cactus').and.include('bob likes basil');
    expect((await new HistoryStore(folder.dir, 8).recent(OLDER)).map((e) => e.text)).to.deep.equal(Array.from({ length: 8 }, (_, i) => `bob says pine ${i}`));
    expect((await new HistoryStore(folder.dir, 8).recent(GROUP)).map((e) => e.text)).to.deep.equal(['bob likes basil']);
  });
});
