import type { Capabilities } from '../capabilities/capabilities.js';
import type { BotConfig } from '../../services/config/schema.js';
import type { Middleware } from '../pipeline/compose.js';
import type { AiService, BotContext } from '../plugin/types.js';
import { AllProvidersFailedError } from '../../services/providers/types.js';

/** The last stage: free text nobody claimed goes to the main model; failures are told in one short sentence. */
export function chatFallback(ai: AiService, capabilities: Capabilities, config: () => BotConfig): Middleware<BotContext> {
  return async (ctx) => {
    if (!ctx.text) {
      const help = `${config().prefix}help`;
      if (ctx.message.media) await ctx.reply(`I don't do anything with a ${ctx.message.media.kind} on its own. Send ${help} to see what I can do with media.`);
      else await ctx.reply(`Yes? Ask me anything, or send ${help} for my commands.`);
      return;
    }
    if (!capabilities.has('chat') || !ai.available()) {
      await ctx.reply(new AllProvidersFailedError().message);
      return;
    }
    try {
      const answer = await ai.respond(ctx);
      if (answer.trim()) await ctx.reply(answer);
    } catch (err) {
      if (err instanceof AllProvidersFailedError) {
        ctx.log.warn({ causes: err.causes }, 'every provider failed');
        await ctx.reply(err.message);
      } else {
        ctx.log.error({ err }, 'AI chat failed');
        await ctx.reply('Sorry, I could not answer that just now. Please try again.');
      }
    }
  };
}
