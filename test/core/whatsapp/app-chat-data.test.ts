import { expect } from 'chai';
import { readdir, readFile, rm } from 'node:fs/promises';
import { storeDatabaseText, storedChatLogText, storedDocuments, storedHistory, storedSearchLogText } from '../../helpers/disk-text.js';
import path from 'node:path';
import { proto, type WAMessage } from '@whiskeysockets/baileys';
import type { App } from '../../../app/app.js';
import { FakeModel } from '../../../app/testing/index.js';
import type { WhatsAppTransport } from '../../../core/adapters/whatsapp/whatsapp-transport.js';
import recall from '../../../plugins/recall/index.js';
import mydata from '../../../plugins/mydata/index.js';
import remind from '../../../plugins/remind/index.js';
import { linkBot } from '../../../app/testing/whatsapp.js';
import { BOT_PHONE, type FakeSocketFactory, GROUP, waMessage, waText } from '../../fakes/baileys-socket.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { FAST_SENDING, UNPACED_ANSWERS } from '../../helpers/chat.js';

const ALICE = '6281211110000@s.whatsapp.net';
const ALICE_LID = '98765432100001@lid';
const MALLORY = '6281233330000@s.whatsapp.net';
const ADMIN = '6281244440000@s.whatsapp.net';
const BOT_JID = `${BOT_PHONE}@s.whatsapp.net`;
const { REVOKE, MESSAGE_EDIT } = proto.Message.ProtocolMessage.Type;

/** A delete for everyone of `target` (sent by `participant` in `chat`), sent by `from`: a real Baileys protocol message. */
function revokeOf(target: WAMessage, from: string): WAMessage {
  const key = target.key!;
  return waMessage({ protocolMessage: { type: REVOKE, key: { remoteJid: key.remoteJid, id: key.id, fromMe: false, participant: key.participant } } }, { chat: key.remoteJid!, from });
}

/**
 * An edit of `target` by `from`, as WhatsApp sends it (rc14 unwraps both): a protocolMessage MESSAGE_EDIT inside the
 * `editedMessage` future-proof wrapper, or the bare protocolMessage.
 */
function editOf(target: WAMessage, from: string, text: string, wrapped = true): WAMessage {
  const key = target.key!;
  const protocolMessage = { type: MESSAGE_EDIT, key: { remoteJid: key.remoteJid, id: key.id, fromMe: false, participant: key.participant }, editedMessage: { conversation: text }, timestampMs: Date.now() };
  return waMessage(wrapped ? { editedMessage: { message: { protocolMessage } } } : { protocolMessage }, { chat: key.remoteJid!, from });
}

/**
 * Every file under `folder` (two levels: the recall log has a folder per chat), as text. A file that moves while it is
 * read (the temporary file of an atomic write, a history log a fold sets aside) makes the whole folder read again, so
 * no text is missed in between.
 */
async function textUnder(folder: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await textUnderOnce(folder);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 20) throw err;
    }
  }
}

async function textUnderOnce(folder: string): Promise<string> {
  let text = '';
  for (const entry of await readdir(folder, { withFileTypes: true }).catch(() => [])) {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) text += await textUnderOnce(full);
    else if (entry.isFile()) text += await readFile(full, 'utf8');
  }
  return text;
}

/**
 * The real bot (app, stores, recall plugin, metrics wrapper) over the WhatsApp transport on a fake socket that
 * delivers real Baileys messages: what the bot keeps about a chat follows what happens to the chat on WhatsApp.
 */
/** What data/ keeps of a kind: the history as the store database holds it, any other as the text of its folder. */
async function storedText(data: string, folder: string): Promise<string> {
  if (folder === 'history') return JSON.stringify(storedHistory(data));
  // The recall log's items are rows of the store database.
  if (folder === 'recall') return storedSearchLogText(data, 'recall', 'recall') + (await textUnder(path.join(data, folder)));
  return textUnder(path.join(data, folder));
}

