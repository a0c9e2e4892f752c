import { expect } from 'chai';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Store, Type } from '../../../core/index.js';
import { safeFileName } from '../../../core/index.js';
import { SqlSearchLog } from '../../../core/builtin.js';
import { domainFor } from '../../../core/services/store/data-domain.js';
import { closeDatabase, databaseFor } from '../../../core/services/store/database.js';
import { PluginStores } from '../../../core/services/store/plugin-store.js';
import type { PrivacyParticipant } from '../../../core/kernel/port/privacy-participant.js';
import { storeDatabaseText } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

/*
 * The core's per-chat searchable log (Store.chatSearchLog), through the API a plugin gets (`host.store`) and the
 * privacy participant the core makes from the declaration. Real files in a temporary DATA_DIR.
 */

const ANA = '6281100000001@s.whatsapp.net';
const ANA_LID = '99000000000001@lid';
const BUDI = '6281100000002@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';
const DAY_MS = 24 * 60 * 60 * 1000;

const Said = Type.Object({ id: Type.Optional(Type.String()), by: Type.String(), text: Type.String(), at: Type.Number() });
const SAID = Store.chatSearchLog('said', Said, {
  people: { author: (s) => s.by, messageId: (s) => s.id, edited: (s, text) => ({ ...s, text }) },
  keepDays: 30,
});

