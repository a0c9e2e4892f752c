import { AllProvidersFailedError, definePlugin, TURN_FAILED, type MessageContext } from '../../index.js';

/** Free text to the main model; a failure is told in one short sentence (which key, or try again), never a stack. */
async function answer(ctx: MessageContext): Promise<void> {
  if (!ctx.host.capabilities.has('chat') || !ctx.ai.available()) {
    ctx.state[TURN_FAILED] = true;
    await ctx.reply(new AllProvidersFailedError().message);
    return;
  }
  try {
    const text = await ctx.ai.respond(ctx);
    if (text.trim()) await ctx.reply(text);
  } catch (err) {
    // Told to the user below; the acknowledgement reaction and the status message say it failed too.
    ctx.state[TURN_FAILED] = true;
    if (err instanceof AllProvidersFailedError) {
      ctx.log.warn({ causes: err.causes }, 'every provider failed');
      await ctx.reply(err.message);
    } else {
      ctx.log.error({ err }, 'AI chat failed');
      await ctx.reply('Sorry, I could not answer that just now. Please try again.');
    }
  }
}

/**
 * The `chat` core plugin, the fallback: text no other plugin claimed is answered by the main model (the chat's
 * history and memory, the tools of the enabled plugins). Tried after every other plugin, `.help` included (order
 * 1001). The owner may turn it off (the bot then answers only commands, and says so) or keep it to some senders with
 * `plugins.chat.access`.
 */
export default definePlugin({
  name: 'chat',
  description: 'Answers free text with the AI model (with the chat history, memory and the tools of the enabled plugins)',
  order: 1001,
  answersFreeText: true,
  setup: () => ({
    predicates: [{ when: (ctx) => ctx.text.length > 0, run: answer }],
  }),
});
