import { REAL_PACING_CLOCK, type PacingClock } from '../../core/services/sending/outbox.js';

/**
 * The outbox's pacing clock for a test over the real transport (`createApp({ answerClock })`): the real clock until
 * the test holds it. Held, its time stands still and an answer waiting for its gap waits until the test moves the
 * clock past it, so which answer waits and which goes at once is seen without racing the real clock (a loaded
 * machine that takes longer than a group's 4 s gap to answer a private chat). Released, it runs on from where it was.
 */
export class HoldablePacingClock implements PacingClock {
  /** Added to the real clock: time moved on while held stays moved on (no gap reserved meanwhile ends early). */
  private offset = 0;
  private heldAt: number | undefined;
  private waits: Array<{ due: number; wake: () => void }> = [];
  private watchers: Array<() => void> = [];

  now(): number {
    return this.heldAt ?? Date.now() + this.offset;
  }

  sleep(ms: number): Promise<void> {
    if (this.heldAt === undefined) return REAL_PACING_CLOCK.sleep(ms);
    return new Promise((wake) => {
      this.waits.push({ due: this.heldAt! + ms, wake });
      for (const watch of this.watchers) watch();
    });
  }

  /** Stops the time, `aheadMs` past now: past the small gaps already running (the overall 250 ms). */
  hold(aheadMs = 1000): void {
    this.heldAt = this.now() + aheadMs;
  }

  /** How many answers wait on the held clock. */
  waiting(): number {
    return this.waits.length;
  }

  /** Resolves once `count` answers wait on the held clock (an answer that went without waiting never comes). */
  whenWaiting(count: number): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (this.waits.length < count) return;
        this.watchers = this.watchers.filter((w) => w !== check);
        resolve();
      };
      this.watchers.push(check);
      check();
    });
  }

  /** Moves the held time on by `ms`, ending the waits it passes. */
  advance(ms: number): void {
    if (this.heldAt === undefined) throw new Error('advance() moves a held clock: hold() it first');
    const now = (this.heldAt += ms);
    const due = this.waits.filter((w) => w.due <= now);
    this.waits = this.waits.filter((w) => w.due > now);
    for (const w of due) w.wake();
  }

  /** The real clock again, running on from the held time; what still waits goes now. */
  release(): void {
    if (this.heldAt === undefined) return;
    this.offset = this.heldAt - Date.now();
    this.heldAt = undefined;
    const left = this.waits;
    this.waits = [];
    for (const w of left) w.wake();
  }
}
