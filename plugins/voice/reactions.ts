import type { Logger } from '../../core/index.js';
import type { AudioProvider } from './audio-provider.js';
import type { ReactionOptions } from './options.js';

export { DEFAULT_REACTIONS, type ReactionOptions } from './options.js';

const PROMPT =
  'You add an emoji reaction to chat messages, like a friend in a WhatsApp group would. ' +
  'Answer with exactly one emoji that fits the message below, or with the word none when no reaction fits. No other text.';

/** The first emoji in a model's answer, or undefined ("none", words, nothing). */
export function firstEmoji(answer: string): string | undefined {
  const match = /\p{Extended_Pictographic}(?:\uFE0F|\u200D\p{Extended_Pictographic}|[\u{1F3FB}-\u{1F3FF}])*/u.exec(answer);
  return match?.[0];
}

/**
 * Picks a fitting emoji for some messages with the audio provider's chat model: a configurable share of messages,
 * at most one reaction per chat per cooldown. Failures stay out of the chat (debug log only).
 *
 * @example
 * const emoji = await reactor.pick(chatId, 'We won the match!', options); // '🎉' or undefined
 */
export class AutoReactor {
  private readonly lastReaction = new Map<string, number>();

  constructor(
    private readonly provider: AudioProvider,
    private readonly log: Logger,
    private readonly timeoutMs: number,
    private readonly now: () => number = Date.now,
    private readonly random: () => number = Math.random,
  ) {}

  /** An emoji for this message, or undefined when it is not picked, cooling down, or the model has none. */
  async pick(chatId: string, text: string, options: ReactionOptions): Promise<string | undefined> {
    if (!options.enabled || text.trim().length < 2) return undefined;
    const last = this.lastReaction.get(chatId);
    if (last !== undefined && this.now() - last < options.cooldownMinutes * 60_000) return undefined;
    if (this.random() >= options.share) return undefined;
    this.lastReaction.set(chatId, this.now());
    try {
      const answer = await this.provider.chat(PROMPT, text.slice(0, 600), this.timeoutMs);
      return firstEmoji(answer);
    } catch (err) {
      this.log.debug({ reason: (err as Error).message }, 'auto reaction skipped');
      return undefined;
    }
  }
}
