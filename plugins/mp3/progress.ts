import type { MessageContext, SentMessage } from '../../core/index.js';

/** What a status message needs of a handler's context. */
type StatusContext = Pick<MessageContext<unknown>, 'reply' | 'edit' | 'log'>;

/** How a status message paces its progress edits. */
export interface ProgressPacing {
  /** The first gap between two progress edits, ms (0: every change is shown, no pacing — for tests). */
  intervalMs: number;
  /** The job's time limit, ms: the edit budget is spread over it. */
  spanMs: number;
  /** The clock (tests drive it). */
  now?: () => number;
}

/** Progress edits are not spread further than this: WhatsApp accepts edits of a message for 15 minutes only. */
export const PROGRESS_SPAN_CAP_MS = 14 * 60_000;

/**
 * The pacing of one job's status message: the first gap from the options, the edits spread over the job's time
 * limit, so a long job keeps showing movement to its end (capped at the edit window: later edits are refused anyway).
 */
export function jobPacing(opts: { progressIntervalMs: number; timeoutSeconds: number }): ProgressPacing {
  return { intervalMs: opts.progressIntervalMs, spanMs: Math.min(opts.timeoutSeconds * 1000, PROGRESS_SPAN_CAP_MS) };
}

/**
 * The gaps between progress edits, as a list of `count` gaps that start at `first` and each grow by the same factor,
 * so that together they cover `span`. Early edits come fast (the user sees the job started), later ones slower, and
 * the budget is not spent before the job's time limit (a fixed gap spent 20 edits in 30 s and then froze).
 */
export function progressGaps(first: number, span: number, count: number): number[] {
  if (first <= 0 || count <= 0) return new Array<number>(Math.max(0, count)).fill(0);
  const total = (ratio: number) => (ratio === 1 ? first * count : (first * (ratio ** count - 1)) / (ratio - 1));
  let low = 1;
  let high = 2;
  // total() grows with the ratio: find the ratio whose gaps add up to the span (a fixed gap when it already does).
  while (total(high) < span) high *= 2;
  for (let i = 0; i < 60 && total(low) < span; i++) {
    const mid = (low + high) / 2;
    if (total(mid) < span) low = mid;
    else high = mid;
  }
  return Array.from({ length: count }, (_, k) => first * low ** k);
}

/**
 * One status message per job: sent once, then edited as the work advances. Where the transport cannot edit (the
 * console, some networks) it stops trying after the first refusal and only the final result or error is sent, so a
 * chat never gets a flood of progress lines. Progress edits are paced by elapsed time with a growing gap (see
 * `progressGaps`), so the budget of `MAX_PROGRESS_EDITS` lasts the job's whole time limit; stage changes and the end
 * always go out at once.
 *
 * @example
 * const status = await StatusMessage.open(ctx, 'Downloading…', { intervalMs: 1500, spanMs: 600_000 });
 * status.progress('Downloading…', 40);
 * await status.finish('Done.'); // or status.fail('The download failed: …')
 */
export class StatusMessage {
  private editable = true;
  private lastEditAt: number;
  private readonly openedAt: number;
  private progressEdits = 0;
  /** Progress edits per job at most: a long job must not send hundreds of edits (stages and the end always go). */
  static readonly MAX_PROGRESS_EDITS = 20;
  private lastText: string;
  private pending: Promise<void> = Promise.resolve();
  /** When each progress edit may go out at the earliest, ms after the message was sent (the gaps added up). */
  private readonly due: number[];
  /** The shortest time between two edits (the first gap): after a stall, the schedule is not caught up in a burst. */
  private readonly minGap: number;

  private constructor(private readonly ctx: StatusContext, private readonly sent: SentMessage, text: string, pacing: ProgressPacing, private readonly now: () => number) {
    this.lastText = text;
    this.openedAt = this.lastEditAt = now();
    let sum = 0;
    this.due = progressGaps(pacing.intervalMs, pacing.spanMs, StatusMessage.MAX_PROGRESS_EDITS).map((gap) => (sum += gap));
    this.minGap = Math.max(0, pacing.intervalMs);
  }

  static async open(ctx: StatusContext, text: string, pacing: ProgressPacing): Promise<StatusMessage> {
    const sent = await ctx.reply(text, { quote: true });
    const now = pacing.now ?? Date.now;
    return new StatusMessage(ctx, sent, text, pacing, now);
  }

  /** Whether edits reach the chat (false after the transport refused one). */
  get canEdit(): boolean {
    return this.editable;
  }

  private edit(text: string): Promise<void> {
    if (!this.editable || text === this.lastText) return this.pending;
    this.lastText = text;
    this.lastEditAt = this.now();
    // Edits go out one after another, so the chat never shows an older state after a newer one.
    this.pending = this.pending.then(async () => {
      if (!this.editable) return;
      try {
        if (!(await this.ctx.edit(this.sent, text))) this.editable = false;
      } catch (err) {
        this.editable = false;
        this.ctx.log.debug({ err: (err as Error).message }, 'status edit failed; no more progress edits');
      }
    });
    return this.pending;
  }

  /** Shows a new stage at once (e.g. "Converting…"). */
  stage(text: string): Promise<void> {
    return this.edit(text);
  }

  /** Shows `label percent%` when its turn in the schedule has come (never blocks the work). */
  progress(label: string, percent: number): void {
    if (!this.editable || this.progressEdits >= StatusMessage.MAX_PROGRESS_EDITS) return;
    // Paced from the start of the job, so late edits (a stalled download) do not push the whole schedule back.
    const now = this.now();
    if (now - this.openedAt < this.due[this.progressEdits]! || now - this.lastEditAt < this.minGap) return;
    const text = `${label} ${Math.floor(Math.max(0, Math.min(100, percent)))}%`;
    if (text === this.lastText) return;
    this.progressEdits++;
    void this.edit(text);
  }

  /** Ends with a success line: edited in where possible; where not, nothing more is said (the result speaks). */
  async finish(text: string): Promise<void> {
    await this.edit(text);
  }

  /** Ends with an error: edited in where possible, else sent as a new message. */
  async fail(text: string): Promise<void> {
    await this.pending;
    if (this.editable) {
      await this.edit(text);
      if (this.editable) return;
    }
    await this.ctx.reply(text, { quote: true });
  }
}
