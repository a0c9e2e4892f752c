import { definePlugin } from '../../core/plugin/define-plugin.js';
import type { BotContext } from '../../core/plugin/types.js';
import { AllProvidersFailedError } from '../../core/providers/types.js';
import { DEFAULT_PREMIUM_PHRASES, premiumRequest } from '../../core/chat/premium-request.js';

function phrases(ctx: BotContext): string[] {
  const configured = ctx.options.phrases;
  return Array.isArray(configured) && configured.length ? configured.map(String) : DEFAULT_PREMIUM_PHRASES;
}

/**
 * The premium model, for one message only, when the user explicitly asks for it ("use the premium model: …",
 * "pakai model premium …"). Images are left to the vision plugin, which applies the same rule.
 */
export default definePlugin({
  name: 'premium',
  description: 'Answers one message with the premium model when you explicitly ask for it',
  order: 60,
  needs: ['premium'],
  missing: 'No premium model is configured, so I cannot use it. Ask again without it and the normal model will answer.',
  optionsSchema: {
    type: 'object',
    properties: { phrases: { type: 'array', items: { type: 'string', minLength: 3 } } },
    additionalProperties: false,
  },
  triggers: [
    {
      when: (ctx) => !ctx.message.media && premiumRequest(ctx.text, phrases(ctx)).premium,
      usage: '"use the premium model: <question>"',
      help: 'answer this one message with the premium model',
    },
  ],
  async handle(ctx) {
    const rest = premiumRequest(ctx.text, phrases(ctx)).text;
    if (!rest) {
      await ctx.reply('Sure: ask your question together with that phrase, for example "use the premium model: explain quantum tunnelling".');
      return;
    }
    try {
      await ctx.reply(await ctx.ai.respond(ctx, { text: rest, premium: true }));
    } catch (err) {
      if (!(err instanceof AllProvidersFailedError)) throw err;
      ctx.log.warn({ causes: err.causes }, 'premium model unreachable');
      await ctx.reply('The premium model is not reachable right now. Please try again later, or ask without it.');
    }
  },
});
