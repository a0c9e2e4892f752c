import { expect } from 'chai';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { Store, Type } from '../../../core/index.js';
import { PluginStores } from '../../../core/services/store/plugin-store.js';
import { storeDatabaseText } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

const ALICE = '6281100000001@s.whatsapp.net';
const BOB = '6281100000002@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';
const LID = '99000000000001@lid';

/** Which reaction a message got: ids only, who reacted among them (one or several ids). */
const Reacted = Type.Object({ chat: Type.String(), id: Type.String(), to: Type.String(), who: Type.Array(Type.String()), at: Type.Number() });
const REACTED = Store.chatRecord('reacted', Reacted, {
  section: 'reactions',
  exportAs: '',
  chatOf: (r) => r.chat,
  withChat: (r, chat) => ({ ...r, chat }),
  keepMs: 60_000,
  keepCount: 3,
  people: { author: (r) => r.who, messageId: (r) => r.to },
  exported: ({ chat, id, at }) => ({ chat, id, at }),
});

describe('Store.chatRecord: a bounded record of ids per chat whose privacy follows from its declaration', function () {
  this.timeout(20_000);
  const folder = storeFolderPerTest();
  let now: number;
  let stores: PluginStores;
  beforeEach(async () => {
    now = 1_000_000;
    stores = new PluginStores('reactions', folder.dir, [REACTED], undefined, undefined, () => now);
  });

  it('finds an entry by chat and id while it is kept; past keepMs or beyond the newest keepCount it is gone, from the file too', async () => {
    const record = stores.record(REACTED);
    await record.add([{ chat: GROUP, id: 'r1', to: 'm1', who: [ALICE], at: now }]);
    expect(await record.get(GROUP, 'r1')).to.deep.include({ to: 'm1' });
    expect(await record.get(ALICE, 'r1'), 'another chat').to.equal(undefined);
    now += 61_000;
    expect(await record.get(GROUP, 'r1'), 'older than keepMs').to.equal(undefined);
    await record.add(['r2', 'r3', 'r4', 'r5'].map((id) => ({ chat: GROUP, id, to: `to-${id}`, who: [BOB], at: now })));
    expect((await record.entries()).map((r) => r.id)).to.deep.equal(['r3', 'r4', 'r5']);
    expect(await storeDatabaseText(folder.dir)).not.to.include('to-r2');
  });

  it('.mydata: one list in its section, shaped by exported; the delete takes the private chat and the entries naming the person, nothing else', async () => {
    const record = stores.record(REACTED);
    await record.add([
      { chat: ALICE, id: 'p1', to: 'pm1', who: [BOB], at: now },
      { chat: GROUP, id: 'g1', to: 'gm1', who: [BOB, ALICE], at: now },
      { chat: GROUP, id: 'g2', to: 'gm2', who: [BOB], at: now },
    ]);
    const [participant] = stores.participants();
    expect(participant.name).to.equal('reactions');
    expect(await participant.exportFor([ALICE])).to.deep.equal([
      { chat: ALICE, id: 'p1', at: now },
      { chat: GROUP, id: 'g1', at: now },
    ]);
    expect(await participant.deleteFor([ALICE])).to.equal(2);
    expect((await record.entries()).map((r) => r.id)).to.deep.equal(['g2']);
    expect(await storeDatabaseText(folder.dir)).not.to.include('gm1').and.not.to.include('pm1');
  });

  it('a message deleted for everyone takes its entries only when one of their ids (or the account) deleted it; a chat move takes the entries along', async () => {
    const record = stores.record(REACTED);
    await record.add([
      { chat: GROUP, id: 'g1', to: 'gm1', who: [ALICE], at: now },
      { chat: GROUP, id: 'g2', to: 'gm1', who: [BOB], at: now },
      { chat: LID, id: 'l1', to: 'lm1', who: [LID], at: now },
    ]);
    const [participant] = stores.participants();
    expect(await participant.revoke!(GROUP, 'gm1', [BOB]), "Bob's delete").to.equal(1);
    expect((await record.entries()).map((r) => r.id)).to.deep.equal(['g1', 'l1']);
    expect(await participant.revoke!(ALICE, 'gm1'), 'another chat').to.equal(0);
    expect(await participant.revoke!(GROUP, 'gm1'), "the account's delete").to.equal(1);
    await participant.moveChat!(LID, ALICE);
    expect(await record.get(LID, 'l1')).to.equal(undefined);
    expect(await record.get(ALICE, 'l1')).to.deep.include({ chat: ALICE, to: 'lm1' });
  });

  it('its earlier file is taken in once and kept aside under migrated/', async () => {
    const { writeFile, mkdir } = await import('node:fs/promises');
    await mkdir(path.join(folder.dir, 'reactions'), { recursive: true });
    await writeFile(path.join(folder.dir, 'reactions', 'reacted.json'), JSON.stringify({ version: 1, reacted: [{ chat: GROUP, id: 'old', to: 'om', who: [BOB], at: now }] }));
    expect(await stores.record(REACTED).get(GROUP, 'old')).to.deep.include({ to: 'om' });
    expect(await readdir(path.join(folder.dir, 'reactions'))).to.deep.equal([]);
    expect(await readdir(path.join(folder.dir, 'migrated', 'reactions'))).to.deep.equal(['reacted.json']);
  });

  it('refuses a declaration without its bounds or its chat', () => {
    expect(() => Store.chatRecord('x', Reacted, { chatOf: (r) => r.chat, withChat: (r) => r, keepMs: 0, keepCount: 3 })).to.throw(/keepMs/);
    expect(() => Store.chatRecord('x', Reacted, { withChat: (r: unknown) => r, keepMs: 1, keepCount: 3 } as never)).to.throw(/chatOf/);
  });
});
