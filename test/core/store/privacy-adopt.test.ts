import { expect } from 'chai';
import { coreStores } from '../../../core/kernel/bot/core-stores.js';
import { HistoryStore } from '../../../core/services/store/history.js';
import { MemoryStore } from '../../../core/services/store/memory.js';
import { PrivacyRegistry } from '../../../core/services/store/privacy.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

const ANA = '6281100000001@s.whatsapp.net';

describe('the privacy registry adopts each set of declared stores once', () => {
  const folder = storeFolderPerTest();

  it("stores adopted again (a transport started anew) add no second section to .mydata, and a delete counts each message once", async () => {
    const histories = new HistoryStore(folder.dir, 20);
    const core = coreStores(folder.dir, { histories, memories: new MemoryStore(folder.dir) });
    const privacy = new PrivacyRegistry();
    privacy.adopt(core);
    const sections = privacy.list().map((p) => p.name);
    privacy.adopt(core);
    expect(privacy.list().map((p) => p.name)).to.deep.equal(sections);

    await histories.append(ANA, { id: 'm1', role: 'user', senderId: ANA, text: 'hello there', at: 1 });
    const exported = await privacy.exportFor([ANA]);
    expect(Object.keys(exported).filter((k) => k.endsWith('(core)'))).to.deep.equal([]);
    expect(Object.values(await privacy.deleteFor([ANA])).reduce((a, b) => a + b, 0)).to.equal(1);
  });

  it('other stores with a section of the same name still get their own, named after their namespace', async () => {
    const privacy = new PrivacyRegistry();
    privacy.adopt(coreStores(folder.dir, { histories: new HistoryStore(folder.dir, 20), memories: new MemoryStore(folder.dir) }));
    const before = privacy.list().length;
    privacy.adopt({ plugin: 'other', participants: () => [{ name: 'history', exportFor: async () => [], deleteFor: async () => 0 }] });
    expect(privacy.list().map((p) => p.name).slice(before)).to.deep.equal(['history (other)']);
  });
});
