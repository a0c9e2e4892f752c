import { expect } from 'chai';
import { proto, type WAMessage } from '@whiskeysockets/baileys';
import { mentionsBot } from '../../../core/kernel/mentions/mentions-bot.js';
import type { IncomingMessage } from '../../../core/kernel/port/message.js';
import { mapIncoming, type MapContext } from '../../../core/adapters/whatsapp/message-mapper.js';
import { BOT_LID, BOT_PHONE, GROUP, waMessage, waText } from '../../fakes/baileys-socket.js';

const OWN = [`${BOT_PHONE}@s.whatsapp.net`, `${BOT_LID}@lid`];
const ALICE = '6281211110000@s.whatsapp.net';
const ALICE_LID = '98765432100001@lid';

function context(downloads: WAMessage[] = []): MapContext {
  return {
    ownIds: OWN,
    download: async (m) => {
      downloads.push(m);
      return Buffer.from('media bytes');
    },
  };
}

function mapped(raw: WAMessage, ctx = context()): IncomingMessage {
  const result = mapIncoming(raw, ctx);
  if (!('message' in result)) throw new Error(`expected a message, got ignored: ${result.ignored}`);
  return result.message;
}

function ignored(raw: WAMessage): string {
  const result = mapIncoming(raw, context());
  if (!('ignored' in result)) throw new Error('expected the message to be ignored');
  return result.ignored;
}

