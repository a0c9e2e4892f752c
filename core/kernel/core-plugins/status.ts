import { definePlugin, type CommandContext } from '../../index.js';
import { statusText } from '../../builtin.js';

/** `.status`: owners only; in a group the report goes to the owner's private chat (it names providers and models). */
async function status(ctx: CommandContext): Promise<void> {
  if (!ctx.isOwner) {
    await ctx.reply(`Sorry, ${ctx.host.config().prefix}status is only for the owners of this bot.`);
    return;
  }
  const text = statusText(await ctx.host.status(), ctx.host.config().botName);
  if (!ctx.message.isGroup) {
    await ctx.reply(text);
    return;
  }
  const privateChat = ctx.message.senderAltId?.endsWith('@s.whatsapp.net') ? ctx.message.senderAltId : ctx.senderId;
  await ctx.host.send(privateChat, text);
  await ctx.reply('I sent you the status in our private chat.');
}

/**
 * The `status` core plugin: `.status` tells the owners how the bot is doing (WhatsApp link, provider legs,
 * capabilities, usage today, uptime, version; never a key). The owner may turn it off like any plugin.
 */
export default definePlugin({
  name: 'status',
  description: 'Owners: how I am doing (WhatsApp link, AI providers, capabilities, usage today)',
  order: 20,
  setup: () => ({
    commands: [{ command: 'status', help: 'owners: how I am doing (WhatsApp link, AI providers, usage today)', run: status }],
  }),
});
