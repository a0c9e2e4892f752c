import { expect } from 'chai';
import { coreStores } from '../../../core/kernel/bot/core-stores.js';
import { closeDatabase } from '../../../core/services/store/database.js';
import { HistoryStore } from '../../../core/services/store/history.js';
import { MemoryStore } from '../../../core/services/store/memory.js';
import { PrivacyRegistry } from '../../../core/services/store/privacy.js';
import { storeDatabaseText } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

const ANA = '6281100000001@s.whatsapp.net';
const BOB = '6281100000002@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';

/*
 * The history and its summaries take part in the privacy controls from their declarations alone (HISTORY_STORE,
 * SUMMARIES_STORE with `people.answers` and `covers`), as the bot wires them: these check what those options promise.
 */
describe("the core's history and summaries: privacy from their declarations", () => {
  const folder = storeFolderPerTest();
  let histories: HistoryStore;
  let privacy: PrivacyRegistry;
  beforeEach(async () => {
    histories = new HistoryStore(folder.dir, 20);
    privacy = new PrivacyRegistry();
    privacy.adopt(coreStores(folder.dir, { histories, memories: new MemoryStore(folder.dir) }));
  });

  it('a message deleted for everyone by its writer takes the answer written before answers named their message (read back after a restart)', async () => {
    await histories.append(GROUP, { id: 'q1', role: 'user', senderId: ANA, text: 'ana asks about the amber key', at: 1 });
    // An answer of an earlier version: it names whom it answers, not which message.
    await histories.append(GROUP, { role: 'assistant', text: 'the amber key is under the mat', at: 2, answers: ANA });
    await histories.append(GROUP, { id: 'q2', role: 'user', senderId: BOB, text: 'bob asks about bread', at: 3 });
    await histories.append(GROUP, { role: 'assistant', text: 'bread is in the oven', at: 4, answers: BOB });
    await histories.flush();
    closeDatabase(folder.dir);
    histories = new HistoryStore(folder.dir, 20);
    privacy = new PrivacyRegistry();
    privacy.adopt(coreStores(folder.dir, { histories, memories: new MemoryStore(folder.dir) }));

    expect(await privacy.revoke(GROUP, 'q1', [BOB])).to.equal(0);
    expect(await privacy.revoke(GROUP, 'q1', [ANA])).to.equal(2);
    expect((await histories.recent(GROUP)).map((e) => e.text)).to.deep.equal(['bob asks about bread', 'bread is in the oven']);
    expect(await storeDatabaseText(folder.dir)).to.not.include('amber');
  });

  it("an edit gives the person's message its new words and takes the bot's answer to the old ones; another member's edit changes nothing", async () => {
    await histories.append(ANA, { id: 'e1', role: 'user', senderId: ANA, text: 'meet at nine', at: 1 });
    await histories.append(ANA, { role: 'assistant', text: 'see you at nine', at: 2, answers: ANA, answersMessage: 'e1' });
    expect(await privacy.edit(ANA, 'e1', 'meet at ten', [BOB])).to.equal(0);
    await histories.append(ANA, { id: 'e2', role: 'user', senderId: ANA, text: 'bring cake', at: 3 });
    await histories.append(ANA, { role: 'assistant', text: 'cake it is', at: 4, answers: ANA, answersMessage: 'e2' });
    expect(await privacy.edit(ANA, 'e1', 'meet at ten', [ANA])).to.equal(2);
    expect((await histories.recent(ANA)).map((e) => e.text)).to.deep.equal(['meet at ten', 'bring cake', 'cake it is']);
    await histories.flush();
    expect(await storeDatabaseText(folder.dir)).to.not.include('at nine');
  });

  it("a summary goes whole when a person's message it folded is edited, not when the bot's own is; a person it does not cover keeps it", async () => {
    await histories.append(GROUP, { id: 's1', role: 'user', senderId: ANA, text: 'ana: the gate code is 5150', at: 1 });
    await histories.append(GROUP, { id: 's2', role: 'assistant', text: 'noted', at: 2, answers: ANA, answersMessage: 's1' });
    await histories.append(GROUP, { id: 's3', role: 'user', senderId: ANA, text: 'ana: thanks', at: 3 });
    const folded = (await histories.recent(GROUP)).slice(0, 2);
    expect(await histories.fold(GROUP, folded, undefined, 'ana said the gate code is 5150')).to.equal(true);

    expect(await privacy.deleteFor([BOB])).to.have.property('conversation summaries', 0);
    expect(JSON.stringify((await privacy.exportFor([BOB]))['conversation summaries'])).to.equal('{}');
    expect(JSON.stringify((await privacy.exportFor([ANA]))['conversation summaries'])).to.include('5150');
    await privacy.edit(GROUP, 's2', 'noted!');
    expect((await histories.summary(GROUP))?.text).to.include('5150');
    await privacy.edit(GROUP, 's1', 'ana: the gate code is secret', [BOB]);
    expect((await histories.summary(GROUP))?.text).to.include('5150');
    await privacy.edit(GROUP, 's1', 'ana: the gate code is secret', [ANA]);
    expect(await histories.summary(GROUP)).to.equal(undefined);
    await histories.flush();
    expect(await storeDatabaseText(folder.dir)).to.not.include('5150');
  });
});
