import { expect } from 'chai';
import { Type } from '#typebox';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AccessControl } from '../../../core/kernel/access/access-control.js';
import { accessDocument } from '../../../core/kernel/access/access-document.js';
import type { AccessDocument } from '../../../core/kernel/access/access-store.js';
import { coreStores } from '../../../core/kernel/bot/core-stores.js';
import type { IncomingMessage } from '../../../core/kernel/port/message.js';
import { withDefaults } from '../../../core/services/config/config-file.js';
import { createLogger } from '../../../core/services/log/logger.js';
import { closeDatabase } from '../../../core/services/store/database.js';
import { HistoryStore } from '../../../core/services/store/history.js';
import { MemoryStore } from '../../../core/services/store/memory.js';
import { PrivacyRegistry } from '../../../core/services/store/privacy.js';
import { Store } from '../../../core/services/store/store-declarations.js';
import { everyFileText } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

const ANA = '6281100000001@s.whatsapp.net';
const ANA_LID = '44400000000001@lid';
const BOB = '6281100000002@s.whatsapp.net';
const BOB_LID = '44400000000002@lid';
const OWNER = '6281100000009@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';
const T0 = Date.UTC(2026, 10, 29, 12);

/*
 * The access document's privacy follows from its declaration (ACCESS_STORE's parts), as the bot wires it: the core's
 * stores hold the document, the access rules read the same copy, the privacy registry adopts the core's stores.
 */
