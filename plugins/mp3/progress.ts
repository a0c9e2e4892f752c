import type { MessageContext, SentMessage } from '../../core/index.js';

/** What a status message needs of a handler's context. */
type StatusContext = Pick<MessageContext<unknown>, 'reply' | 'edit' | 'log'>;

/**
 * One status message per job: sent once, then edited as the work advances. Where the transport cannot edit (the
 * console, some networks) it stops trying after the first refusal and only the final result or error is sent, so a
 * chat never gets a flood of progress lines.
 *
 * @example
 * const status = await StatusMessage.open(ctx, 'Downloading…', 1500);
 * status.progress('Downloading…', 40);
 * await status.finish('Done.'); // or status.fail('The download failed: …')
 */
export class StatusMessage {
  private editable = true;
  private lastEditAt = 0;
  private progressEdits = 0;
  /** Progress edits per job at most: a long job must not send hundreds of edits (stages and the end always go). */
  static readonly MAX_PROGRESS_EDITS = 20;
  private lastText: string;
  private pending: Promise<void> = Promise.resolve();

  private constructor(private readonly ctx: StatusContext, private readonly sent: SentMessage, text: string, private readonly intervalMs: number, private readonly now: () => number) {
    this.lastText = text;
  }

  static async open(ctx: StatusContext, text: string, intervalMs: number, now: () => number = Date.now): Promise<StatusMessage> {
    const sent = await ctx.reply(text, { quote: true });
    return new StatusMessage(ctx, sent, text, intervalMs, now);
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

  /** Shows `label percent%`, at most once per interval (never blocks the work). */
  progress(label: string, percent: number): void {
    if (!this.editable || this.now() - this.lastEditAt < this.intervalMs || this.progressEdits >= StatusMessage.MAX_PROGRESS_EDITS) return;
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
