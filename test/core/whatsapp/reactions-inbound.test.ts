import { expect } from 'chai';
import { proto } from '@whiskeysockets/baileys';
import { startFakeSocketBot, type FakeSocketBot } from '../../../app/testing/fake-socket-bot.js';
import { waMessage, waText, type SentRecord } from '../../../app/testing/fake-baileys-socket.js';
import errands from '../../../plugins/errands/index.js';
import { FAST_SENDING, UNPACED_SENDS } from '../../helpers/chat.js';

const OWNER = '6281200000001@s.whatsapp.net';
const MUM = '6281200000055@s.whatsapp.net';
const MALLORY = '6281200000066@s.whatsapp.net';

/** A real WhatsApp reaction (`reactionMessage`) by `from` in their private chat with the bot, on the bot's message `id`. */
const reaction = (emoji: string, id: string, from: string) =>
  waMessage(proto.Message.fromObject({ reactionMessage: { key: { remoteJid: from, fromMe: true, id }, text: emoji, senderTimestampMs: Date.now() } }), { from });

const texts = (sent: SentRecord[], jid: string) => sent.filter((s) => s.jid === jid).map((s) => (s.content as { text?: string }).text);

/** Reactions on the real WhatsApp adapter: an owner's 👍 on a held action's message, from the phone (fake socket, real proto). */
describe('WhatsApp: a reaction from the phone answers a held action (fake socket, real proto)', function () {
  this.timeout(30_000);
  let bot: FakeSocketBot | undefined;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });
  // What a reaction does is tested here, not the pace of the errand's notice and send (one a second would wait).
  const start = () => startFakeSocketBot(errands, { config: { owners: ['6281200000001'], access: { mode: 'everyone' }, sending: FAST_SENDING, conversation: { debounceMs: 0 } }, sendPacing: UNPACED_SENDS });

  it("the owner's 👍 on the ⏳ message sends the errand; a stranger's 👍 and a taken-back reaction do nothing", async () => {
    bot = await start();
    await bot.deliver(waText('hello dear', { from: MUM, pushName: 'Mum' }));
    const drafted = await bot.deliver(waText(".send Mum I'll be late", { from: OWNER }));
    const notice = drafted.find((s) => s.jid === OWNER && /^⏳ Waiting for your OK/.test((s.content as { text?: string }).text ?? ''));
    expect(notice, JSON.stringify(drafted.map((s) => s.content))).to.not.equal(undefined);
    // Someone else's 👍 (in their own chat, on the same id) and an emptied reaction send nothing.
    expect(texts(await bot.deliver(reaction('👍', notice!.id, MALLORY)), MUM)).to.deep.equal([]);
    expect(texts(await bot.deliver(reaction('', notice!.id, OWNER)), MUM)).to.deep.equal([]);
    const approved = await bot.deliver(reaction('👍', notice!.id, OWNER));
    expect(texts(approved, MUM)).to.deep.equal(["I'll be late"]);
    expect(texts(approved, OWNER).at(-1)).to.match(/^✅ Sent to Mum/);
  });

  it("the owner's 👎 drops it: nothing is sent", async () => {
    bot = await start();
    await bot.deliver(waText('hi', { from: MUM, pushName: 'Mum' }));
    const drafted = await bot.deliver(waText('.send Mum never mind', { from: OWNER }));
    const notice = drafted.find((s) => s.jid === OWNER && /^⏳/.test((s.content as { text?: string }).text ?? ''))!;
    expect(texts(await bot.deliver(reaction('👎', notice.id, OWNER)), MUM)).to.deep.equal([]);
    expect(texts(await bot.deliver(reaction('👍', notice.id, OWNER)), MUM), 'a dropped action cannot be approved later').to.deep.equal([]);
  });
});
