import type { Logger } from '../../api/logger.js';

/**
 * Tells the owners about an incident (a full disk, a rejected key, a logout …) and its recovery.
 * An incident has a key (`disk-low`, `key-rejected:second`, `logged-out`): `raise` is told once per incident,
 * `recover` once when it is over. Implementations pace and de-duplicate; callers may call as often as they see it.
 *
 * @example
 * host.notices.raise('disk-low', 'Free space of the data folder is below 200 MB.');
 * host.notices.recover('disk-low', 'Free space is back above 200 MB.');
 */
export interface OwnerNotifier {
  /**
   * `linkDown`: the incident is the chat link itself being down (a logout, a ban), so a chat message cannot arrive
   * now: it is logged and shown on the dashboard at once, and told to the owners, marked late, once the link is back.
   */
  raise(key: string, text: string, options?: RaiseOptions): void;
  recover(key: string, text: string): void;
  /** The incidents known since start (the dashboard shows them), newest first; absent where nothing is kept. */
  incidents?(): IncidentView[];
}

export interface RaiseOptions {
  linkDown?: boolean;
}

/** One incident as the dashboard shows it. */
export interface IncidentView {
  key: string;
  text: string;
  active: boolean;
  /** When it was raised (the current raise, or the last one). */
  since: number;
  /** When it was over (absent while active). */
  recoveredAt?: number;
  /** Raised as the chat link being down: the owners hear of it once the link is back. */
  linkDown: boolean;
}

/** The stand-in until the real service is wired: log only. */
export function logOnlyNotifier(log: Logger): OwnerNotifier {
  return {
    raise: (key, text, options) => log.warn({ incident: key, ...(options?.linkDown ? { linkDown: true } : {}) }, text),
    recover: (key, text) => log.info({ incident: key }, text),
  };
}
