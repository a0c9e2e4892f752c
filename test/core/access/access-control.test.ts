import { expect } from 'chai';
import { AccessControl, MAX_HELD_MESSAGES, MAX_PENDING_REQUESTS, PAIRING_CODE_TTL_MS } from '../../../core/kernel/access/access-control.js';
import { accessDocument } from '../../../core/kernel/access/access-document.js';
import { coreStores } from '../../../core/kernel/bot/core-stores.js';
import { MemoryStore } from '../../../core/services/store/memory.js';
import type { PluginStores } from '../../../core/services/store/plugin-store.js';
import { PrivacyRegistry } from '../../../core/services/store/privacy.js';
import { withDefaults } from '../../../core/services/config/config-file.js';
import { createLogger } from '../../../core/services/log/logger.js';
import { HistoryStore } from '../../../core/services/store/history.js';
import type { IncomingMessage } from '../../../core/kernel/port/message.js';
import { everyFileText } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

describe('pairing rules (AccessControl)', () => {
  let now: number;
  let told: string[];
  let redelivered: IncomingMessage[];
  let access: AccessControl;
  const folder = storeFolderPerTest({ prefix: 'wabot-access-', closing: () => access.flush() });
  let seq = 0;
  const from = (user: string, text = 'hi'): IncomingMessage => ({ id: `m${++seq}`, chatId: `${user}@s.whatsapp.net`, senderId: `${user}@s.whatsapp.net`, isGroup: false, text, mentions: [], timestamp: now });

  beforeEach(async () => {
    now = Date.UTC(2026, 0, 1);
    told = [];
    redelivered = [];
    access = new AccessControl({
      file: accessDocument(folder.dir),
      config: () => withDefaults({}),
      log: createLogger({ level: 'silent' }),
      histories: new HistoryStore(folder.dir, 50),
      tellOwners: async (text) => void told.push(text),
      redeliver: async (m) => void redelivered.push(m),
      now: () => now,
    });
    await access.load();
  });

  it('gives a code of 6–8 unambiguous letters/digits once, and holds at most three messages', async () => {
    const answer = await access.holdStranger(from('628100', 'one'));
    const code = /code is ([A-Z0-9]+)\./.exec(answer!)![1];
    expect(code).to.match(/^[A-HJ-NP-Z2-9]{6,8}$/);
    for (const text of ['two', 'three', 'four', 'five']) expect(await access.holdStranger(from('628100', text))).to.equal(undefined);
    expect(told).to.have.length(1);
    const result = await access.approve(code, 'owner');
    expect(result.ok && result.answered).to.equal(MAX_HELD_MESSAGES);
    expect(redelivered.map((m) => m.text)).to.deep.equal(['one', 'two', 'three']);
    expect(access.isApproved(['628100@s.whatsapp.net'])).to.equal(true);
  });

  it('a prefix of a code, or no code at all, approves nobody: only the whole code lets the stranger in', async () => {
    const code = /code is ([A-Z0-9]+)\./.exec((await access.holdStranger(from('628100')))!)![1];
    for (const attempt of [code.slice(0, -1), code.slice(0, 3), code[0]!, '', ' ', `${code}X`]) {
      const refused = await access.approve(attempt, 'owner');
      expect(refused.ok, `.approve "${attempt}"`).to.equal(false);
      expect(access.isApproved(['628100@s.whatsapp.net']), `.approve "${attempt}"`).to.equal(false);
    }
    expect(redelivered).to.deep.equal([]);
    expect((await access.deny(code.slice(0, 4), 'owner')).ok, 'a prefix denies nobody either').to.equal(false);
    expect(access.pending().map((p) => p.code)).to.deep.equal([code]);
    expect((await access.approve(code, 'owner')).ok).to.equal(true);
    expect(access.isApproved(['628100@s.whatsapp.net'])).to.equal(true);
  });

  it('refuses a code after an hour, and the sender then gets a new one', async () => {
    const first = /code is ([A-Z0-9]+)\./.exec((await access.holdStranger(from('628100')))!)![1];
    now += PAIRING_CODE_TTL_MS + 1;
    const refused = await access.approve(first, 'owner');
    expect(refused.ok).to.equal(false);
    expect(!refused.ok && refused.reason).to.match(/No pairing request has the code .*expired/);
    expect(access.isApproved(['628100@s.whatsapp.net'])).to.equal(false);
    expect(await access.holdStranger(from('628100'))).to.match(/pairing code is/);
  });

  it('gives no more codes past the global cap, tells such a stranger once, and does not tell the owners', async () => {
    for (let i = 0; i < MAX_PENDING_REQUESTS; i++) expect(await access.holdStranger(from(`62810${i}`))).to.match(/pairing code is/);
    expect(await access.holdStranger(from('629999'))).to.match(/not taking new contacts/);
    expect(await access.holdStranger(from('629999'))).to.equal(undefined);
    expect(told).to.have.length(MAX_PENDING_REQUESTS);
    expect(access.pending()).to.have.length(MAX_PENDING_REQUESTS);
  });

  it('a paused chat resumes by itself when takeover.minutes are over; .bot off lasts', async () => {
    await access.ownerTyped({ ...from('628100', 'I take this'), fromMe: true });
    expect(access.pausedUntil('628100@s.whatsapp.net')).to.equal(now + 30 * 60_000);
    now += 30 * 60_000 + 1;
    expect(access.pausedUntil('628100@s.whatsapp.net')).to.equal(undefined);
    await access.ownerTyped({ ...from('628100', '.bot off'), fromMe: true });
    now += 365 * 24 * 3600_000;
    expect(access.pausedUntil('628100@s.whatsapp.net')).to.equal(null);
  });
});

describe('the access document in the store database', () => {
  const folder = storeFolderPerTest({ prefix: 'wabot-access-' });
  it("a person's delete leaves their persona and pairing request in no file of the data folder; the others' stay", async () => {
    const log = createLogger({ level: 'silent' });
    // As the bot wires it: the core's stores hold the document, and the privacy controls follow its declaration.
    const core = coreStores(folder.dir, { histories: new HistoryStore(folder.dir, 50), memories: new MemoryStore(folder.dir) });
    const privacy = new PrivacyRegistry();
    privacy.adopt(core);
    const open = (stores?: PluginStores) =>
      new AccessControl({ file: accessDocument(folder.dir, stores), config: () => withDefaults({}), log, histories: new HistoryStore(folder.dir, 50), tellOwners: async () => undefined, redeliver: async () => undefined });
    const access = open(core);
    await access.load();
    const ana = '628100@s.whatsapp.net';
    await access.setPersona(ana, 'ana-persona-words', 'owner');
    await access.setPersona('628200@s.whatsapp.net', 'budi-persona-words', 'owner');
    await access.holdStranger({ id: 'm1', chatId: ana, senderId: ana, isGroup: false, text: 'ana-held-words', mentions: [], timestamp: Date.now() });
    await access.flush();
    expect(await everyFileText(folder.dir, 'latin1')).to.include('ana-persona-words').and.include('ana-held-words');
    expect((await privacy.deleteFor([ana])).access).to.equal(2);
    const onDisk = await everyFileText(folder.dir, 'latin1');
    expect(onDisk).not.to.include('ana-persona-words').and.not.to.include('ana-held-words');
    expect(onDisk).to.include('budi-persona-words');
    // Kept across a reopen (the database, not memory).
    const again = open();
    await again.load();
    expect(again.persona('628200@s.whatsapp.net')).to.equal('budi-persona-words');
    expect(again.persona(ana)).to.equal(undefined);
  });
});
