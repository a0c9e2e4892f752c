import { expect } from 'chai';
import { definePlugin } from 'wa-assistant-bot/plugin';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { GROUP, proto, startFakeSocketBot, startWhatsAppTestBot, waText, type FakeSocketBot, type WhatsAppTestBot } from 'wa-assistant-bot/testing/whatsapp';

/** A plugin as an author would test it over WhatsApp: a command, and the sender it sees. */
const hello = definePlugin({
  name: 'hello',
  description: 'says hello to whoever asks',
  setup: () => ({ commands: [{ command: 'hello', run: (ctx) => ctx.reply(`hello ${ctx.args || 'there'}, from ${ctx.senderId.split('@')[0]}`) }] }),
});

/**
 * The kit's WhatsApp subpath, imported as a plugin author imports it: the bot with the plugin on the real WhatsApp
 * transport and Baileys socket, against a WhatsApp Web server on 127.0.0.1 (WA_WEBSOCKET_URL).
 */
describe('the test kit over WhatsApp (wa-assistant-bot/testing/whatsapp)', function () {
  this.timeout(90_000);
  let bot: WhatsAppTestBot | undefined;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });

  it("runs a plugin's command and the model's answer over the real socket, each sent to the chat that asked", async () => {
    bot = await startWhatsAppTestBot(hello, { model: (r) => `model heard: ${String(r.messages.at(-1)?.content)}` });
    expect(bot.transport.session().status).to.equal('linked');
    expect(bot.logs().some((l) => String(l.msg).includes('WA_WEBSOCKET_URL is set'))).to.equal(true);
    expect(await bot.send({ text: '.hello Ann', from: '15550000002@s.whatsapp.net' })).to.equal('hello Ann, from 15550000002');
    expect(await bot.send('what is the weather?')).to.equal('model heard: what is the weather?');
    expect(bot.model.requests).to.have.length(1);
    const sent = await bot.sends();
    expect(sent.filter((s) => s.text?.startsWith('hello Ann')).map((s) => s.to.split('@')[0])).to.deep.equal(['15550000002']);
  });
});

const ALICE = '6281200000007@s.whatsapp.net';

/** Reacts and answers, and sends a card as a document: what only the proto objects show. */
const greeter = definePlugin({
  name: 'greeter',
  description: 'test: reacts, answers and sends a card',
  setup: (host) => ({
    commands: [
      {
        command: 'hi',
        run: async (ctx) => {
          await ctx.react('👋');
          await ctx.reply(`hi ${ctx.args || 'you'}`);
        },
      },
      {
        command: 'card',
        run: async (ctx) => {
          const folder = host.files.folder('cards');
          await mkdir(folder, { recursive: true });
          const file = path.join(folder, 'card.txt');
          await writeFile(file, 'a card for you\n');
          await ctx.sendMedia({ kind: 'document', path: file, mimetype: 'text/plain', fileName: 'card.txt' });
        },
      },
    ],
  }),
});

/** The same subpath's fake-socket bot, imported as a plugin author imports it: real proto objects in and out. */
describe('the test kit over the fake Baileys socket (wa-assistant-bot/testing/whatsapp: startFakeSocketBot)', function () {
  this.timeout(30_000);
  let bot: FakeSocketBot | undefined;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });

  it("a command's reaction reaches the socket as a reactionMessage keyed to the message, its answer as a text", async () => {
    bot = await startFakeSocketBot(greeter);
    expect(bot.transport.session().status).to.equal('linked');
    const incoming = waText('.hi Ann', { from: ALICE });
    const sent = await bot.deliver(incoming);
    const reaction = sent.find((s) => s.message?.reactionMessage);
    // What WhatsApp carries: encoded and decoded as a real proto Message.
    const wire = proto.Message.decode(proto.Message.encode(reaction!.message!).finish());
    expect(wire.reactionMessage?.text).to.equal('👋');
    expect(wire.reactionMessage?.key?.id).to.equal(incoming.key.id);
    expect(wire.reactionMessage?.key?.remoteJid).to.equal(ALICE);
    expect(sent.filter((s) => s.jid === ALICE).map((s) => s.message?.conversation).filter(Boolean)).to.deep.equal(['hi Ann']);
    expect(await bot.send('.hi', { from: ALICE })).to.deep.equal(['hi you']);
  });

  it('a sent file arrives as a documentMessage with its mimetype, file name and length, built by Baileys', async () => {
    bot = await startFakeSocketBot(greeter);
    const [doc] = await bot.deliver(waText('.card', { from: ALICE }));
    expect(doc!.jid).to.equal(ALICE);
    const m = doc!.message?.documentMessage;
    expect(m?.mimetype).to.equal('text/plain');
    expect(m?.fileName).to.equal('card.txt');
    expect(Number(m?.fileLength)).to.equal('a card for you\n'.length);
    expect(bot.socket.uploads.map((u) => u.mediaType)).to.deep.equal(['document']);
  });

  it('config reaches the bot: in a group the allowlist policy switched off it stays silent, in a private chat it answers', async () => {
    bot = await startFakeSocketBot(greeter, { config: { groups: { policy: 'allowlist' } } });
    expect(await bot.send('.hi', { chat: GROUP, from: ALICE })).to.deep.equal([]);
    expect(await bot.send('.hi', { from: ALICE })).to.deep.equal(['hi you']);
  });
});
