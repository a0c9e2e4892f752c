import type { BotConfig } from '../../services/config/schema.js';
import type { Logger } from '../../api/logger.js';
import { SendCancelledError } from '../../services/sending/outbox.js';
import { ANSWER_WITHOUT_MENTION } from './access-gate.js';
import type { MessageContext } from '../plugin/message-context.js';
import type { SentMessage } from '../port/message.js';
import type { Transport } from '../port/transport.js';
import type { Middleware } from './compose.js';
import { TURN_FAILED } from '../../api/errors.js';

/** What the status message says while nothing more specific runs (a tool without a phrase of its own). */
export const DEFAULT_PROGRESS = 'working on it…';
/** The status message's last state once the answer went out, and once the turn failed. */
export const PROGRESS_DONE = '✓ done';
export const PROGRESS_FAILED = '✗ could not finish';
/** A status message is edited at most once in this long, whatever the sending limits allow. */
export const PROGRESS_EDIT_INTERVAL_MS = 3000;
/**
 * WhatsApp takes edits for 15 minutes after a send; an edit that would go out later than this is not tried (the
 * margin covers the wait for its turn in the sending queue).
 */
export const PROGRESS_EDITS_FOR_MS = 14 * 60_000;
/** The longest phrase shown; a longer one is cut (a plugin's phrase is a few words). */
const PHRASE_MAX = 60;

/**
 * Runs a send or an edit of the chat: paced like every message the bot starts on its own (the outbox) when there is
 * one. `signal` aborted before its turn came: dropped (rejects with `SendCancelledError`).
 */
export type PacedSend = <T>(chatId: string, send: (transport: Transport) => Promise<T>, signal: AbortSignal) => Promise<T>;

export interface TurnProgressDeps {
  chatId: string;
  /** Seconds the turn runs before the status shows. */
  afterSeconds: number;
  /** How long the turn has run already (its observers ran before it was taken up). */
  elapsedMs?: number;
  /** What the turn said it does before it was taken up (a voice note being read). */
  phrase?: string;
  paced: PacedSend;
  log: Logger;
  now?: () => number;
  /** False where the network cannot change a sent message (the console): the status is shown once and never edited. */
  edits?: boolean;
}

/** A phrase as shown: one line, at most PHRASE_MAX characters; blank → the default. */
export function progressPhrase(phrase: unknown): string {
  const line = typeof phrase === 'string' ? phrase.replace(/\s+/g, ' ').trim() : '';
  if (!line) return DEFAULT_PROGRESS;
  return line.length > PHRASE_MAX ? `${line.slice(0, PHRASE_MAX - 1)}…` : line;
}

/**
 * The status message of one long turn. Nothing shows until the turn has run `afterSeconds`; then one message says
 * what runs now (`set`), and later phrases edit it — at most one edit every PROGRESS_EDIT_INTERVAL_MS, each paced
 * like the bot's own messages, a queued edit taking the newest phrase, never after WhatsApp's edit window, never
 * again once an edit failed (the console cannot edit: its status prints once). Before the turn says anything
 * (`beforeSpeaking`) every send still waiting is dropped and one under way is waited for, so the status never comes
 * after the answer. At the end (`finish`) a shown status is edited once more to its last state (done or failed),
 * so it never claims to be still working; a turn that spoke before the status was due shows none at all.
 */
export class TurnProgress {
  private phrase = DEFAULT_PROGRESS;
  private timer: NodeJS.Timeout | undefined;
  private status: { id: string; sentAt: number; shown: string } | undefined;
  /** A send or an edit handed to the transport and not finished. */
  private underWay: Promise<unknown> | undefined;
  /** An edit waiting for its interval or its turn (it shows the newest text when it goes). */
  private editQueued = false;
  private lastEditAt = 0;
  private canEdit = true;
  /** Set once the turn speaks: no status from then on, only the final edit of one already shown. */
  private quiet = false;
  private final: string | undefined;
  /** Called once the final edit went or was dropped. */
  private finalSettled: (() => void) | undefined;
  private cancel = new AbortController();
  private readonly now: () => number;

