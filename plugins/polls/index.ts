import { definePlugin, defineTool, PollRefused, Type } from '../../core/index.js';

/**
 * The model asks the chat a question as a WhatsApp poll. Votes come back into the chat's history as context; on a poll
 * sent to settle a question, a vote is a turn the model answers.
 */
export default definePlugin({
  name: 'polls',
  description: 'The send_poll tool: the model asks the chat a question as a WhatsApp poll, and reads the votes',
  setup: () => ({
    tools: [
      defineTool({
        name: 'send_poll',
        // It posts into the chat.
        effects: { outsideText: false, acts: 'chats' },
        description:
          'Send a poll to this chat: a question with 2 to 12 short options, one choice or several. Use it when the user asks for a poll or vote, or to settle a choice between a few clear options (set answer_on_vote: then the first vote comes back to you as a message to answer). Votes are shown to you later as "<name> voted on the poll …". Returns whether it was sent.',
        parameters: Type.Object({
          question: Type.String({ description: 'the question, one line' }),
          options: Type.Array(Type.String({ description: 'one option, a few words' }), { minItems: 2, maxItems: 12 }),
          multiple: Type.Boolean({ default: false, description: 'true: voters may pick several options' }),
          answer_on_vote: Type.Boolean({ default: false, description: 'true: each vote comes back to you as a message from the voter to answer (for a poll that settles a question you asked)' }),
        }),
        run: async (args, call) => {
          try {
            await call.ctx.sendPoll({ question: args.question, options: args.options, multiple: args.multiple }, { answerOnVote: args.answer_on_vote });
          } catch (err) {
            if (err instanceof PollRefused) return err.message;
            throw err;
          }
          return `The poll is in the chat with ${args.options.length} options. Do not repeat the options in your answer; say in a few words that the poll is up.`;
        },
      }),
    ],
  }),
});
