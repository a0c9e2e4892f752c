import { definePlugin } from '../../core/index.js';

/**
 * `.ping`: a liveness check that never touches an upstream, so it answers while every provider is down.
 * The time shown is from the message's timestamp to the moment the reply is made.
 */
export default definePlugin({
  name: 'ping',
  description: 'Checks that the bot is alive',
  setup: () => ({
    commands: [
      {
        command: 'ping',
        help: 'check that I am alive (answers with pong and the round-trip time)',
        run: async (ctx) => {
          const elapsed = Math.max(0, Date.now() - ctx.message.timestamp);
          await ctx.reply(`pong (${elapsed} ms)`);
        },
      },
    ],
  }),
});