  constructor(private readonly deps: TurnProgressDeps) {
    this.now = deps.now ?? Date.now;
    // Nothing to wait for at the end of a turn where no edit can go (the console's exit waited the edits' interval).
    this.canEdit = deps.edits ?? true;
    if (deps.phrase !== undefined) this.phrase = progressPhrase(deps.phrase);
  }

  start(): void {
    if (this.deps.afterSeconds <= 0) return;
    this.timer = setTimeout(() => this.show(), Math.max(0, this.deps.afterSeconds * 1000 - (this.deps.elapsedMs ?? 0)));
  }

  /** What runs now ("searching the web…"): shown in the status, by an edit when it is already out. */
  set(phrase: unknown): void {
    this.phrase = progressPhrase(phrase);
    if (this.status && !this.quiet) this.queueEdit();
  }

  /** The turn is about to say something: no status from now on, and none after what it says. */
  async beforeSpeaking(): Promise<void> {
    if (this.quiet) return this.underWayDone();
    this.quiet = true;
    clearTimeout(this.timer);
    this.cancel.abort();
    await this.underWayDone();
  }

  /**
   * The turn ended: a shown status takes its last state, at the edits' pace. Resolves once that edit went, or was
   * dropped (never rejects); the turn's answer does not wait for it.
   */
  async finish(failed: boolean): Promise<void> {
    await this.beforeSpeaking();
    if (!this.status || !this.canEdit) return;
    this.final = failed ? PROGRESS_FAILED : PROGRESS_DONE;
    this.cancel = new AbortController();
    await new Promise<void>((resolve) => {
      this.finalSettled = resolve;
      this.editQueued = false;
      this.queueEdit();
    });
  }

  private text(): string {
    return this.final ?? this.phrase;
  }

  private async underWayDone(): Promise<void> {
    while (this.underWay) await this.underWay.catch(() => undefined);
  }

  private show(): void {
    if (this.quiet) return;
    const { chatId, paced, log } = this.deps;
    const sending = paced(
      chatId,
      (transport) => {
        const text = this.text();
        const sent = transport.sendText(chatId, text).then((message: SentMessage) => {
          this.status = { id: message.id, sentAt: this.now(), shown: text };
          this.lastEditAt = this.now();
          // A phrase that changed while the status was on its way, or the turn ending meanwhile.
          if (this.text() !== text) this.queueEdit();
        });
        this.track(sent);
        return sent;
      },
      this.cancel.signal,
    );
    sending.catch((err: unknown) => {
      if (!(err instanceof SendCancelledError)) log.warn({ err, chat: chatId }, 'could not send the status message of a long answer');
    });
  }

  private track(work: Promise<unknown>): void {
    const settled = work.catch(() => undefined).finally(() => {
      if (this.underWay === settled) this.underWay = undefined;
    });
    this.underWay = settled;
  }

  private queueEdit(): void {
    if (this.editQueued || !this.canEdit || !this.status) return;
    if (this.quiet && this.final === undefined) return;
    this.editQueued = true;
    const wait = Math.max(0, this.lastEditAt + PROGRESS_EDIT_INTERVAL_MS - this.now());
    const signal = this.cancel.signal;
    const timer = setTimeout(() => {
      if (signal.aborted) {
        this.editQueued = false;
        return;
      }
      this.edit(signal);
    }, wait);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        this.editQueued = false;
      },
      { once: true },
    );
  }

  private edit(signal: AbortSignal): void {
    const { chatId, paced, log } = this.deps;
    const status = this.status!;
    paced(
      chatId,
      (transport) => {
        this.editQueued = false;
        const text = this.text();
        if (text === status.shown) return Promise.resolve(true);
        if (this.now() - status.sentAt > PROGRESS_EDITS_FOR_MS) {
          this.canEdit = false;
          return Promise.resolve(false);
        }
        const edited = transport.editText(chatId, status.id, text).then((ok) => {
          this.lastEditAt = this.now();
          if (!ok) {
            // The network cannot edit (the console) or refused: the status stays as it was, never sent anew.
            this.canEdit = false;
            return false;
          }
          status.shown = text;
          if (this.text() !== text) this.queueEdit();
          return true;
        });
        this.track(edited);
        return edited;
      },
      signal,
    )
      .catch((err: unknown) => {
        if (signal === this.cancel.signal) this.editQueued = false;
        if (!(err instanceof SendCancelledError)) log.warn({ err, chat: chatId }, 'could not edit the status message of a long answer');
      })
      .finally(() => {
        if (this.final !== undefined && signal === this.cancel.signal) this.finalSettled?.();
      });
  }
}

