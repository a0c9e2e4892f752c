import { expect } from 'chai';
import { definePlugin } from '../../../core/kernel/plugin/contract.js';
import { startFakeSocketBot, type FakeSocketBot } from '../../../app/testing/fake-socket-bot.js';
import { BOT_LID, BOT_PHONE, GROUP, waText } from '../../fakes/baileys-socket.js';
import catchup from '../../../plugins/catchup/index.js';

const SELF = `${BOT_PHONE}@s.whatsapp.net`;
const SELF_LID = `${BOT_LID}@lid`;
const FRIEND = '6281200000007@s.whatsapp.net';
const ALLOWED = '6281200000008@s.whatsapp.net';
const hello = definePlugin({ name: 'hello', description: 'test: answers .hi', setup: () => ({ commands: [{ command: 'hi', run: (ctx) => ctx.reply(`hi ${ctx.isOwner ? 'owner' : 'guest'}`) }] }) });

/** Self-chat mode on the WhatsApp adapter, with real proto messages on the fake socket. */
describe('WhatsApp self-chat mode: on the owner\'s own number the bot answers in "Message yourself" only (fake socket)', function () {
  this.timeout(30_000);
  let bot: FakeSocketBot | undefined;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });
  const start = (config: Record<string, unknown> = {}) =>
    startFakeSocketBot(hello, { config: { account: { mode: 'self-chat' }, access: { mode: 'everyone', allow: ['6281200000008'] }, groups: { policy: 'open' }, conversation: { debounceMs: 0 }, targetUserIds: [], ...config } });

  it('the owner writing in "Message yourself" (by phone jid, and by own LID) is answered there, as an owner, and free text reaches the model', async () => {
    bot = await start();
    // The answer goes to the account's own chat (WhatsApp addresses it by the own LID or phone jid: one chat).
    const own = (jid: string) => jid === SELF || jid === SELF_LID;
    const byPhone = await bot.deliver(waText('.hi', { chat: SELF, fromMe: true }));
    expect(byPhone.map((s) => (s.content as { text?: string }).text)).to.deep.equal(['hi owner']);
    expect(own(byPhone[0].jid), byPhone[0].jid).to.equal(true);
    const byLid = await bot.deliver(waText('.hi', { chat: SELF_LID, fromMe: true }));
    expect(byLid.map((s) => (s.content as { text?: string }).text)).to.deep.equal(['hi owner']);
    expect(own(byLid[0].jid), byLid[0].jid).to.equal(true);
    const asked = await bot.deliver(waText('what is on today?', { chat: SELF, fromMe: true }));
    expect(asked.filter((s) => own(s.jid))).to.have.length(1);
    expect(bot.model.requests.length).to.equal(1);
  });

  it("a contact's message is not answered (access.mode everyone is no explicit opening), nor the owner's own typing in that chat; nothing reaches the model", async () => {
    bot = await start();
    expect(await bot.deliver(waText('.hi', { from: FRIEND }), waText('are you there?', { from: FRIEND }))).to.deep.equal([]);
    expect(await bot.deliver(waText('.hi', { chat: FRIEND, fromMe: true }), waText('tell me a joke', { chat: FRIEND, fromMe: true }))).to.deep.equal([]);
    expect(bot.model.requests).to.have.length(0);
  });

  it('a sender on access.allow is answered in their chat (the access rules open it explicitly)', async () => {
    bot = await start();
    const sent = await bot.deliver(waText('.hi', { from: ALLOWED }));
    expect(sent.map((s) => [s.jid, (s.content as { text?: string }).text])).to.deep.equal([[ALLOWED, 'hi guest']]);
  });

  it('a group is not answered under groups.policy "open" (only an owner\'s .activation opens one), even when it mentions the account', async () => {
    bot = await start();
    expect(await bot.deliver(waText(`@${BOT_PHONE} .hi`, { chat: GROUP, from: FRIEND, mentions: [SELF] }))).to.deep.equal([]);
    expect(bot.model.requests).to.have.length(0);
  });

  it('without self-chat mode the same contact is answered (the gate is the mode\'s)', async () => {
    bot = await start({ account: { mode: 'bot' } });
    expect(await bot.send('.hi', { from: FRIEND })).to.deep.equal(['hi guest']);
  });

  it('.watch <group name> in "Message yourself" finds the group in WhatsApp\'s list of the account\'s groups and keeps its messages, answering none', async () => {
    bot = await startFakeSocketBot([hello, catchup], { config: { account: { mode: 'self-chat' }, groups: { policy: 'open' }, conversation: { debounceMs: 0 }, targetUserIds: [], plugins: { catchup: { enabled: true } } } });
    const OTHER = '120363000000000099@g.us';
    bot.socket.groupAnswers.set(GROUP, { subject: 'Family' });
    bot.socket.groupAnswers.set(OTHER, { subject: 'Family planning' });
    const said = (sent: Array<{ content: unknown }>) => sent.map((s) => (s.content as { text?: string }).text).join('\n');
    expect(said(await bot.deliver(waText('.watch family', { chat: SELF, fromMe: true })))).to.match(/Watching Family from now on/);
    expect(bot.socket.groupListFetches).to.equal(1);
    expect(said(await bot.deliver(waText('.watch Nobody', { chat: SELF, fromMe: true })))).to.match(/I know no chat named "Nobody"/);
    // The watched group's messages are kept, never answered; the other group with a longer name is not watched.
    expect(await bot.deliver(waText('.hi', { chat: GROUP, from: FRIEND }), waText('dinner at 7?', { chat: GROUP, from: FRIEND }))).to.deep.equal([]);
    expect(said(await bot.deliver(waText('.watch', { chat: SELF, fromMe: true })))).to.match(/• Family$/m).and.not.match(/Family planning/);
    expect(bot.model.requests).to.have.length(0);
  });

  it('owner notices go to "Message yourself" in self-chat mode (the operator chat is the account\'s own)', async () => {
    bot = await start();
    expect(bot.transport.operatorChatId()).to.equal(SELF);
  });
});
