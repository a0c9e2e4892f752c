import { definePlugin, defineTool, Type } from '../../core/index.js';

/** One emoji: a single grapheme that is pictographic (a flag, a skin tone or a ZWJ family counts as one). */
export function isOneEmoji(text: string): boolean {
  const graphemes = [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text)];
  return graphemes.length === 1 && /\p{Extended_Pictographic}|\p{Regional_Indicator}/u.test(text) && text.length <= 32;
}

/**
 * The model reacts with an emoji to the message it is answering (WhatsApp shows it on that message). A turn with no
 * such message — a scheduled task running at its time — is refused in words the model reads.
 */
export default definePlugin({
  name: 'react',
  description: 'The react tool: the model puts an emoji reaction on the message it is answering',
  setup: () => ({
    tools: [
      defineTool({
        name: 'react',
        // It posts into the chat (a reaction others see).
        effects: { outsideText: false, acts: 'chats' },
        description:
          'React with one emoji to the message you are answering (WhatsApp shows it on that message). Use it when a reaction says enough (a thumbs-up to thanks, a heart) or together with your answer when it fits. Only the message being answered can get a reaction. Returns whether it was placed.',
        parameters: Type.Object({
          emoji: Type.String({ description: 'one emoji, e.g. 👍' }),
        }),
        run: async ({ emoji }, call) => {
          const text = emoji.trim();
          if (!isOneEmoji(text)) return `No reaction was placed: "${emoji.slice(0, 40)}" is not one emoji.`;
          if (call.ctx.message.scheduled) return 'No reaction was placed: this turn is a scheduled task, so there is no message of the user to react to. Answer in words instead.';
          await call.ctx.react(text);
          return `Reacted with ${text} to the message you are answering. Do not mention the reaction in your answer; stay silent if it says enough.`;
        },
      }),
    ],
  }),
});
