import { randomUUID } from 'node:crypto';
import type { BotEventName } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import { signedHeaders } from './signature.js';

/*
 * The outbound event webhooks: each event the bot emits (bot.automation.events) becomes one signed POST to every
 * webhook of config.json `webhooks` that asked for it. `enqueue` only queues and returns: nothing of a delivery ever
 * runs on the message path. The queue is bounded (the oldest waiting delivery is dropped, counted and logged, when a
 * receiver is down for long); a failed POST is tried again with a doubling wait; the secret and the URL (which may
 * carry a key of its own) are never logged: only the webhook's name.
 */

/** One configured receiver: its name (config key), URL, events and secret (`WEBHOOK_SECRET_<NAME>`). */
export interface WebhookTarget {
  name: string;
  url: string;
  events: readonly BotEventName[];
  secret: string;
}

/** One event as the webhooks send it (the body, as JSON). */
export interface OutboundEvent {
  event: BotEventName;
  at: number;
  data: Record<string, unknown>;
}

/** What becomes of deliveries, for the metrics. */
export type DeliveryOutcome = 'delivered' | 'retried' | 'failed' | 'dropped';

export interface EventWebhooksOptions {
  /** The receivers now (read at each event: a config edit applies to the next one). */
  targets(): WebhookTarget[];
  /** POSTs `body` to `url` with `headers` under the egress rules; rejects on a refusal, a network error or a non-2xx answer. */
  post(url: string, body: string, headers: Record<string, string>): Promise<void>;
  log: Logger;
  /** Told of each outcome (metrics). */
  count?(outcome: DeliveryOutcome): void;
  /** Deliveries waiting at most (default 1000); the oldest waiting one is dropped for a new one. */
  maxQueue?: number;
  /** Tries per delivery (default 6: the first and five more, over about a minute). */
  maxAttempts?: number;
  /** The wait before the first retry (default 2 s); it doubles with each further one, up to 5 minutes. */
  firstRetryMs?: number;
  /** POSTs in flight at once (default 4). */
  concurrency?: number;
}

interface Delivery {
  id: string;
  target: WebhookTarget;
  body: string;
  event: BotEventName;
  attempts: number;
  dueAt: number;
  sending: boolean;
}

const MAX_RETRY_MS = 5 * 60_000;

/**
 * The queue of outbound event deliveries (see the module). Timers are the global ones, read at each use, so a test's
 * fake clock (the kit's `useClock`) owns the retries.
 *
 * @example
 * const hooks = new EventWebhooks({ targets, post, log });
 * bot.automation.events.on((e) => hooks.enqueue(e));
 */
export class EventWebhooks {
  private readonly queue: Delivery[] = [];
  private inFlight = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private dropped = 0;
  private readonly maxQueue: number;
  private readonly maxAttempts: number;
  private readonly firstRetryMs: number;
  private readonly concurrency: number;
  /** Resolvers waiting for the queue to empty (tests, a stop). */
  private readonly emptyWaiters = new Set<() => void>();

  constructor(private readonly options: EventWebhooksOptions) {
    this.maxQueue = options.maxQueue ?? 1000;
    this.maxAttempts = options.maxAttempts ?? 6;
    this.firstRetryMs = options.firstRetryMs ?? 2000;
    this.concurrency = options.concurrency ?? 4;
  }

  /** Queues `event` for every webhook that asked for it, and returns at once. */
  enqueue(event: OutboundEvent): void {
    if (this.stopped) return;
    const targets = this.options.targets().filter((t) => t.events.includes(event.event));
    for (const target of targets) {
      const id = randomUUID();
      const body = JSON.stringify({ id, event: event.event, at: new Date(event.at).toISOString(), data: event.data });
      if (this.queue.length >= this.maxQueue) this.dropOldest();
      this.queue.push({ id, target, body, event: event.event, attempts: 0, dueAt: Date.now(), sending: false });
    }
    if (targets.length) this.kick();
  }

  /** Deliveries waiting or in flight. */
  get size(): number {
    return this.queue.length;
  }

