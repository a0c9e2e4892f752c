import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { waText } from '../../fakes/baileys-socket.js';
import { cleanup, link, setup, type Harness } from './harness.js';

const ALICE = '6281211110000@s.whatsapp.net';
const ALICE_LID = '98765432100001@lid';
const BOB = '6281233330000@s.whatsapp.net';
const BOB_LID = '98765432100002@lid';

describe('WhatsApp addressing: replies go where the chat arrived, bot-started messages to the LID (fake socket)', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await setup();
    await link(h);
  });
  afterEach(cleanup);

  it('a chat that arrived on its LID is answered on the LID: text, media, reaction, edit and typing (the data key stays the phone)', async () => {
    const incoming = waText('hi', { from: ALICE_LID, fromAlt: ALICE });
    h.sockets.last.deliver([incoming]);
    await h.transport.idle();
    expect(h.received[0]).to.include({ chatId: ALICE, senderId: ALICE });

    const reply = await h.transport.sendText(ALICE, 'hello', { quotedId: incoming.key.id! });
    const file = path.join(h.dir, 'note.ogg');
    await writeFile(file, 'OggS');
    await h.transport.sendMedia(ALICE, { kind: 'voice', path: file });
    await h.transport.react(ALICE, incoming.key.id!, '👍');
    expect(await h.transport.editText(ALICE, reply.id, 'hello again')).to.equal(true);
    await h.transport.setTyping(ALICE, true);

    expect(h.sockets.last.sent.map((s) => s.jid)).to.deep.equal([ALICE_LID, ALICE_LID, ALICE_LID, ALICE_LID]);
    expect(h.sockets.last.presences.filter((p) => p.jid)).to.deep.equal([{ type: 'composing', jid: ALICE_LID }]);
    // The quote is the message as it arrived.
    expect(h.sockets.last.sent[0].options?.quoted?.key.remoteJid).to.equal(ALICE_LID);
  });

  it('a chat that arrived on the phone jid is answered there', async () => {
    h.sockets.last.deliver([waText('hi', { from: ALICE, fromAlt: ALICE_LID })]);
    await h.transport.idle();
    await h.transport.sendText(ALICE, 'hello');
    expect(h.sockets.last.sent.map((s) => s.jid)).to.deep.equal([ALICE]);
  });

  it('a message the bot starts itself (owner notice, reminder) goes to the LID when one is known, else to the phone', async () => {
    // A pair learnt from Baileys' lid-mapping event, and one only Baileys' own store of the session knows.
    h.sockets.last.ev.emit('lid-mapping.update', { lid: ALICE_LID, pn: ALICE });
    await h.sockets.last.signalRepository.lidMapping.storeLIDPNMappings([{ lid: BOB_LID, pn: BOB }]);
    await h.transport.sendText(ALICE, 'reminder');
    await h.transport.sendText(BOB, 'notice');
    await h.transport.sendText('6281244440000@s.whatsapp.net', 'unknown person');
    expect(h.sockets.last.sent.map((s) => s.jid)).to.deep.equal([ALICE_LID, BOB_LID, '6281244440000@s.whatsapp.net']);
  });
});
