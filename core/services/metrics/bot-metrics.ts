import { createRequire } from 'node:module';
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * prom-client (with @opentelemetry/api, ~80 modules) loads when the metrics are first read or an event counter
 * first counts, not at start: a start has nothing to count yet, and every message counts into plain tallies.
 */
const promClient = () => createRequire(import.meta.url)('prom-client') as typeof import('prom-client');

/** Prefix of every metric the bot exports (Prometheus naming: one namespace per application). */
export const METRIC_PREFIX = 'wa_bot_';

/** The states a provider leg can be in (core/services/providers/provider-chain.ts LegCondition). */
const LEG_STATES = ['healthy', 'cooling-down', 'rejected', 'exhausted'] as const;

/** What the scrape-time gauges read: the live state of the app, never chat content, ids or keys. */
export interface MetricSources {
  /** Provider legs by name, with whether each is cooling down now and for how long. */
  legs?: () => Array<{ name: string; kind: string; state: string; coolingDownUntil?: number }>;
  /** Audio key counts by state (usable / parked / rejected), from the core's key pool via the `audio` capability. */
  audioKeys?: () => Record<string, number> | undefined;
  /** Transport state: connected (linked and open) and restricted by WhatsApp. */
  transport?: () => { connected: boolean; restricted: boolean } | undefined;
  now?: () => number;
}

/**
 * The bot's Prometheus metrics, in a registry of their own (not prom-client's global one): several apps in one
 * process (tests, the bench) each count only their own messages.
 *
 * @example
 * const metrics = new BotMetrics();
 * metrics.countReceived('text');
 * const text = await metrics.registry.metrics();
 */
/** Counts by label made on every message: plain numbers, handed to their prom-client counter when it is read. */
class LabelTally {
  private readonly counts = new Map<string, number>();
  add(label: string): void {
    this.counts.set(label, (this.counts.get(label) ?? 0) + 1);
  }
  drain(into: (label: string, count: number) => void): void {
    for (const [label, count] of this.counts) into(label, count);
    this.counts.clear();
  }
}

/** Counts by two labels made on every answer (leg and outcome, leg and token kind): plain numbers until the counter is read. */
class PairTally {
  private readonly counts = new Map<string, Map<string, number>>();
  add(first: string, second: string, amount = 1): void {
    let inner = this.counts.get(first);
    if (!inner) this.counts.set(first, (inner = new Map()));
    inner.set(second, (inner.get(second) ?? 0) + amount);
  }
  drain(into: (first: string, second: string, count: number) => void): void {
    for (const [first, inner] of this.counts) for (const [second, count] of inner) into(first, second, count);
    this.counts.clear();
  }
}

export class BotMetrics {
  private built: Instruments | undefined;
  private sources: MetricSources = {};
  // The message path counts here (a label hash and check per call in prom-client, several calls per message); each
  // counter takes its share when the metrics are read.
  private readonly received = new LabelTally();
  private readonly answered = new LabelTally();
  private readonly sent = new LabelTally();
  private readonly upstream = new PairTally();
  private readonly tokenCounts = new PairTally();
  private depth = 0;
  /** Handling times (kind, seconds, kind, seconds, …) not yet handed to the histogram: it takes them when read. */
  private handled: Array<string | number> = [];

  /** The bot's own registry (made, with every metric in it, on first use). */
  get registry(): Registry {
    return this.instruments().registry;
  }
  get messagesReceived(): Counter<'kind'> {
    return this.instruments().messagesReceived;
  }
  get messagesAnswered(): Counter<'kind'> {
    return this.instruments().messagesAnswered;
  }
  get handlingSeconds(): Histogram<'kind'> {
    return this.instruments().handlingSeconds;
  }
  get upstreamRequests(): Counter<'leg' | 'outcome'> {
    return this.instruments().upstreamRequests;
  }
  get legCooldowns(): Counter<'leg' | 'reason'> {
    return this.instruments().legCooldowns;
  }
  get queueDepth(): Gauge {
    return this.instruments().queueDepth;
  }
  get reconnects(): Counter<'reason'> {
    return this.instruments().reconnects;
  }
  get messagesSent(): Counter<'type'> {
    return this.instruments().messagesSent;
  }
  get sendFailures(): Counter<'type'> {
    return this.instruments().sendFailures;
  }
  /** Outbound event webhook deliveries by outcome: delivered, retried (a try failed), failed (gave up), dropped (queue full). */
  get webhookDeliveries(): Counter<'outcome'> {
    return this.instruments().webhookDeliveries;
  }
  /** Provider-reported tokens by leg and kind: input (`prompt`, cached included), `cached` input, `completion`. */
  get tokens(): Counter<'leg' | 'kind'> {
    return this.instruments().tokens;
  }