  /** Deliveries dropped because the queue was full, since start. */
  get droppedCount(): number {
    return this.dropped;
  }

  /** Resolves once nothing waits or is in flight (a delivery waiting for its retry counts as waiting). */
  whenEmpty(): Promise<void> {
    if (!this.queue.length) return Promise.resolve();
    return new Promise((resolve) => this.emptyWaiters.add(resolve));
  }

  /** Stops: no new deliveries, no more retries; what still waits is dropped (logged with its count). */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    const waiting = this.queue.filter((d) => !d.sending).length;
    if (waiting) this.options.log.warn({ waiting }, `${waiting} event webhook deliveries were still waiting at stop and were not sent`);
    this.queue.splice(0, this.queue.length, ...this.queue.filter((d) => d.sending));
    this.settle();
  }

  private dropOldest(): void {
    const at = this.queue.findIndex((d) => !d.sending);
    if (at < 0) return;
    const [oldest] = this.queue.splice(at, 1);
    this.dropped++;
    this.options.count?.('dropped');
    this.options.log.warn({ webhook: oldest!.target.name, event: oldest!.event, dropped: this.dropped }, `event webhook queue full (${this.maxQueue}): the oldest waiting delivery (${oldest!.event} to ${oldest!.target.name}) was dropped`);
  }

  private kick(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const now = Date.now();
    for (const delivery of this.queue) {
      if (this.inFlight >= this.concurrency) break;
      if (delivery.sending || delivery.dueAt > now) continue;
      delivery.sending = true;
      this.inFlight++;
      void this.attempt(delivery).finally(() => {
        this.inFlight--;
        this.kick();
        this.settle();
      });
    }
    const next = Math.min(...this.queue.filter((d) => !d.sending).map((d) => d.dueAt));
    if (Number.isFinite(next)) {
      this.timer = setTimeout(() => this.kick(), Math.max(0, next - now));
      this.timer.unref?.();
    }
  }

  private async attempt(delivery: Delivery): Promise<void> {
    delivery.attempts++;
    const { target } = delivery;
    // Signed at each try: the receiver's 5-minute window counts from this send, not from the event.
    const headers = { 'content-type': 'application/json', 'x-hook-event': delivery.event, 'x-hook-delivery': delivery.id, ...signedHeaders(target.secret, delivery.body, Date.now()) };
    try {
      await this.options.post(target.url, delivery.body, headers);
      this.remove(delivery);
      this.options.count?.('delivered');
      this.options.log.debug({ webhook: target.name, event: delivery.event, attempts: delivery.attempts }, `event webhook ${target.name}: ${delivery.event} delivered`);
    } catch (err) {
      // The reason only (no URL: it may carry a key; no secret): "the server answered HTTP 500", "… is a local or private address".
      const reason = (err as Error).message;
      if (delivery.attempts >= this.maxAttempts || this.stopped) {
        this.remove(delivery);
        this.options.count?.('failed');
        this.options.log.warn({ webhook: target.name, event: delivery.event, attempts: delivery.attempts, reason }, `event webhook ${target.name}: ${delivery.event} not delivered after ${delivery.attempts} tries (${reason}); dropped`);
        return;
      }
      const wait = Math.min(MAX_RETRY_MS, this.firstRetryMs * 2 ** (delivery.attempts - 1));
      delivery.dueAt = Date.now() + wait;
      delivery.sending = false;
      this.options.count?.('retried');
      this.options.log.info({ webhook: target.name, event: delivery.event, attempts: delivery.attempts, reason, retryInMs: wait }, `event webhook ${target.name}: ${delivery.event} failed (${reason}); trying again in ${Math.round(wait / 1000)} s`);
    }
  }

  private remove(delivery: Delivery): void {
    const at = this.queue.indexOf(delivery);
    if (at >= 0) this.queue.splice(at, 1);
  }

  private settle(): void {
    if (this.queue.length) return;
    for (const resolve of [...this.emptyWaiters]) resolve();
    this.emptyWaiters.clear();
  }
}
