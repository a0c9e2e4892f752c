/** A slot the caller holds while a job runs; release it in `finally`. */
export interface JobSlot {
  release(): void;
}

/**
 * Counts running jobs per user and overall, so one user cannot occupy the machine and the bot never runs more
 * ffmpeg/yt-dlp processes than it can afford. Work over the limit is refused, not queued: the user is told at once.
 *
 * @example
 * const slot = jobs.take(senderId, { perUser: 1, total: 3 });
 * if (typeof slot === 'string') return ctx.reply(slot);
 * try { ... } finally { slot.release(); }
 */
export class JobLimiter {
  private total = 0;
  private readonly perUser = new Map<string, number>();
  /** `controller`: aborted on plugin stop, running programs are killed. */
  constructor(readonly controller = new AbortController()) {}

  /** Takes a slot, or returns the sentence that explains why not. */
  take(userId: string, limits: { perUser: number; total: number }): JobSlot | string {
    const mine = this.perUser.get(userId) ?? 0;
    if (mine >= limits.perUser) {
      return mine === 1 ? 'You already have a download or conversion running. Wait for it to finish, then try again.' : `You already have ${mine} downloads or conversions running. Wait for one to finish, then try again.`;
    }
    if (this.total >= limits.total) return `I'm busy with ${this.total} downloads or conversions right now. Try again in a minute.`;
    this.total++;
    this.perUser.set(userId, mine + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.total--;
        const left = (this.perUser.get(userId) ?? 1) - 1;
        if (left > 0) this.perUser.set(userId, left);
        else this.perUser.delete(userId);
      },
    };
  }

  running(): number {
    return this.total;
  }
}