  private instruments(): Instruments {
    return (this.built ??= this.build());
  }

  private build(): Instruments {
    const { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } = promClient();
    const registry = new Registry();
    const registers = [registry];
    const { received, answered, sent, tokenCounts } = this;
    const metrics = this;
    // A counter filled from a tally when it is read (scrape, get()).
    const tallied = <L extends string>(name: string, help: string, label: L, tally: LabelTally) =>
      new Counter<L>({
        name: `${METRIC_PREFIX}${name}`,
        help,
        labelNames: [label],
        registers,
        collect() {
          tally.drain((value, n) => this.inc({ [label]: value } as Partial<Record<L, string>>, n));
        },
      });
    const messagesReceived = tallied('messages_received_total', 'Inbound messages handed to the bot, by kind (text or media kind).', 'kind', received);
    const messagesAnswered = tallied('messages_answered_total', 'Inbound messages the bot answered (text, media or reaction), by kind of the inbound message.', 'kind', answered);
    const handlingSeconds = new Histogram({
      name: `${METRIC_PREFIX}message_handling_seconds`,
      help: 'Time from receiving a message to the end of its handling (including waiting behind earlier messages of the chat).',
      labelNames: ['kind'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers,
      collect() {
        metrics.drainHandled();
      },
    });
    const upstream = this.upstream;
    const upstreamRequests = new Counter({
      name: `${METRIC_PREFIX}upstream_requests_total`,
      help: 'Requests to AI provider legs, by leg and outcome (ok or the failure class).',
      labelNames: ['leg', 'outcome'],
      registers,
      collect() {
        upstream.drain((leg, outcome, n) => this.inc({ leg, outcome }, n));
      },
    });
    const legCooldowns = new Counter({ name: `${METRIC_PREFIX}leg_cooldowns_total`, help: 'Times a provider leg was put to rest after a failure, by leg and failure class.', labelNames: ['leg', 'reason'], registers });
    const queueDepth = new Gauge({
      name: `${METRIC_PREFIX}queue_depth`,
      help: 'Inbound messages being handled or waiting behind an earlier message of their chat.',
      registers,
      collect() {
        this.set(metrics.depth);
      },
    });
    const reconnects = new Counter({ name: `${METRIC_PREFIX}reconnects_total`, help: 'WhatsApp connection closes followed by a reconnect, by reason.', labelNames: ['reason'], registers });
    const messagesSent = tallied('messages_sent_total', 'Messages the bot sent, by type (text, media, reaction, edit).', 'type', sent);
    const tokens = new Counter({
      name: `${METRIC_PREFIX}tokens_total`,
      help: 'Tokens the providers reported, by leg and kind: prompt (all input), cached (the part of the input read from the provider\'s prompt cache), completion.',
      labelNames: ['leg', 'kind'],
      registers,
      collect() {
        tokenCounts.drain((leg, kind, n) => this.inc({ leg, kind }, n));
      },
    });
    const webhookDeliveries = new Counter({ name: `${METRIC_PREFIX}webhook_deliveries_total`, help: 'Outbound event webhook deliveries, by outcome: delivered, retried (a try failed and waits), failed (gave up after its tries), dropped (the queue was full).', labelNames: ['outcome'], registers });
    const sendFailures = new Counter({ name: `${METRIC_PREFIX}send_failures_total`, help: 'Sends the transport refused or could not deliver, by type.', labelNames: ['type'], registers });

    new Gauge({
      name: `${METRIC_PREFIX}leg_up`,
      help: 'Provider leg usable now (1) or cooling down after a failure (0).',
      labelNames: ['leg', 'kind'],
      registers,
      collect() {
        this.reset();
        for (const leg of metrics.sources.legs?.() ?? []) this.set({ leg: leg.name, kind: leg.kind }, leg.state === 'healthy' ? 1 : 0);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}leg_state`,
      help: 'Provider leg state, one series per state with value 1 for the current one (healthy, cooling-down, rejected, exhausted).',
      labelNames: ['leg', 'state'],
      registers,
      collect() {
        this.reset();
        for (const leg of metrics.sources.legs?.() ?? []) {
          for (const state of LEG_STATES) this.set({ leg: leg.name, state }, leg.state === state ? 1 : 0);
        }
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}leg_cooldown_remaining_seconds`,
      help: 'Seconds until a cooling-down provider leg is tried again (+Inf: until restart, e.g. a rejected key).',
      labelNames: ['leg'],
      registers,
      collect() {
        this.reset();
        const now = (metrics.sources.now ?? Date.now)();
        for (const leg of metrics.sources.legs?.() ?? []) {
          const remaining = leg.state === 'healthy' ? 0 : leg.coolingDownUntil ? Math.max(0, (leg.coolingDownUntil - now) / 1000) : Infinity;
          this.set({ leg: leg.name }, remaining);
        }
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}audio_keys`,
      help: 'Audio provider keys by state (usable, parked after a limit, rejected by the provider).',
      labelNames: ['state'],
      registers,
      collect() {
        this.reset();
        for (const [state, count] of Object.entries(metrics.sources.audioKeys?.() ?? {})) this.set({ state }, count);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}transport_connected`,
      help: 'Chat network connected (WhatsApp linked and open; the console always).',
      registers,
      collect() {
        this.set(metrics.sources.transport?.()?.connected ? 1 : 0);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}account_restricted`,
      help: 'WhatsApp restricts the account (1): it may refuse messages of the bot meanwhile; refused ones are not resent.',
      registers,
      collect() {
        this.set(metrics.sources.transport?.()?.restricted ? 1 : 0);
      },
    });
    collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });
    return { registry, messagesReceived, messagesAnswered, handlingSeconds, upstreamRequests, legCooldowns, queueDepth, reconnects, messagesSent, sendFailures, webhookDeliveries, tokens };
  }

  /** One response's tokens as the provider reported them (see `tokens`). */
  countTokens(leg: string, tokens: { prompt: number; cached: number; completion: number }): void {
    this.tokenCounts.add(leg, 'prompt', tokens.prompt);
    this.tokenCounts.add(leg, 'cached', tokens.cached);
    this.tokenCounts.add(leg, 'completion', tokens.completion);
  }

  /** One message's handling time, by kind (observed by the histogram when the metrics are read). */
  observeHandling(kind: string, seconds: number): void {
    this.handled.push(kind, seconds);
    // Never metrics nobody reads piling up: past this many, they go into the histogram now.
    if (this.handled.length >= 2048) this.drainHandled();
  }

  private drainHandled(): void {
    const handled = this.handled;
    this.handled = [];
    if (!handled.length) return;
    for (let i = 0; i < handled.length; i += 2) this.handlingSeconds.observe({ kind: handled[i] as string }, handled[i + 1] as number);
  }

  /** A request to provider leg `leg` ended with `outcome` (ok or the failure class). */
  countUpstream(leg: string, outcome: string): void {
    this.upstream.add(leg, outcome);
  }

  /** An inbound message of `kind` was handed to the bot. */
  countReceived(kind: string): void {
    this.received.add(kind);
  }

  /** An inbound message of `kind` was answered. */
  countAnswered(kind: string): void {
    this.answered.add(kind);
  }

  /** The bot sent a message of `type` (text, media, reaction, edit). */
  countSent(type: string): void {
    this.sent.add(type);
  }

  /** A message entered (+1) or left (−1) the queue. */
  queued(delta: 1 | -1): void {
    this.depth += delta;
  }

  /** Connects the scrape-time gauges to the app's live state (later calls add to or replace earlier sources). */
  observe(sources: MetricSources): void {
    this.sources = { ...this.sources, ...sources };
  }

  /** The Prometheus text exposition and its content type. */
  async exposition(): Promise<{ contentType: string; text: string }> {
    const registry = this.registry;
    return { contentType: registry.contentType, text: await registry.metrics() };
  }
}

/** The prom-client objects of one BotMetrics, made when first needed. */
interface Instruments {
  registry: Registry;
  messagesReceived: Counter<'kind'>;
  messagesAnswered: Counter<'kind'>;
  handlingSeconds: Histogram<'kind'>;
  upstreamRequests: Counter<'leg' | 'outcome'>;
  legCooldowns: Counter<'leg' | 'reason'>;
  queueDepth: Gauge;
  reconnects: Counter<'reason'>;
  messagesSent: Counter<'type'>;
  sendFailures: Counter<'type'>;
  webhookDeliveries: Counter<'outcome'>;
  tokens: Counter<'leg' | 'kind'>;
}
