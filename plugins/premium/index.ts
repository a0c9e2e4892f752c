import { AllProvidersFailedError, DEFAULT_PREMIUM_PHRASES, definePlugin, premiumRequest, Type } from '../../core/index.js';

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
  options: Type.Object(
    { phrases: Type.Array(Type.String({ minLength: 3 }), { title: 'Premium phrases', default: DEFAULT_PREMIUM_PHRASES, description: 'phrases that ask for the premium model' }) },
    { additionalProperties: false },
  ),
  setup: (host) => {
    // An empty list in config.json means "the built-in phrases", as before options had defaults.
    const phrases = () => (host.options().phrases.length ? host.options().phrases : DEFAULT_PREMIUM_PHRASES);
    return {
      predicates: [
        {
          when: (ctx) => !ctx.message.media && premiumRequest(ctx.text, phrases()).premium,
          usage: '"use the premium model: <question>"',
          help: 'answer this one message with the premium model',
          run: async (ctx) => {
            const rest = premiumRequest(ctx.text, phrases()).text;
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
        },
      ],
    };
  },
});