describe("the access document: .mydata and chat moves from its declaration's parts", () => {
  const folder = storeFolderPerTest({ prefix: 'wabot-access-privacy-' });
  let privacy: PrivacyRegistry;
  let access: AccessControl;
  let now: number;
  let seq = 0;
  const log = createLogger({ level: 'silent' });
  const open = async () => {
    const core = coreStores(folder.dir, { histories: new HistoryStore(folder.dir, 50), memories: new MemoryStore(folder.dir) });
    privacy = new PrivacyRegistry();
    privacy.adopt(core);
    access = new AccessControl({ file: accessDocument(folder.dir, core), config: () => withDefaults({}), log, histories: new HistoryStore(folder.dir, 50), tellOwners: async () => undefined, redeliver: async () => undefined, now: () => now });
    await access.load();
  };
  const reopen = async () => {
    await access.flush();
    closeDatabase(folder.dir);
    await open();
  };
  const stranger = (senderId: string, text: string, senderAltId?: string): IncomingMessage => ({ id: `m${++seq}`, chatId: senderId, senderId, ...(senderAltId ? { senderAltId } : {}), isGroup: false, text, mentions: [], timestamp: now });
  const codeOf = (answer: string | undefined) => /code is ([A-Z0-9]+)\./.exec(answer ?? '')![1]!;

  beforeEach(async () => {
    now = T0;
    await open();
  });

  /** Ana approved (written from her LID), a request of hers waiting (from her LID, her phone its second id), personas and a pause; the same of Bob's. */
  async function plant(): Promise<void> {
    await access.approve(codeOf(await access.holdStranger(stranger(ANA_LID, 'ana first words'))), OWNER);
    await access.approve(codeOf(await access.holdStranger(stranger(BOB, 'bob first words'))), OWNER);
    // A later request from Ana's other id (expired approvals aside, a request is kept per id until decided).
    await access.holdStranger(stranger('44400000000011@lid', 'ana-held-words', ANA));
    await access.holdStranger(stranger(BOB_LID, 'bob-held-words'));
    await access.setPersona(ANA, 'ana-private-persona', OWNER);
    await access.setPersona(GROUP, 'ana-group-persona', ANA);
    await access.setPersona(BOB, 'bob-private-persona', OWNER);
    await access.setActivation(GROUP, 'always', ANA);
    await access.pause(ANA, null, 'phone');
  }

  it('exports her approval (by her LID digits), her pairing request (by its second id) and the personas of her chat or set by her; nothing of others, no pause or group', async () => {
    await plant();
    const section = (await privacy.exportFor([ANA, ANA_LID])).access as Record<string, any>;
    expect(Object.keys(section)).to.deep.equal(['approved', 'pairingRequests', 'personas']);
    expect(section.approved.map((a: { id: string }) => a.id)).to.deep.equal(['44400000000001']);
    expect(section.pairingRequests.map((p: { held: Array<{ text: string }> }) => p.held.map((h) => h.text))).to.deep.equal([['ana-held-words']]);
    expect(Object.keys(section.personas).sort()).to.deep.equal([GROUP, ANA].sort());
    expect(JSON.stringify(section)).not.to.match(/bob/);

    // Known by her phone alone: the request still is hers (its second id), the approval of her LID is not named.
    const byPhone = (await privacy.exportFor([ANA])).access as Record<string, any>;
    expect(byPhone.approved).to.deep.equal([]);
    expect(byPhone.pairingRequests).to.have.length(1);
    expect(Object.keys(byPhone.personas).sort()).to.deep.equal([GROUP, ANA].sort());
  });

  it('her delete takes her pairing requests and personas from every file and from what the bot reads now; her approval, her pause and the group stay; others keep theirs', async () => {
    await plant();
    await access.flush();
    expect(await everyFileText(folder.dir, 'latin1')).to.include('ana-held-words').and.include('ana-group-persona');

    expect((await privacy.deleteFor([ANA, ANA_LID])).access).to.equal(3);
    const onDisk = await everyFileText(folder.dir, 'latin1');
    for (const words of ['ana-held-words', 'ana-private-persona', 'ana-group-persona']) expect(onDisk, words).not.to.include(words);
    expect(onDisk).to.include('bob-held-words').and.include('bob-private-persona');
    const check = () => {
      expect(access.pending().map((p) => p.sender)).to.deep.equal([BOB_LID]);
      expect([access.persona(ANA), access.persona(GROUP), access.persona(BOB)]).to.deep.equal([undefined, undefined, 'bob-private-persona']);
      // An owner's decisions about her are not hers to undo: still let in, still paused, the group still open.
      expect(access.isApproved([ANA_LID]) && access.isApproved([BOB])).to.equal(true);
      expect(access.pausedUntil(ANA)).to.equal(null);
      expect(access.activation(GROUP)).to.equal('always');
    };
    check();
    await reopen();
    check();
  });

  it("a stranger's delete lets no one in: their request goes, they stay out and get a new code", async () => {
    await access.holdStranger(stranger(BOB, 'let me in'));
    expect((await privacy.deleteFor([BOB])).access).to.equal(1);
    expect(access.isApproved([BOB])).to.equal(false);
    expect(access.pending()).to.deep.equal([]);
    expect(await access.holdStranger(stranger(BOB, 'again'))).to.match(/pairing code is/);
    await reopen();
    expect(access.approved()).to.deep.equal([]);
  });

  it('a chat moving from its LID to its phone takes its persona (the phone\'s own kept) and its pause, the longer pause winning', async () => {
    const until = (minutes: number) => T0 + minutes * 60_000;
    const pairs = [
      { what: '.bot off over a timed pause', lid: null, phone: until(30), kept: null },
      { what: 'a later time over an earlier one', lid: until(90), phone: until(30), kept: until(90) },
      { what: 'an earlier time under a later one', lid: until(30), phone: until(90), kept: until(90) },
      { what: 'a timed pause under .bot off', lid: until(90), phone: null, kept: null },
      { what: 'a pause onto none', lid: until(45), phone: undefined, kept: until(45) },
    ];
    const lid = (i: number) => `4440000000010${i}@lid`;
    const phone = (i: number) => `628110000010${i}@s.whatsapp.net`;
    for (const [i, p] of pairs.entries()) {
      await access.pause(lid(i), p.lid, 'phone');
      if (p.phone !== undefined) await access.pause(phone(i), p.phone, OWNER);
    }
    await access.setPersona(lid(0), 'lid-persona-0', OWNER);
    await access.setPersona(lid(1), 'lid-persona-1', OWNER);
    await access.setPersona(phone(1), 'phone-persona-1', OWNER);
    for (const i of pairs.keys()) await privacy.moveChat(lid(i), phone(i));

    const check = () => {
      for (const [i, p] of pairs.entries()) {
        expect(access.pausedUntil(phone(i)), p.what).to.equal(p.kept);
        expect(access.pausedUntil(lid(i)), p.what).to.equal(undefined);
      }
      expect([access.persona(phone(0)), access.persona(phone(1))]).to.deep.equal(['lid-persona-0', 'phone-persona-1']);
      expect([access.persona(lid(0)), access.persona(lid(1))]).to.deep.equal([undefined, undefined]);
    };
    check();
    await reopen();
    check();
  });
});

