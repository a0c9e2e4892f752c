/** How the bot's answers (what it says in a turn) are spaced: per chat and over all chats, with a little jitter. */
export interface AnswerPacing {
  /** Between two messages of a private chat (the first of a turn goes at once). */
  privateGapMs: number;
  /** Between two messages of a group: a busy group's stream is spread, its first message included. */
  groupGapMs: number;
  /** Between two messages over all chats (bot-initiated ones included). */
  overallGapMs: number;
  /** Each paced message waits a further random 0…jitterMs ms. */
  jitterMs: number;
}

export const DEFAULT_ANSWER_PACING: AnswerPacing = { privateGapMs: 1000, groupGapMs: 4000, overallGapMs: 250, jitterMs: 400 };

/** Chats remembered at most; those whose spacing has passed are forgotten first. */
const MAX_CHATS = 2000;

/**
 * When the next message of each chat, and of all chats together, may go: each message reserves its moment (the
 * later of now, its chat's next free moment and the overall one) and pushes both on by their gaps. Pure arithmetic on
 * the times given, so a fake clock drives it.
 *
 * @example
 * const spacing = new AnswerSpacing();
 * spacing.reserve('g@g.us', 4000, 250, Date.now()) // 0: at once
 * spacing.reserve('g@g.us', 4000, 250, Date.now()) // 4000: the next one waits its turn
 */
export class AnswerSpacing {
  private readonly chats = new Map<string, number>();
  private overall = 0;

  /** Reserves the chat's next moment and returns how long to wait for it; `immediate` goes now and only pushes the others on. */
  reserve(chatId: string, chatGapMs: number, overallGapMs: number, now: number, immediate = false): number {
    const chatNext = this.chats.get(chatId) ?? 0;
    const at = immediate ? now : Math.max(now, chatNext, this.overall);
    this.chats.delete(chatId);
    this.chats.set(chatId, Math.max(chatNext, at + chatGapMs));
    this.overall = Math.max(this.overall, at + overallGapMs);
    if (this.chats.size > MAX_CHATS) {
      for (const [chat, next] of this.chats) if (next <= now || this.chats.size > MAX_CHATS) this.chats.delete(chat);
    }
    return at - now;
  }
}
