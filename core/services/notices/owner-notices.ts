import type { Logger } from '../log/logger.js';
import type { IncidentView, OwnerNotifier, RaiseOptions } from './owner-notifier.js';

/** How owners hear of incidents (config.json `notices`). */
export interface NoticeLimits {
  /** A key's notices are at least this far apart: an incident that comes back sooner is told when the time is up. */
  minIntervalMinutes: number;
  /** Incident notices per hour over all keys; more wait for the next free slot (recoveries are not counted). */
  maxPerHour: number;
}

/** `2026-11-26 15:02 UTC`: the time of a late notice, readable in a chat. */
function utcTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export const DEFAULT_NOTICE_LIMITS: NoticeLimits = { minIntervalMinutes: 30, maxPerHour: 10 };

export interface OwnerNoticesDeps {
  log: Logger;
  /** The owners' ids (config.json `owners`, digits), read live. */
  owners: () => string[];
  /** Sends a bot-initiated message to an owner's private chat (through the safe-sending limiter). */
  sendToOwner: (ownerId: string, text: string) => Promise<unknown>;
  limits: () => NoticeLimits;
  now?: () => number;
}

interface Incident {
  active: boolean;
  text: string;
  /** When the current (or last) raise happened. */
  since: number;
  recoveredAt?: number;
  /** The chat link itself is down: told, marked late, with the recovery (see OwnerNotifier.raise). */
  linkDown: boolean;
  /** Whether the owners were told of the current (or last) raise, so its recovery is told too. */
  told: boolean;
  /** When the owners last heard of this key (raise or recovery). */
  lastToldAt?: number;
  retry?: NodeJS.Timeout;
}

/**
 * The owner notices service: a message to each owner's private chat once per incident and once on its recovery,
 * never a flood (a minimum interval per key, a cap per hour), and always a log line. Without owners: log only.
 *
 * @example
 * const notices = new OwnerNotices({ log, owners: () => config.owners, sendToOwner, limits: () => config.notices });
 * notices.raise('disk-low', 'Free space of the data folder is below 200 MB.');
 */
export class OwnerNotices implements OwnerNotifier {
  private readonly known = new Map<string, Incident>();
  /** When incident notices went out in the last hour (for the cap). */
  private readonly toldTimes: number[] = [];
  private stopped = false;
  private readonly now: () => number;

  constructor(private readonly deps: OwnerNoticesDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Says once, at start, where notices go. */
  announce(): void {
    const owners = this.deps.owners();
    if (owners.length) this.deps.log.info({ owners: owners.length }, `owner notices go to ${owners.length} owner(s) in their private chats and to this log`);
    else this.deps.log.warn('config.json has no owners: owner notices (full disk, rejected key, logout …) go to this log only');
  }

  raise(key: string, text: string, options: RaiseOptions = {}): void {
    const incident = this.known.get(key);
    if (incident?.active) {
      incident.text = text;
      return;
    }
    const linkDown = options.linkDown === true;
    this.deps.log.warn({ incident: key, ...(linkDown ? { linkDown: true } : {}) }, text);
    const next: Incident = incident ?? { active: true, text, told: false, since: this.now(), linkDown };
    next.active = true;
    next.text = text;
    next.told = false;
    next.since = this.now();
    next.recoveredAt = undefined;
    next.linkDown = linkDown;
    this.known.set(key, next);
    // Over the link that is down the notice cannot arrive: it waits for the recovery (and says it is late).
    if (!linkDown) this.tellRaise(key, next);
  }

  recover(key: string, text: string): void {
    const incident = this.known.get(key);
    if (!incident?.active) return;
    this.deps.log.info({ incident: key }, text);
    incident.active = false;
    incident.recoveredAt = this.now();
    if (incident.retry) clearTimeout(incident.retry);
    incident.retry = undefined;
    if (incident.linkDown) {
      incident.told = true;
      incident.lastToldAt = this.now();
      this.deliver(`⚠️ Late notice (from ${utcTime(incident.since)}, when WhatsApp could not carry it): ${incident.text}\n✅ ${text}`);
      return;
    }
    // Owners who never heard of the incident need not hear it is over.
    if (!incident.told) return;
    incident.lastToldAt = this.now();
    this.deliver(`✅ ${text}`);
  }

  incidents(): IncidentView[] {
    return [...this.known.entries()]
      .map(([key, i]) => ({ key, text: i.text, active: i.active, since: i.since, recoveredAt: i.recoveredAt, linkDown: i.linkDown }))
      .sort((a, b) => Number(b.active) - Number(a.active) || b.since - a.since);
  }

  /** No more messages (the bot is stopping); pending retries are dropped, the log keeps everything. */
  stop(): void {
    this.stopped = true;
    for (const incident of this.known.values()) if (incident.retry) clearTimeout(incident.retry);
  }

  private tellRaise(key: string, incident: Incident): void {
    if (incident.retry) clearTimeout(incident.retry);
    incident.retry = undefined;
    if (this.stopped || !incident.active || incident.told) return;
    const now = this.now();
    const limits = this.deps.limits();
    const hour = 3_600_000;
    while (this.toldTimes.length && this.toldTimes[0]! <= now - hour) this.toldTimes.shift();
    const keyFreeAt = incident.lastToldAt === undefined ? now : incident.lastToldAt + limits.minIntervalMinutes * 60_000;
    const capFreeAt = this.toldTimes.length < limits.maxPerHour ? now : this.toldTimes[this.toldTimes.length - limits.maxPerHour]! + hour;
    const at = Math.max(keyFreeAt, capFreeAt);
    if (at > now) {
      this.deps.log.info({ incident: key, inMinutes: Math.ceil((at - now) / 60_000) }, 'owner notice held back (too soon after the last one); it goes out later if the incident lasts');
      incident.retry = setTimeout(() => this.tellRaise(key, incident), at - now);
      incident.retry.unref?.();
      return;
    }
    incident.told = true;
    incident.lastToldAt = now;
    this.toldTimes.push(now);
    this.deliver(`⚠️ ${incident.text}`);
  }

  private deliver(text: string): void {
    if (this.stopped) return;
    for (const owner of this.deps.owners()) {
      // The send waits in the limiter (and for the connection); a failure is logged there and must not throw here.
      void this.deps.sendToOwner(owner, text).catch(() => undefined);
    }
  }
}
