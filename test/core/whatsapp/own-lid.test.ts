import { expect } from 'chai';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { definePlugin } from '../../../core/kernel/plugin/contract.js';
import { startFakeSocketBot, type FakeSocketBot } from '../../../app/testing/fake-socket-bot.js';
import { BOT_LID, BOT_PHONE, waText } from '../../fakes/baileys-socket.js';
import { tempDir } from '../../helpers/checkout.js';
import { storedDocuments } from '../../helpers/disk-text.js';
import { cleanup, link, setup } from './harness.js';

const ALICE_PHONE = '6281200000007';
const ALICE = `${ALICE_PHONE}@s.whatsapp.net`;
const quiet = definePlugin({ name: 'quiet', description: 'test: nothing of its own', setup: () => ({}) });

async function linksOnDisk(bot: FakeSocketBot): Promise<Record<string, string>> {
  await bot.transport.stop();
  const file = (storedDocuments(path.join(bot.dir, 'data'), 'whatsapp', 'identity-links')[''] ?? {}) as { lidToPhone?: Record<string, string> };
  return file.lidToPhone ?? {};
}

/** The account's own LID must never become a contact's: that contact's reminders would go to "Message yourself". */
describe("WhatsApp identity: the account's own LID is never learnt as a contact's (fake socket)", function () {
  this.timeout(30_000);
  let bot: FakeSocketBot | undefined;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });

  it("the owner typing to a contact on the phone (a fromMe message without remoteJidAlt) leaves identity-links clean, and the bot's own sends to that contact still reach the contact", async () => {
    bot = await startFakeSocketBot(quiet);
    await bot.deliver(waText('I will take this one', { from: ALICE, fromMe: true }));
    const sent = await bot.transport.sendText(ALICE, 'reminder: call the plumber');
    expect(bot.socket.sent.find((r) => r.id === sent.id)?.jid).to.equal(ALICE);
    expect(await linksOnDisk(bot)).to.deep.equal({ [BOT_LID]: BOT_PHONE });
  });

  it("a pair WhatsApp's events name with the account's own LID and a contact's phone (or the reverse) is not learnt", async () => {
    bot = await startFakeSocketBot(quiet);
    bot.socket.ev.emit('lid-mapping.update', { lid: `${BOT_LID}@lid`, pn: ALICE });
    bot.socket.ev.emit('contacts.upsert', [{ id: `${BOT_PHONE}@s.whatsapp.net`, lid: '44400000000002@lid' }]);
    bot.socket.ev.emit('lid-mapping.update', { lid: '44400000000001@lid', pn: '6281200000009@s.whatsapp.net' });
    expect(await linksOnDisk(bot)).to.deep.equal({ [BOT_LID]: BOT_PHONE, '44400000000001': '6281200000009' });
  });

  it('a pair naming the account with a contact, left on disk by an older version, is dropped at start', async () => {
    const dir = await tempDir('wabot-ownlid-');
    await mkdir(path.join(dir, 'data', 'whatsapp'), { recursive: true });
    await writeFile(path.join(dir, 'data', 'whatsapp', 'identity-links.json'), JSON.stringify({ lidToPhone: { [BOT_LID]: ALICE_PHONE, '44400000000001': '6281200000009' } }));
    bot = await startFakeSocketBot(quiet, { dir });
    await bot.transport.idle();
    expect(bot.logs().some((l) => String(l.msg).includes("named the account's own id as a contact's"))).to.equal(true);
    const sent = await bot.transport.sendText(ALICE, 'reminder: call the plumber');
    expect(bot.socket.sent.find((r) => r.id === sent.id)?.jid).to.equal(ALICE);
    expect(await linksOnDisk(bot)).to.deep.equal({ [BOT_LID]: BOT_PHONE, '44400000000001': '6281200000009' });
  });
});

/**
 * Baileys' own LID store of the session (`signalRepository.lidMapping`) answers for pairs the bot was never told;
 * its answers pass the same guard as what the bot learns.
 */
describe("WhatsApp identity: Baileys' LID store is the fallback source, and never names the account as a contact (fake socket)", () => {
  afterEach(cleanup);
  const CAROL_LID = '44400000000007@lid';
  const CAROL = '6281200000077@s.whatsapp.net';

  it('a LID-only sender the bot was never told of is named by phone from the store; a store answer naming the account itself is not used', async () => {
    const h = await setup();
    await link(h);
    const lidMapping = h.sockets.last.signalRepository.lidMapping;
    await lidMapping.storeLIDPNMappings([{ lid: CAROL_LID, pn: CAROL }]);
    // A pair the store got wrong: a contact's LID with the account's own phone.
    await lidMapping.storeLIDPNMappings([{ lid: '44400000000008@lid', pn: `${BOT_PHONE}@s.whatsapp.net` }]);
    h.sockets.last.deliver([waText('hi from Carol', { from: CAROL_LID })]);
    h.sockets.last.deliver([waText('hi from Dave', { from: '44400000000008@lid' })]);
    await h.transport.idle();
    expect(h.received.map((m) => [m.text, m.senderId, m.senderAltId])).to.deep.equal([
      ['hi from Carol', CAROL, CAROL_LID],
      ['hi from Dave', '44400000000008@lid', undefined],
    ]);
    await h.transport.stop();
    const links = (storedDocuments(path.join(h.dir, 'data'), 'whatsapp', 'identity-links')[''] ?? {}) as { lidToPhone?: Record<string, string> };
    expect(links.lidToPhone).to.include({ '44400000000007': '6281200000077' });
    expect(links.lidToPhone).to.not.have.property('44400000000008');
  });

  it("a message the bot starts to a contact goes to the contact's LID from the store, never to the account's own LID the store paired with them", async () => {
    const h = await setup();
    await link(h);
    const lidMapping = h.sockets.last.signalRepository.lidMapping;
    await lidMapping.storeLIDPNMappings([{ lid: CAROL_LID, pn: CAROL }]);
    await lidMapping.storeLIDPNMappings([{ lid: `${BOT_LID}@lid`, pn: ALICE }]);
    await h.transport.sendText(CAROL, 'reminder for Carol');
    await h.transport.sendText(ALICE, 'reminder for Alice');
    expect(h.sockets.last.sent.map((s) => s.jid)).to.deep.equal([CAROL_LID, ALICE]);
  });
});
