import { expect } from 'chai';
import { ACCOUNT_RESTRICTED_TEXT, proto, type WAMessage } from '@whiskeysockets/baileys';
import { cleanup, link, setup, type Harness } from './harness.js';

const ALICE = '6281211110000@s.whatsapp.net';
const ERROR = proto.WebMessageInfo.Status.ERROR;

/**
 * What Baileys' event buffer hands on when a send's ERROR ack arrives while the buffer is on (it is while any incoming
 * stanza is handled): the update is merged into the buffered upsert of the bot's own message ("absorbed prior message
 * update in message upsert") and no `messages.update` comes for it. Seen on the wire suite's shared link.
 */
function ownUpsertWithError(id: string, code: string, text?: string): WAMessage {
  return { key: { remoteJid: ALICE, id, fromMe: true }, message: { conversation: 'hello' }, status: ERROR, messageStubParameters: text ? [code, text] : [code], messageTimestamp: Math.floor(Date.now() / 1000) } as WAMessage;
}

describe('WhatsApp transport: a send failure Baileys folded into the message\'s own upsert (fake socket)', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await setup();
    await link(h);
  });
  afterEach(cleanup);

  it('a 463 that arrives only inside the upsert of the bot\'s own message is still a failure for that contact: logged, counted, told', async () => {
    const sent = await h.transport.sendText(ALICE, 'hello');
    h.sockets.last.ev.emit('messages.upsert', { messages: [ownUpsertWithError(sent.id, '463', ACCOUNT_RESTRICTED_TEXT)], type: 'append' });
    await h.until(() => h.messages().some((m) => m.startsWith('WhatsApp did not deliver a sent message')));
    expect(h.logs().find((l) => String(l.msg).startsWith('WhatsApp did not deliver a sent message'))).to.include({ id: sent.id, code: '463', chat: ALICE });
    expect(h.transport.sendFailures()).to.deep.equal({ '463': 1 });
    expect(h.notices.filter((n) => n.key === `whatsapp-undelivered:${ALICE}`)).to.have.length(1);
    expect(h.transport.isRestricted()).to.equal(false);
  });

  it('the same failure as an update and again in the upsert is counted and told once; a message typed on the phone is no failure of the bot', async () => {
    const sent = await h.transport.sendText(ALICE, 'hello');
    h.sockets.last.sendFailed(ALICE, sent.id, '463');
    h.sockets.last.ev.emit('messages.upsert', { messages: [ownUpsertWithError(sent.id, '463')], type: 'append' });
    // The owner's own message from the phone (an id the bot never gave) with an error status is not the bot's send.
    h.sockets.last.ev.emit('messages.upsert', { messages: [ownUpsertWithError('3A0123456789ABCDEF', '479')], type: 'append' });
    // Baileys' listeners run as it emits: nothing more is to come.
    expect(h.transport.sendFailures()).to.deep.equal({ '463': 1 });
    expect(h.notices.filter((n) => n.key === `whatsapp-undelivered:${ALICE}`)).to.have.length(1);
  });
});
