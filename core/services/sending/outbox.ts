import { setMaxListeners } from 'node:events';
import PQueue from 'p-queue';
import type { Logger } from '../log/logger.js';
import type { OutgoingMedia, SentMessage } from '../../kernel/port/message.js';
import type { Transport } from '../../kernel/port/transport.js';
import { AnswerSpacing, DEFAULT_ANSWER_PACING, type AnswerPacing } from './answer-spacing.js';
import { OutboxClosedError } from '../../api/errors.js';

/** The pace of messages the bot starts on its own (config.json `sending`). */
export interface SendingLimits {
  /** Bot-initiated messages per chat per minute, evenly spaced (Infinity: not spaced, only for tests; see `AppOptions.sendPacing`). */
  perChatPerMinute: number;
  /** Bot-initiated messages per minute over all chats, evenly spaced (Infinity: not spaced). */
  globalPerMinute: number;
  /** Each send waits a further random 0…jitterMs ms, so sends never come on an exact beat. */
  jitterMs: number;
}

export const DEFAULT_SENDING_LIMITS: SendingLimits = { perChatPerMinute: 12, globalPerMinute: 30, jitterMs: 1500 };

/** Thrown for a paced send whose caller no longer wanted it before its turn came (see `Outbox.paced`). */
export class SendCancelledError extends Error {
  constructor() {
    super('no longer wanted: this message was not sent');
  }
}

/** The clock the answers' pacing reads and waits on. */
export interface PacingClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/** The real clock, read at each call (a test's fake timers apply to it too). */
export const REAL_PACING_CLOCK: PacingClock = { now: () => Date.now(), sleep: (ms) => sleep(ms) };

/** How often a send waiting for the network re-checks whether it is connected. */
const RECONNECT_POLL_MS = 1000;

/**
 * The one way out for everything the bot sends, because WhatsApp bans accounts that send too much too fast. Messages
 * it starts on its own (owner notices, reminders, job results sent later) are paced per chat and overall with jitter
 * (`sending`). Answers within a turn (`answer`) are spaced more lightly: a private chat's first message of a turn goes
 * at once and the rest of its stream a second apart, a group's stream is spread a few seconds apart, and every message
 * (bot-initiated ones too) keeps a small gap over all chats.
 *
 * Sends made before the transport is attached (or while it is not linked) wait in the queue.
 *
 * Pacing is `p-queue` (maintained, ESM, sliding-window `strict` rate limits): one queue per chat with concurrency 1
 * keeps a chat's messages in order and spaced; one global queue spaces all chats together.
 *
 * @example
 * const outbox = new Outbox(() => config.sending, log);
 * outbox.attach(transport);
 * await outbox.sendText('6281234567890@s.whatsapp.net', 'Your reminder: call Ana');
 */
export class Outbox {
  private transport: Transport | undefined;
  private attached!: Promise<void>;
  private resolveAttached!: () => void;
  private global: PQueue | undefined;
  private readonly chats = new Map<string, PQueue>();
  private builtFor = '';
  private closed = false;
  private waiting = 0;
  private readonly closing = new AbortController();
  private readonly spacing = new AnswerSpacing();

  constructor(
    private readonly limits: () => SendingLimits,
    private readonly log: Logger,
    private readonly random: () => number = Math.random,
    private readonly answerPacing: AnswerPacing = DEFAULT_ANSWER_PACING,
    // A test holds it to see which answer waits and which goes at once, without racing the real clock.
    private readonly clock: PacingClock = REAL_PACING_CLOCK,
  ) {
    this.attached = new Promise((resolve) => (this.resolveAttached = resolve));
    // Every queued send listens for the stop: many at once are expected, not a leak.
    setMaxListeners(0, this.closing.signal);
  }

  /** Starts delivering through `transport` (and delivers what waited for it). */
  attach(transport: Transport): void {
    this.transport = transport;
    this.resolveAttached();
  }

  /** Resolves once a transport is attached (or the outbox is closed). */
  async attachedTransport(): Promise<void> {
    await this.attached;
    if (this.closed) throw new OutboxClosedError();
  }

  /** Bot-initiated messages not yet handed to the transport. */
  pending(): number {
    return this.waiting;
  }

  /**
   * Resolves when nothing waits any more, or after `timeoutMs`, or at once while nothing can go out (no transport,
   * or not linked); resolves with how many still wait.
   */
  async settle(timeoutMs: number): Promise<number> {
    const until = Date.now() + timeoutMs;
    const canSend = () => this.transport?.session().status === 'linked';
    while (this.waiting > 0 && canSend() && Date.now() < until) await sleep(Math.min(50, Math.max(1, until - Date.now())));
    return this.waiting;
  }

  /** Stops sending: what still waits is dropped (each such send rejects). Returns how many were dropped. */
  close(): number {
    this.closed = true;
    const dropped = this.waiting;
    this.closing.abort(new OutboxClosedError());
    this.resolveAttached();
    return dropped;
  }

  sendText(chatId: string, text: string): Promise<SentMessage> {
    return this.enqueue(chatId, (t) => t.sendText(chatId, text));
  }