describe('core store: the per-chat searchable log (Store.chatSearchLog)', function () {
  this.timeout(20_000);
  let stores: PluginStores;
  let privacy: PrivacyParticipant;
  const data = storeFolderPerTest({ prefix: 'search-log-', inside: 'data', closing: () => stores.close().catch(() => undefined) });
  const folder = () => path.join(data.dir, 'notes', 'said');
  const open = () => {
    stores = new PluginStores('notes', data.dir, [SAID]);
    [privacy] = stores.participants();
  };
  const log = (chatId: string) => stores.chat(chatId).searchLog(SAID);
  const texts = async (chatId: string, query: string) => (await log(chatId).search(query, { limit: 20 })).map((h) => h.message.text);

  beforeEach(() => {
    open();
  });

  it('a search in one chat never returns another chat\'s line, even with the same words, and its API names no other chat', async () => {
    const now = Date.now();
    await log(ANA).add({ id: 'a1', by: ANA, text: 'the walrus password is blue', at: now });
    await log(GROUP).add({ id: 'g1', by: BUDI, text: 'the walrus password is red', at: now });
    await log(GROUP).add({ id: 'g2', by: BUDI, text: 'walrus', at: now + 1 });
    expect(await texts(ANA, 'walrus password')).to.deep.equal(['the walrus password is blue']);
    expect(await texts(ANA, 'red')).to.deep.equal([]);
    expect((await texts(GROUP, 'walrus')).sort()).to.deep.equal(['the walrus password is red', 'walrus']);
    // Nothing handed out can read, move or take in another chat's log.
    expect(Object.keys(log(ANA)).sort()).to.deep.equal(['add', 'addMany', 'addSoon', 'catchUp', 'changeWhere', 'chatId', 'filePath', 'flush', 'folder', 'putFile', 'removeWhere', 'search', 'size', 'where']);
    expect(await stores.chats(SAID)).to.have.members([ANA, GROUP]);
  });

  it("a month file of another chat found in a chat's folder is set aside with its bytes kept, never searched", async () => {
    const month = `${new Date().toISOString().slice(0, 7)}.jsonl`;
    await mkdir(path.join(folder(), safeFileName(ANA)), { recursive: true });
    const foreign = `${JSON.stringify({ said: 1, chat: BUDI })}\n${JSON.stringify({ by: BUDI, text: 'budi secret walrus', at: Date.now() })}\n`;
    await writeFile(path.join(folder(), safeFileName(ANA), month), foreign);
    expect(await texts(ANA, 'walrus')).to.deep.equal([]);
    const names = await readdir(path.join(folder(), safeFileName(ANA)));
    const aside = names.find((n) => n.startsWith(`${month}.corrupt-`));
    expect(aside, names.join(', ')).to.be.a('string');
    expect(await readFile(path.join(folder(), safeFileName(ANA), aside!), 'utf8')).to.equal(foreign);
  });

  it('a corrupt month file is set aside with its bytes kept; the chat still answers and takes new lines', async () => {
    const month = `${new Date().toISOString().slice(0, 7)}.jsonl`;
    await mkdir(path.join(folder(), safeFileName(ANA)), { recursive: true });
    await writeFile(path.join(folder(), safeFileName(ANA), month), '\u0000\u0001not json at all\n{"half":');
    expect(await texts(ANA, 'anything')).to.deep.equal([]);
    await log(ANA).add({ id: 'a1', by: ANA, text: 'the ferry leaves at nine', at: Date.now() });
    expect(await texts(ANA, 'ferry')).to.deep.equal(['the ferry leaves at nine']);
    const names = await readdir(path.join(folder(), safeFileName(ANA)));
    const aside = names.find((n) => n.startsWith(`${month}.corrupt-`));
    expect(await readFile(path.join(folder(), safeFileName(ANA), aside!), 'utf8')).to.equal('\u0000\u0001not json at all\n{"half":');
  });

  it('a restart keeps every line, searchable at once', async () => {
    const now = Date.now();
    await log(ANA).addMany([
      { id: 'a1', by: ANA, text: 'the harbour address is pelican lane', at: now - 2 },
      { id: 'a2', by: ANA, text: 'bring the blue umbrella', at: now - 1 },
      { id: 'a3', by: ANA, text: 'the harbour opens at six', at: now },
    ]);
    expect(await texts(ANA, 'harbour')).to.have.length(2);
    await stores.close();
    closeDatabase(data.dir);
    open();
    expect(await texts(ANA, 'harbour')).to.deep.equal(['the harbour opens at six', 'the harbour address is pelican lane']);
    expect(await log(ANA).size()).to.equal(3);
  });

  it('an edit by its writer replaces the old words everywhere on disk (database, its word index and WAL) and in search', async () => {
    const now = Date.now();
    await log(ANA).addMany([
      { id: 'a1', by: ANA, text: 'my pin is 4471 zebra', at: now - 1 },
      { id: 'a2', by: ANA, text: 'another line', at: now },
    ]);
    await stores.flush();
    expect(await storeDatabaseText(data.dir)).to.include('zebra');
    expect(await privacy.edit!(ANA, 'a1', 'my pin is secret', [BUDI]), 'another person cannot edit it').to.equal(0);
    expect(await privacy.edit!(ANA, 'a1', 'my pin is secret', [ANA])).to.equal(1);
    await stores.flush();
    expect(await storeDatabaseText(data.dir)).not.to.include('zebra');
    expect(await storeDatabaseText(data.dir)).not.to.include('4471');
    expect(await texts(ANA, 'zebra')).to.deep.equal([]);
    expect(await texts(ANA, 'secret')).to.deep.equal(['my pin is secret']);
    await stores.close();
    open();
    expect(await texts(ANA, 'zebra'), 'after a restart too').to.deep.equal([]);
    expect(await texts(ANA, 'secret')).to.deep.equal(['my pin is secret']);
  });

  it('a message deleted for everyone and a .mydata delete take their words off disk and out of search', async () => {
    const now = Date.now();
    await log(GROUP).addMany([
      { id: 'g1', by: ANA, text: 'ana says walrus tango', at: now - 2 },
      { id: 'g2', by: BUDI, text: 'budi says walrus foxtrot', at: now - 1 },
      { id: 'g3', by: BUDI, text: 'budi says kiwi', at: now },
    ]);
    await log(ANA).add({ id: 'a1', by: ANA, text: 'private walrus sierra', at: now });
    await stores.flush();
    expect(await privacy.revoke!(GROUP, 'g2', [ANA]), 'only its writer (or an admin) deletes it').to.equal(0);
    expect(await privacy.revoke!(GROUP, 'g2', [BUDI])).to.equal(1);
    await stores.flush();
    expect(await storeDatabaseText(data.dir)).not.to.include('foxtrot');
    expect(await texts(GROUP, 'walrus')).to.deep.equal(['ana says walrus tango']);

    const exported = (await privacy.exportFor([ANA, ANA_LID])) as Record<string, Record<string, Array<{ text: string }>>>;
    expect(exported.said[GROUP].map((s) => s.text)).to.deep.equal(['ana says walrus tango']);
    expect(exported.said[ANA].map((s) => s.text)).to.deep.equal(['private walrus sierra']);
    expect(await privacy.deleteFor([ANA, ANA_LID])).to.equal(2);
    await stores.flush();
    const disk = await storeDatabaseText(data.dir);
    expect(disk).not.to.include('tango');
    expect(disk).not.to.include('sierra');
    expect(disk, "another person's line stays").to.include('budi says kiwi');
    expect(await texts(GROUP, 'walrus')).to.deep.equal([]);
    expect(await texts(ANA, 'walrus')).to.deep.equal([]);
  });

  it('a chat moving from its LID to its phone id carries its lines along and leaves nothing under the old id', async () => {
    const now = Date.now();
    await log(ANA_LID).addMany([
      { id: 'l1', by: ANA_LID, text: 'the boiler code is 7788', at: now - 10 },
      { id: 'l2', by: ANA_LID, text: 'the boiler is in the cellar', at: now - 5 },
    ]);
    await log(ANA).add({ id: 'p1', by: ANA, text: 'the boiler was fixed', at: now });
    await privacy.moveChat!(ANA_LID, ANA);
    expect(await texts(ANA, 'boiler')).to.deep.equal(['the boiler was fixed', 'the boiler is in the cellar', 'the boiler code is 7788']);
    expect(await texts(ANA_LID, 'boiler')).to.deep.equal([]);
    expect(await stat(path.join(folder(), safeFileName(ANA_LID))).then(() => true, () => false), 'the old folder is gone').to.equal(false);
    // Moving again (a crash cut the first move short, the transport announces it again) adds nothing twice.
    await privacy.moveChat!(ANA_LID, ANA);
    await stores.close();
    open();
    expect(await log(ANA).size()).to.equal(3);
  });

  it("retention drops lines older than the declaration's keepDays at start, and a plugin's tuned days now", async () => {
    const now = Date.now();
    await log(ANA).addMany([
      { id: 'a1', by: ANA, text: 'ancient heron', at: now - 40 * DAY_MS },
      { id: 'a2', by: ANA, text: 'older heron', at: now - 10 * DAY_MS },
      { id: 'a3', by: ANA, text: 'fresh heron', at: now },
    ]);
    await stores.close();
    stores = new PluginStores('notes', data.dir, [SAID]);
    await stores.sweep();
    expect(await storeDatabaseText(data.dir)).not.to.include('ancient');
    expect(await texts(ANA, 'heron')).to.deep.equal(['fresh heron', 'older heron']);
    await stores.tune(SAID, { keepDays: () => 5 });
    expect(await storeDatabaseText(data.dir)).not.to.include('older heron');
    expect(await texts(ANA, 'heron')).to.deep.equal(['fresh heron']);
  });

  it('lines added without waiting reach the disk by the flush, and the flush reports lines it could not write', async () => {
    expect(log(ANA).addSoon({ id: 'a1', by: ANA, text: 'soon walrus', at: Date.now() }, 60_000)).to.equal(true);
    expect(await texts(ANA, 'walrus')).to.deep.equal(['soon walrus']);
    await stores.flush();
    expect(await storeDatabaseText(data.dir)).to.include('soon walrus');
    // The database cannot grow (a full disk): the item fails to be written, is kept, and the flush says so.
    const db = databaseFor(data.dir);
    db.exec(`PRAGMA max_page_count = ${db.get<{ page_count: number }>('PRAGMA page_count')!.page_count}`);
    const filler = Array.from({ length: 500 }, (_, i) => `filler${i}`).join(' ');
    log(BUDI).addSoon({ id: 'b1', by: BUDI, text: `lost walrus ${filler}`, at: Date.now() }, 60_000);
    let failure: unknown;
    await stores.flush().catch((err: unknown) => (failure = err));
    expect((failure as { code?: string } | undefined)?.code).to.equal('PLUGIN_STORE_WRITE_FAILED');
    db.exec('PRAGMA max_page_count = 1073741823');
    await stores.flush();
    expect(await storeDatabaseText(data.dir)).to.include('lost walrus');
  });

  it('opening a search log the plugin did not declare throws, naming the fix', () => {
    const OTHER = Store.chatSearchLog('other', Said);
    expect(() => stores.chat(ANA).searchLog(OTHER)).to.throw(/does not declare/);
  });
});