describe('WhatsApp message mapping (real Baileys proto messages)', () => {
  it('maps a private text with sender, chat, name, time and the LID as the alternative id', () => {
    const m = mapped(waText('hello there', { from: ALICE, fromAlt: ALICE_LID, pushName: 'Alice', timestamp: 1_700_000_000 }));
    expect(m).to.include({ chatId: ALICE, senderId: ALICE, senderAltId: ALICE_LID, senderName: 'Alice', isGroup: false, text: 'hello there', timestamp: 1_700_000_000_000 });
    expect(m.mentions).to.deep.equal([]);
    expect(mentionsBot(m, OWN)).to.equal(true);
  });

  it('a group text mentioning the bot by its phone id addresses the bot', () => {
    const m = mapped(waText(`@${BOT_PHONE} what time is it`, { chat: GROUP, from: ALICE_LID, fromAlt: ALICE, mentions: [`${BOT_PHONE}@s.whatsapp.net`] }));
    expect(m).to.include({ chatId: GROUP, isGroup: true, senderId: ALICE_LID, senderAltId: ALICE });
    expect(m.mentions).to.deep.equal([`${BOT_PHONE}@s.whatsapp.net`]);
    expect(mentionsBot(m, OWN)).to.equal(true);
  });

  it('a group text mentioning the bot by its LID addresses the bot (device suffix stripped)', () => {
    const m = mapped(waText(`@${BOT_LID} hi`, { chat: GROUP, from: ALICE_LID, mentions: [`${BOT_LID}:3@lid`] }));
    expect(m.mentions).to.deep.equal([`${BOT_LID}@lid`]);
    expect(mentionsBot(m, OWN)).to.equal(true);
    // Without the LID among the bot's ids the same message would be missed: the reason the LID is learnt at login.
    expect(mentionsBot(m, [`${BOT_PHONE}@s.whatsapp.net`])).to.equal(false);
  });

  it('a group text mentioning someone else does not address the bot', () => {
    const m = mapped(waText('@777 look at this', { chat: GROUP, from: ALICE_LID, mentions: ['777000111@lid'] }));
    expect(m.mentions).to.deep.equal(['777000111@lid']);
    expect(mentionsBot(m, OWN)).to.equal(false);
  });

  it('a reply to the bot in a group carries the quoted message with fromBot', () => {
    const m = mapped(waText('and tomorrow?', { chat: GROUP, from: ALICE_LID, quote: { id: 'BOTMSG1', participant: `${BOT_LID}@lid`, text: 'sunny today' } }));
    expect(m.quoted).to.deep.include({ id: 'BOTMSG1', senderId: `${BOT_LID}@lid`, text: 'sunny today', fromBot: true });
    expect(mentionsBot(m, OWN)).to.equal(true);
    const other = mapped(waText('yes', { chat: GROUP, from: ALICE_LID, quote: { id: 'X1', participant: ALICE, text: 'lunch?' } }));
    expect(other.quoted?.fromBot).to.equal(false);
    expect(mentionsBot(other, OWN)).to.equal(false);
  });

  it('a voice note (ptt) becomes voice media with size, duration and a lazy download', async () => {
    const downloads: WAMessage[] = [];
    const raw = waMessage({ audioMessage: { ptt: true, seconds: 7, fileLength: 4096, mimetype: 'audio/ogg; codecs=opus', mediaKey: Buffer.from('k'), directPath: '/v/t62' } }, { from: ALICE });
    const m = mapped(raw, context(downloads));
    expect(m.text).to.equal('');
    expect(m.media).to.include({ kind: 'voice', mimetype: 'audio/ogg; codecs=opus', size: 4096, seconds: 7 });
    expect(downloads).to.have.length(0);
    expect((await m.media!.download()).toString()).to.equal('media bytes');
    expect(downloads[0].message?.audioMessage?.ptt).to.equal(true);
  });

  it('an audio file (not ptt), a video, a document and a sticker map to their kinds', () => {
    expect(mapped(waMessage({ audioMessage: { ptt: false, mimetype: 'audio/mpeg', seconds: 200 } })).media).to.include({ kind: 'audio', seconds: 200 });
    expect(mapped(waMessage({ videoMessage: { caption: '.mp3', mimetype: 'video/mp4', seconds: 12 } })).media).to.include({ kind: 'video', seconds: 12 });
    const doc = mapped(waMessage({ documentWithCaptionMessage: { message: { documentMessage: { fileName: 'report.pdf', mimetype: 'application/pdf', caption: 'summarise', fileLength: 999 } } } }));
    expect(doc.text).to.equal('summarise');
    expect(doc.media).to.include({ kind: 'document', fileName: 'report.pdf', size: 999 });
    expect(mapped(waMessage({ stickerMessage: { mimetype: 'image/webp' } })).media).to.include({ kind: 'sticker' });
  });

  it('an image with a caption gives the caption as text and image media', () => {
    const m = mapped(waMessage({ imageMessage: { caption: 'what is this?', mimetype: 'image/jpeg', fileLength: 12345 } }, { from: ALICE }));
    expect(m.text).to.equal('what is this?');
    expect(m.media).to.include({ kind: 'image', mimetype: 'image/jpeg', size: 12345 });
  });

  it('unwraps ephemeral and view-once wrappers before reading the message', () => {
    const eph = mapped(waMessage({ ephemeralMessage: { message: { extendedTextMessage: { text: 'disappearing', contextInfo: { mentionedJid: [`${BOT_LID}@lid`] } } } } }, { chat: GROUP, from: ALICE_LID }));
    expect(eph.text).to.equal('disappearing');
    expect(eph.mentions).to.deep.equal([`${BOT_LID}@lid`]);
    const once = mapped(waMessage({ viewOnceMessageV2: { message: { imageMessage: { caption: 'once', mimetype: 'image/jpeg' } } } }));
    expect(once.media?.kind).to.equal('image');
    expect(once.text).to.equal('once');
  });

  it('ignores status broadcasts, protocol messages, reactions and stubs with a reason', () => {
    expect(ignored(waText('my status', { chat: 'status@broadcast', from: ALICE }))).to.match(/status broadcast/);
    expect(ignored(waMessage({ protocolMessage: { type: proto.Message.ProtocolMessage.Type.REVOKE } }))).to.match(/protocolMessage/);
    expect(ignored(waMessage({ reactionMessage: { text: '👍', key: { id: 'x' } } }))).to.match(/reactionMessage/);
    const stub = proto.WebMessageInfo.fromObject({ key: { remoteJid: GROUP, id: 'STUB1', participant: ALICE }, messageStubType: proto.WebMessageInfo.StubType.GROUP_PARTICIPANT_ADD }) as WAMessage;
    expect(ignored(stub)).to.match(/stub/);
  });

  it('marks the bot’s own messages as fromMe', () => {
    const m = mapped(waText('sent from the phone', { from: ALICE, fromMe: true }));
    expect(m.fromMe).to.equal(true);
  });
});
