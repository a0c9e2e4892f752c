import { expect } from 'chai';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { definePlugin } from '../../../core/kernel/plugin/contract.js';
import { startFakeSocketBot, type FakeSocketBot } from '../../../app/testing/fake-socket-bot.js';
import { BOT_LID, BOT_PHONE, waText } from '../../fakes/baileys-socket.js';
import { tempDir } from '../../helpers/checkout.js';
import { storedDocuments } from '../../helpers/disk-text.js';

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
