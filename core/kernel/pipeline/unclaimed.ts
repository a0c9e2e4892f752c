import type { BotConfig } from '../../services/config/schema.js';
import type { Middleware } from './compose.js';
import type { MessageContext } from '../plugin/message-context.js';

/**
 * The end of the pipeline: a message no plugin claimed. A bare sticker gets nothing. A media or a bare mention without a question (no plugin takes
 * those, the `chat` core plugin takes only text) gets a pointer to `.help`; text reaches here only while the owner has
 * the `chat` core plugin (the fallback to the model) turned off, and is told so.
 */
export function unclaimed(config: () => BotConfig, answersFreeText: () => boolean): Middleware<MessageContext> {
  return async (ctx) => {
    const help = `${config().prefix}help`;
    // A sticker on its own is a gesture (WhatsApp gives stickers no caption), not a question: nothing to answer.
    if (ctx.message.media?.kind === 'sticker' && !ctx.text) return;
    if (ctx.message.media && !ctx.text) await ctx.reply(`I don't do anything with a ${ctx.message.media.kind} on its own. Send ${help} to see what I can do with media.`);
    else if (!ctx.text) await ctx.reply(answersFreeText() ? `Yes? Ask me anything, or send ${help} for my commands.` : `Yes? Send ${help} for my commands.`);
    else await ctx.reply(`I only answer commands here: the owner turned off answers by the AI. Send ${help} for what I can do.`);
  };
}