  sendMedia(chatId: string, media: OutgoingMedia): Promise<SentMessage> {
    return this.enqueue(chatId, (t) => t.sendMedia(chatId, media));
  }

  /**
   * Runs one send or edit of the chat (`send` gets the transport) at the pace of every bot-initiated message. With
   * `signal`: aborted before its turn came, it is dropped and rejects with `SendCancelledError` (a status message
   * whose answer is ready); once handed to the transport it always completes.
   */
  paced<T>(chatId: string, send: (transport: Transport) => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.enqueue(chatId, send, signal);
  }

  /**
   * One message of the bot's answer in a chat (`send` makes it), spaced by `answerPacing` where the transport asks for
   * it (`pacesAnswers`): `first` (the turn's first message) of a private chat goes at once; the others wait their
   * chat's and the overall turn (a quiet chat's at once), plus a little jitter when they wait.
   */
  async answer<T>(chatId: string, send: () => Promise<T>, at: { group: boolean; first: boolean }): Promise<T> {
    if (this.closed) throw new OutboxClosedError();
    if (!this.transport?.pacesAnswers) return send();
    const pacing = this.answerPacing;
    const immediate = at.first && !at.group;
    const wait = this.spacing.reserve(chatId, at.group ? pacing.groupGapMs : pacing.privateGapMs, pacing.overallGapMs, this.clock.now(), immediate);
    // Only a message that waits anyway gets jitter: a quiet chat's message goes out at once.
    if (wait > 0) await this.clock.sleep(wait + Math.floor(this.random() * Math.max(0, pacing.jitterMs)));
    if (this.closed) throw new OutboxClosedError();
    return send();
  }

  private queues(chatId: string): { chat: PQueue; global: PQueue } {
    const limits = this.limits();
    const signature = `${limits.perChatPerMinute}/${limits.globalPerMinute}`;
    if (signature !== this.builtFor || !this.global) {
      // New limits (a dashboard edit) apply to sends from now on; queued ones finish at the old pace.
      this.builtFor = signature;
      this.global = spacedQueue(limits.globalPerMinute);
      this.chats.clear();
    }
    let chat = this.chats.get(chatId);
    if (!chat) {
      chat = spacedQueue(limits.perChatPerMinute);
      this.chats.set(chatId, chat);
      this.forgetWhenQuiet(chatId, chat, limits.perChatPerMinute);
    }
    return { chat, global: this.global };
  }

  /** A chat's queue is dropped once it is idle and its spacing has passed, so the map does not grow with every chat. */
  private forgetWhenQuiet(chatId: string, queue: PQueue, perMinute: number): void {
    queue.on('idle', () => {
      const timer = setTimeout(() => {
        if (this.chats.get(chatId) === queue && queue.size === 0 && queue.pending === 0) this.chats.delete(chatId);
      }, 60_000 / perMinute);
      timer.unref?.();
    });
  }

  private async enqueue<T>(chatId: string, send: (transport: Transport) => Promise<T>, cancel?: AbortSignal): Promise<T> {
    if (this.closed) throw new OutboxClosedError();
    if (cancel?.aborted) throw new SendCancelledError();
    this.waiting++;
    let handedOver = false;
    try {
      const { chat, global } = this.queues(chatId);
      const signal = this.closing.signal;
      const result = await chat.add(() =>
        global.add(async () => {
          await this.attached;
          await this.linked();
          const jitter = Math.floor(this.random() * Math.max(0, this.limits().jitterMs));
          if (jitter > 0) await sleep(jitter);
          if (this.closed || !this.transport) throw new OutboxClosedError();
          // Checked here, not handed to the queue: an abort must never cut a send the transport already has.
          if (cancel?.aborted) throw new SendCancelledError();
          this.waiting--;
          handedOver = true;
          // Counted in the answers' overall spacing: answers right after a notice keep their small gap.
          this.spacing.reserve(chatId, 0, this.answerPacing.overallGapMs, this.clock.now(), true);
          return send(this.transport);
        }, { signal }),
        { signal },
      );
      if (result === undefined) throw new OutboxClosedError();
      return result;
    } catch (err) {
      if (!(err instanceof OutboxClosedError) && !(err instanceof SendCancelledError)) this.log.error({ err, chat: chatId }, 'a message the bot sent on its own could not be delivered');
      throw err;
    } finally {
      if (!handedOver) this.waiting--;
    }
  }

  /** Waits while the transport is not linked (WhatsApp reconnecting): the message goes out once it is back. */
  private async linked(): Promise<void> {
    while (!this.closed && this.transport && this.transport.session().status !== 'linked') await sleep(RECONNECT_POLL_MS);
  }
}

function spacedQueue(perMinute: number): PQueue {
  // Not spaced at all (a test's UNPACED_SENDS; config.json allows 1–60): still one at a time, in order.
  if (!Number.isFinite(perMinute)) return new PQueue({ concurrency: 1 });
  // One start per 60/perMinute s, in any sliding window: evenly spaced, never a burst at a window's edge.
  return new PQueue({ concurrency: 1, intervalCap: 1, interval: Math.ceil(60_000 / Math.max(1, perMinute)), strict: true });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