describe('core search log: items without words (keepsEmpty)', () => {
  const data = storeFolderPerTest({ prefix: 'search-log-engine-', inside: 'data' });
  const item = (value: unknown) => {
    const v = value as { text?: unknown; at?: unknown; id?: unknown };
    return typeof v?.text === 'string' && typeof v.at === 'number' ? { text: v.text, at: v.at, ...(typeof v.id === 'string' ? { id: v.id } : {}) } : undefined;
  };
  const logOf = (name: string, keepsEmpty: boolean) => new SqlSearchLog({ dataDir: data.dir, namespace: 'test', name, folder: path.join(data.dir, name), domain: domainFor(data.dir), title: name, item, keepsEmpty });

  it('keeps an item without words only when the log says so, across a restart', async () => {
    const at = Date.parse('2026-11-01T10:00:00Z');
    await logOf('kept', true).chat(GROUP).addMany([{ id: 'gone', text: '', at }, { id: 'here', text: 'the harbour at dawn', at: at + 1 }]);
    closeDatabase(data.dir);
    expect((await logOf('kept', true).chat(GROUP).where(() => true)).map((i) => i.id)).to.deep.equal(['gone', 'here']);
    const skipping = logOf('skipped', false);
    await skipping.chat(GROUP).addMany([{ id: 'gone', text: '   ', at }, { id: 'here', text: 'the harbour at dawn', at: at + 1 }]);
    expect((await skipping.chat(GROUP).where(() => true)).map((i) => i.id)).to.deep.equal(['here']);
  });
});
