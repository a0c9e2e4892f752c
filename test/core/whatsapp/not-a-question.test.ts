import { expect } from 'chai';
import visionPlugin from '../../../plugins/vision/index.js';
import pingPlugin from '../../../plugins/ping/index.js';
import { startFakeSocketBot, type FakeSocketBot } from '../../../app/testing/fake-socket-bot.js';
import { isSentText, mediaServedById, sentText, waMessage, waText } from '../../fakes/baileys-socket.js';

const ALICE = '6281200000007@s.whatsapp.net';
const GREETING = 'Thanks for contacting Toko Maju! We reply within the hour.';
/** Each message its own turn at once: no 1.5 s burst window waited out per message (bursts are not what is tested). */
const NO_BURSTS = { conversation: { debounceMs: 0 } };

/** What is not a question gets no answer, and what WhatsApp Business says by itself is no owner taking over. */
describe('WhatsApp: what is not a question is not answered (fake socket)', function () {
  this.timeout(30_000);
  let bot: FakeSocketBot | undefined;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });

  it('a bare sticker in a private chat gets no model call and no text, while a text after it is answered', async () => {
    const media = mediaServedById();
    bot = await startFakeSocketBot([visionPlugin, pingPlugin], { config: NO_BURSTS, transport: { download: media.download } });
    media.served.set('3EB0STICKER00001', Buffer.from('RIFF\u0000\u0000\u0000\u0000WEBPVP8 '));
    const sent = await bot.deliver(waMessage({ stickerMessage: { mimetype: 'image/webp', fileLength: 20 } }, { from: ALICE, id: '3EB0STICKER00001' }));
    expect(sent.filter(isSentText)).to.deep.equal([]);
    expect(bot.model.requests).to.have.length(0);
    const answer = await bot.deliver(waText('and how are you?', { from: ALICE }));
    expect(answer.filter(isSentText).map(sentText)).to.deep.equal(['model: and how are you?']);
  });

  it("the WhatsApp Business app's greeting (listed in takeover.autoReplies) does not pause the chat; the owner's own words do", async () => {
    bot = await startFakeSocketBot(pingPlugin, { config: { ...NO_BURSTS, takeover: { minutes: 30, autoReplies: [GREETING] } } });
    // Sent by WhatsApp Business as the account, arriving like the owner's typing (fromMe, not sent by the bot).
    await bot.deliver(waText(`  ${GREETING.toLowerCase()} `, { from: ALICE, fromMe: true }));
    expect(bot.app.bot.access.paused()).to.deep.equal([]);
    const answer = await bot.deliver(waText('do you have rice?', { from: ALICE }));
    expect(answer.filter(isSentText).map(sentText)).to.deep.equal(['model: do you have rice?']);
    // The greeting is context the model sees, as the account's words.
    expect(JSON.stringify(bot.model.requests.at(-1)?.messages)).to.include(GREETING.toLowerCase());

    await bot.deliver(waText('I will answer this one myself', { from: ALICE, fromMe: true }));
    expect(bot.app.bot.access.paused().map((p) => p.chatId)).to.deep.equal([ALICE]);
    expect((await bot.deliver(waText('hello?', { from: ALICE }))).filter(isSentText)).to.deep.equal([]);
  });
});