/** The turn's progress, reachable from its context (`ctx.progress`, the replies' `beforeSpeaking`). */
export interface ProgressSlot {
  current: TurnProgress | undefined;
  /** When the turn started (unix ms). */
  startedAt: number;
  /** The last phrase the turn set (kept for a status made later). */
  phrase: string | undefined;
}

export interface ProgressMiddlewareDeps {
  config: () => BotConfig;
  transport: () => Transport | undefined;
  paced: PacedSend;
  /** The context's slot for its turn's progress. */
  slotOf: (ctx: MessageContext) => ProgressSlot | undefined;
  /** Hands on the last edit of a status still to go after the turn (the bot's `idle()` waits for it). */
  after: (work: Promise<void>) => void;
}

/**
 * Shows the sender that a message the bot took up is being worked on: the optional acknowledgement reaction (👀, then
 * ✅ or ❌; config `conversation.ackReactions`) and, for a turn that runs longer than
 * `conversation.progressAfterSeconds`, one status message kept current (TurnProgress). Placed after the access rules
 * and the group filter, so it never speaks for a message the bot does not answer; not for a group message the bot
 * reads without being asked (it may well stay silent there).
 */
export function turnProgress(deps: ProgressMiddlewareDeps): Middleware<MessageContext> {
  return (ctx, next) => {
    const conversation = deps.config().conversation;
    const afterSeconds = conversation.progressAfterSeconds ?? deps.transport()?.defaultProgressAfterSeconds ?? 0;
    // Nothing to show (no reactions, no status: piped console input, a config that turned both off): the message goes
    // on without an async frame of its own around the rest of its path.
    if (!conversation.ackReactions && afterSeconds <= 0) return next();
    return showProgress(deps, ctx, next, conversation.ackReactions, afterSeconds);
  };
}

/** The reactions and the status of one message's turn, around the rest of its path. */
async function showProgress(deps: ProgressMiddlewareDeps, ctx: MessageContext, next: () => Promise<void>, ackReactions: boolean, afterSeconds: number): Promise<void> {
  const seen = ackReactions ? ctx.react('👀').catch((err: unknown) => ctx.log.debug({ err }, 'could not react to acknowledge a message')) : undefined;
  const unasked = ctx.message.isGroup && !ctx.addressed && ctx.state[ANSWER_WITHOUT_MENTION] === true;
  const slot = deps.slotOf(ctx);
  const progress = afterSeconds > 0 && !unasked && slot ? new TurnProgress({ chatId: ctx.chatId, afterSeconds, elapsedMs: Date.now() - slot.startedAt, phrase: slot.phrase, paced: deps.paced, log: ctx.log, edits: deps.transport()?.editsMessages !== false }) : undefined;
  if (slot && progress) slot.current = progress;
  progress?.start();
  let failed = true;
  try {
    await next();
    failed = ctx.state[TURN_FAILED] === true;
  } finally {
    if (progress) deps.after(progress.finish(failed));
    if (seen) {
      await seen;
      await ctx.react(failed ? '❌' : '✅').catch((err: unknown) => ctx.log.debug({ err }, 'could not react to say how a message went'));
    }
  }
}
