import { expect } from 'chai';
import { definePlugin } from 'wa-assistant-bot/plugin';
import { startWhatsAppTestBot, type WhatsAppTestBot } from 'wa-assistant-bot/testing/whatsapp';

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