describe('the access document of an earlier version (data/access/state.json)', () => {
  const folder = storeFolderPerTest({ prefix: 'wabot-access-earlier-' });

  it('is taken in once at the first start (kept aside, never again over later changes), and a delete reaches the copy kept aside', async () => {
    const earlier: AccessDocument & { version: number } = {
      version: 1,
      approved: [{ id: '6281100000002', by: OWNER, at: T0 }],
      pending: [{ code: 'ABCDEFGH', sender: ANA, chatId: ANA, at: T0, held: [{ id: 'x1', text: 'ana-earlier-words', at: T0 }] }],
      groups: {},
      personas: { [BOB]: { text: 'bob-earlier-persona', by: OWNER, at: T0 } },
      paused: {},
    };
    const file = path.join(folder.dir, 'access', 'state.json');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify(earlier));
    const open = async () => {
      const core = coreStores(folder.dir, { histories: new HistoryStore(folder.dir, 50), memories: new MemoryStore(folder.dir) });
      const privacy = new PrivacyRegistry();
      privacy.adopt(core);
      const access = new AccessControl({ file: accessDocument(folder.dir, core), config: () => withDefaults({}), log: createLogger({ level: 'silent' }), histories: new HistoryStore(folder.dir, 50), tellOwners: async () => undefined, redeliver: async () => undefined, now: () => T0 });
      await access.load();
      return { access, privacy };
    };
    let { access, privacy } = await open();
    expect(access.isApproved([BOB])).to.equal(true);
    expect(access.persona(BOB)).to.equal('bob-earlier-persona');
    const aside = path.join(folder.dir, 'migrated', 'access', 'state.json');
    expect(existsSync(file)).to.equal(false);
    expect(await readFile(aside, 'utf8')).to.include('ana-earlier-words');

    // A crash between taking it in and moving it aside: the same file found again is not taken in over later changes.
    await access.setPersona(BOB, 'bob-later-persona', OWNER);
    await access.flush();
    closeDatabase(folder.dir);
    await copyFile(aside, file);
    ({ access, privacy } = await open());
    expect(access.persona(BOB)).to.equal('bob-later-persona');

    // Ana's request left the database by its approval, not by a delete: her delete still takes her words from the copy kept aside.
    expect((await access.approve('ABCDEFGH', OWNER)).ok).to.equal(true);
    await access.flush();
    expect(await everyFileText(folder.dir, 'latin1')).to.include('ana-earlier-words');
    expect((await privacy.deleteFor([ANA])).access).to.equal(0);
    expect(await everyFileText(folder.dir, 'latin1')).not.to.include('ana-earlier-words');
    expect(access.isApproved([ANA])).to.equal(true);
  });
});

describe('Store.doc parts: what a declaration may say', () => {
  const schema = Type.Object({ list: Type.Array(Type.String()), map: Type.Record(Type.String(), Type.String()) });
  const initial = () => ({ list: [], map: {} });
  it('refuses parts with people, a part with both or neither of list and byChat, merge on a list, and an unknown privacy rule', () => {
    const refused: Array<[string, () => unknown]> = [
      ['parts and people', () => Store.doc('a', schema, initial, { people: { byId: (d) => d.map }, parts: { m: { byChat: (d) => d.map } } })],
      ['both', () => Store.doc('a', schema, initial, { parts: { m: { byChat: (d) => d.map, list: (d) => d.list } } })],
      ['neither', () => Store.doc('a', schema, initial, { parts: { m: { people: () => [] } } })],
      ['merge on a list', () => Store.doc('a', schema, initial, { parts: { l: { list: (d) => d.list, merge: (a) => a } } })],
      ['unknown privacy', () => Store.doc('a', schema, initial, { parts: { l: { list: (d) => d.list, privacy: 'keep' as 'export' } } })],
    ];
    for (const [what, declare] of refused) expect(declare, what).to.throw(TypeError, /Store: a/);
    expect(() => Store.doc('a', schema, initial, { parts: { l: { list: (d) => d.list, privacy: 'export' }, m: { byChat: (d) => d.map, merge: (a) => a } } })).not.to.throw();
  });
});
