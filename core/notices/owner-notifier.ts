import type { Logger } from '../log/logger.js';

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
  raise(key: string, text: string): void;
  recover(key: string, text: string): void;
}

/** The stand-in until the real service is wired: log only. */
export function logOnlyNotifier(log: Logger): OwnerNotifier {
  return {
    raise: (key, text) => log.warn({ incident: key }, text),
    recover: (key, text) => log.info({ incident: key }, text),
  };
}
