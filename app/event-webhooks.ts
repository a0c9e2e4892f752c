import type { Bot } from '../core/kernel/bot.js';
import type { BotEventName } from '../core/kernel/automation/events.js';
import type { Settings } from '../core/services/config/settings.js';
import type { Logger } from '../core/services/log/logger.js';
import type { BotMetrics } from '../core/services/metrics/bot-metrics.js';
import { EventWebhooks, type WebhookTarget } from '../core/services/webhooks/outbound.js';

/** Largest answer read from a webhook receiver (its body is not used; the bound keeps a hostile one small). */
const MAX_ANSWER_BYTES = 64 * 1024;
/** One POST, connection and answer included. */
const POST_TIMEOUT_MS = 10_000;

/**
 * The .env variable that holds webhook `name`'s secret.
 * @example webhookSecretVariable('n8n-main') // 'WEBHOOK_SECRET_N8N_MAIN'
 */
export function webhookSecretVariable(name: string): string {
  return `WEBHOOK_SECRET_${name.toUpperCase().replace(/-/g, '_')}`;
}

/**
 * Starts the outbound event webhooks of config.json `webhooks` (core/services/webhooks/outbound.ts): the bot's events
 * are queued for each, POSTed under the egress rules (public addresses only, unless EGRESS_ALLOW_PRIVATE_HOSTS in
 * tests), signed with `WEBHOOK_SECRET_<NAME>`; a webhook without its secret gets nothing (the log says so once).
 * `link.changed` comes from the transport as its link changes (TransportEvents.onSessionChange), like every other event.
 */
export function startEventWebhooks(bot: Bot, settings: Settings, log: Logger, metrics: BotMetrics): { webhooks: EventWebhooks; stop(): void } {
  const part = log.child({ part: 'webhooks' });
  const warned = new Set<string>();
  const targets = (): WebhookTarget[] =>
    Object.entries(bot.config.webhooks ?? {}).flatMap(([name, hook]) => {
      const secret = settings.env[webhookSecretVariable(name)];
      if (!secret) {
        if (!warned.has(name)) part.warn({ webhook: name }, `event webhook ${name} has no ${webhookSecretVariable(name)} in .env: nothing is sent to it`);
        warned.add(name);
        return [];
      }
      return [{ name, url: hook.url, events: hook.events, secret }];
    });
  targets();
  const policy = settings.egressAllowPrivateHosts ? { isBlocked: () => false } : undefined;
  const webhooks = new EventWebhooks({
    targets,
    post: async (url, body, headers) => {
      // Loaded with the first event a webhook hears: a start without webhooks never needs it.
      const { fetchPublic } = await import('../core/services/jail/public-fetch.js');
      await fetchPublic(url, { body, headers, maxBytes: MAX_ANSWER_BYTES, timeoutMs: POST_TIMEOUT_MS, maxRedirects: 0, ...(policy ? { policy } : {}) });
    },
    log: part,
    count: (outcome) => metrics.webhookDeliveries.inc({ outcome }),
  });
  // Only the events a configured webhook names are made and queued (per config: an edit applies to the next event).
  const named = new WeakMap<object, Set<BotEventName>>();
  const hears = (event: BotEventName): boolean => {
    const config = bot.config;
    let events = named.get(config);
    if (!events) named.set(config, (events = new Set(Object.values(config.webhooks ?? {}).flatMap((hook) => hook.events))));
    return events.has(event);
  };
  const off = bot.automation.events.on((event) => webhooks.enqueue(event), hears);
  return {
    webhooks,
    stop() {
      off();
      webhooks.stop();
    },
  };
}