describe('the real bot over WhatsApp: what it keeps follows the chat', function () {
  // Generous: a real transport, stores and fsyncs per message, on a machine that may be busy (npm run test:stress).
  this.timeout(40_000);
  let dir: string;
  let model: FakeModel;
  let app: App | undefined;
  let sockets: FakeSocketFactory;
  let transport: WhatsAppTransport;

  /** Resolves once every message delivered so far was mapped and handled (edits and deletes applied). */
  async function settle(): Promise<void> {
    await transport.idle();
    await app!.bot.idle();
  }

  async function start(): Promise<void> {
    ({ app, transport, sockets } = await linkBot({ dir, env: { API_KEY: 'test-key-123456', BASE_URL: model.url, MODEL: 'test-model' }, plugins: [recall, remind, mydata], answerPacing: UNPACED_ANSWERS }));
  }
  /** Delivers a message that the model answers; resolves with what the model was sent (the prompt) once answered. */
  async function say(message: proto.IWebMessageInfo): Promise<string> {
    const before = model.requests.length;
    sockets.last.deliver([message as never]);
    await settle();
    expect(model.requests.length, 'the model was asked').to.be.above(before);
    return JSON.stringify(model.requests.at(-1)?.messages ?? []);
  }

  beforeEach(async () => {
    dir = await tempDir('wabot-wa-chat-data-');
    // Each message its own turn at once (no 1.5 s burst window to wait out: bursts and a chat's move while one is open
    // are bursts-whatsapp.test.ts's and chat-move.test.ts's), and the reminder sent without the sending jitter.
    await writeConfig(dir, { conversation: { debounceMs: 0 }, sending: FAST_SENDING });
    model = await FakeModel.start(() => 'noted');
  });
  afterEach(async () => {
    await app?.stop();
    app = undefined;
    await model.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('what was said while the chat was known by its LID is in the prompt once the phone number is known, after a restart too', async () => {
    await start();
    await say(waText('my cat is called Miso', { from: ALICE_LID }));
    expect(await say(waText('what is my cat called?', { from: ALICE_LID, fromAlt: ALICE }))).to.include('my cat is called Miso');

    await app!.stop();
    app = undefined;
    await start();
    expect(await say(waText('and my dog?', { from: ALICE }))).to.include('my cat is called Miso');
    // No second copy under the LID (it would be reported as a clash and outlive a delete of the phone chat).
    expect(JSON.stringify(storedHistory(path.join(dir, 'data'), ALICE_LID))).not.to.include('Miso');
  });

  it("a reminder set while the chat was known by its LID moves with the chat to the phone id and fires there; the LID's file holds nothing", async () => {
    await start();
    // The reminders live in the store database: each chat's as it keeps them on disk.
    const reminders = () => storedDocuments(path.join(dir, 'data'), 'remind', 'reminders');
    sockets.last.deliver([waText('.remind 3s water the plants', { from: ALICE_LID })]);
    await settle();
    expect(JSON.stringify(reminders())).to.include('water the plants');

    sockets.last.deliver([waText('.reminders', { from: ALICE_LID, fromAlt: ALICE })]);
    await settle();
    const listed = sockets.last.sent.at(-1)!;
    expect(JSON.stringify(listed.content)).to.include('water the plants');
    expect(JSON.stringify(reminders()[ALICE_LID] ?? ''), 'the LID keeps none').not.to.include('water the plants');
    // Re-armed under the phone id: sent once when it falls due (the transport addresses the chat as WhatsApp does, so
    // the jid says nothing here; a timer left under the LID finds no reminder). Awaited as it is sent, when it falls due.
    const fired = () => sockets.last.sent.filter((s) => s !== listed && /water the plants/.test(JSON.stringify(s.content)) && !/Reminder set/.test(JSON.stringify(s.content)));
    if (!fired().length) await sockets.last.nextSent((s) => /water the plants/.test(JSON.stringify(s.content)));
    await settle();
    await app!.bot.whenStoresIdle();
    expect(fired()).to.have.length(1);
    expect(JSON.stringify(reminders()), 'a one-off reminder is gone once sent, from the document it was moved to').not.to.include('water the plants');
  });

  it('a message deleted for everyone leaves the prompt history and the recall log', async () => {
    await start();
    const secret = waText('my bank pin is 4471', { from: ALICE });
    await say(secret);
    await say(waText('thanks', { from: ALICE }));
    expect(await textUnder(path.join(dir, 'data'))).to.include('4471');

    const revoke = waMessage({ protocolMessage: { type: proto.Message.ProtocolMessage.Type.REVOKE, key: { remoteJid: ALICE, id: secret.key.id, fromMe: false } } }, { from: ALICE });
    sockets.last.deliver([revoke]);
    // The removal rewrites the history file (with an fsync) behind the chat's queue.
    await settle();
    await app!.bot.whenStoresIdle();
    expect(await say(waText('what did I say?', { from: ALICE }))).not.to.include('4471');
    expect(await storedText(path.join(dir, 'data'), 'history')).not.to.include('4471');
    expect(await storedText(path.join(dir, 'data'), 'recall')).not.to.include('4471');
    expect(await storeDatabaseText(path.join(dir, 'data')), 'nowhere in the database file or its WAL').not.to.include('4471');
  });

  it("a group member's forged delete of another member's message removes nothing; the sender's own and an admin's do", async () => {
    await start();
    sockets.last.groupAnswers.set(GROUP, { participants: [{ id: ALICE }, { id: MALLORY }, { id: ADMIN, admin: 'admin' }] as never });
    const vault = waText('the vault code is 9137', { chat: GROUP, from: ALICE });
    const locker = waText('my locker is 5521', { chat: GROUP, from: ALICE });
    sockets.last.deliver([vault, locker]);
    const reminder = waText(`@${BOT_PHONE} .remind 2h bring the contract for the notary`, { chat: GROUP, from: ALICE, mentions: [BOT_JID] });
    sockets.last.deliver([reminder]);
    await settle();
    const data = path.join(dir, 'data');
    for (const kept of ['9137', '5521', 'notary']) expect(await textUnder(data), kept).to.include(kept);

    // Mallory (no admin) deletes Alice's messages "for everyone", naming Alice as their sender: nothing goes.
    sockets.last.deliver([revokeOf(vault, MALLORY), revokeOf(locker, MALLORY), revokeOf(reminder, MALLORY)]);
    await settle();
    await app!.bot.histories.flush();
    for (const folder of ['history', 'recall']) expect(await storedText(data, folder), folder).to.include('9137').and.include('5521');
    // The reminders live in the store database: as it keeps them on disk.
    const reminders = () => JSON.stringify(storedDocuments(data, 'remind', 'reminders'));
    expect(reminders(), 'reminders').to.include('notary');
    // Alice's own delete, and the admin's delete of her other message, go everywhere.
    sockets.last.deliver([revokeOf(vault, ALICE), revokeOf(locker, ADMIN), revokeOf(reminder, ALICE)]);
    await settle();
    await app!.bot.histories.flush();
    const after = await textUnder(data);
    for (const gone of ['9137', '5521']) expect(after, gone).not.to.include(gone);
    // The reminder is cancelled (the bot's own confirmation that quoted it is a message of its own, kept).
    expect(reminders()).not.to.include('notary');
  });

  it('an edited message replaces its old text in the prompt history and the recall log; .recall finds the new words, not the old', async () => {
    await start();
    const original = waText('the meeting point is the old lighthouse', { from: ALICE });
    await say(original);
    sockets.last.deliver([editOf(original, ALICE, 'the meeting point is the north pier')]);
    await settle();
    await app!.bot.histories.flush();
    const data = path.join(dir, 'data');
    for (const folder of ['history', 'recall']) {
      const text = await storedText(data, folder);
      expect(text, folder).to.include('north pier').and.not.include('lighthouse');
    }
    const before = sockets.last.sent.length;
    sockets.last.deliver([waText('.recall lighthouse', { from: ALICE })]);
    await settle();
    sockets.last.deliver([waText('.recall pier', { from: ALICE })]);
    await settle();
    const [noMatch, match] = sockets.last.sent.slice(before).map((m) => JSON.stringify(m.content));
    expect(noMatch).not.to.include('north pier').and.not.include('old lighthouse');
    expect(match).to.include('north pier');
    expect(await say(waText('where do we meet?', { from: ALICE }))).to.include('north pier').and.not.include('lighthouse');
  });

  it("an edit sent by someone other than the message's sender changes nothing (an admin neither); the bare protocol form is applied too", async () => {
    await start();
    sockets.last.groupAnswers.set(GROUP, { participants: [{ id: ALICE }, { id: MALLORY }, { id: ADMIN, admin: 'admin' }] as never });
    const original = waText('dinner is at seven at Rosa', { chat: GROUP, from: ALICE });
    sockets.last.deliver([original]);
    await settle();
    sockets.last.deliver([editOf(original, MALLORY, 'dinner is cancelled, send money to Mallory'), editOf(original, ADMIN, 'dinner moved to the admin house', false)]);
    await settle();
    await app!.bot.histories.flush();
    const data = path.join(dir, 'data');
    for (const folder of ['history', 'recall']) {
      const text = await storedText(data, folder);
      expect(text, folder).to.include('seven at Rosa').and.not.include('Mallory').and.not.include('admin house');
    }
    sockets.last.deliver([editOf(original, ALICE, 'dinner is at eight at Rosa', false)]);
    await settle();
    await app!.bot.histories.flush();
    for (const folder of ['history', 'recall']) expect(await storedText(data, folder), folder).to.include('eight at Rosa').and.not.include('seven');
  });

  it(".mydata delete leaves nothing of the person's words anywhere in data/ (the adapter's sent messages included) and drops their phone ↔ LID pair", async () => {
    await model.close();
    model = await FakeModel.start((request) => `you said: ${String(request.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '')}`);
    await start();
    const data = path.join(dir, 'data');
    await say(waText('my secret word is zanzibarquokka', { from: ALICE_LID, fromAlt: ALICE }));
    await say(waText(`@${BOT_PHONE} the group word is zanzibarquokka`, { chat: GROUP, from: ALICE, mentions: [BOT_JID] }));
    await say(waText(`@${BOT_PHONE} mine is marmosetpancake`, { chat: GROUP, from: MALLORY, mentions: [BOT_JID] }));
    // The bot's answers reach its record of what it sent (the store database) behind the sends, without holding them up.
    await transport.whenSentRecorded();
    const sentFile = storedChatLogText(data, 'whatsapp', 'sent-messages');
    expect(sentFile.split('zanzibarquokka').length - 1, 'both answers to Alice are kept for resends').to.be.at.least(2);
    const links = () => JSON.stringify(storedDocuments(data, 'whatsapp', 'identity-links'));
    expect(links()).to.include('98765432100001').and.include('6281211110000');

    sockets.last.deliver([waText('.mydata delete', { from: ALICE })]);
    await settle();
    sockets.last.deliver([waText('.mydata delete confirm', { from: ALICE })]);
    await settle();
    expect(JSON.stringify(sockets.last.sent.at(-1)?.content)).to.match(/Done: I deleted everything/);
    await app!.bot.histories.flush();
    const after = await textUnder(data);
    expect(after).not.to.include('zanzibarquokka');
    expect(after, "another member's words stay").to.include('marmosetpancake');
    expect(links()).not.to.include('98765432100001').and.not.to.include('6281211110000');
  });
});
