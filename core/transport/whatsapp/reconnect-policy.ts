import { DisconnectReason } from '@whiskeysockets/baileys';

/** What to do after the WhatsApp connection closed. */
export type ReconnectDecision =
  | { action: 'restart-now'; reason: string }
  | { action: 'logged-out'; reason: string }
  | { action: 'backoff'; delayMs: number; reason: string; warning?: string };

export interface BackoffSettings {
  /** First delay of an ordinary close. */
  baseMs: number;
  /** Longest delay of an ordinary close. */
  maxMs: number;
  /** First delay after "connection replaced" (another instance uses the session). */
  replacedBaseMs: number;
  /** Longest delay after "connection replaced". */
  replacedMaxMs: number;
}

export const DEFAULT_BACKOFF: BackoffSettings = { baseMs: 2_000, maxMs: 5 * 60_000, replacedBaseMs: 60_000, replacedMaxMs: 30 * 60_000 };

/** Exponential delay for the n-th consecutive failure (0-based), with "equal jitter": half fixed, half random. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 30));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}

/** A readable name of a Baileys close code, for logs and the status page. */
export function describeClose(statusCode: number | undefined): string {
  switch (statusCode) {
    case DisconnectReason.restartRequired:
      return 'restart required (515)';
    case DisconnectReason.loggedOut:
      return 'logged out (401)';
    case DisconnectReason.connectionReplaced:
      return 'connection replaced (440)';
    case DisconnectReason.connectionClosed:
      return 'connection closed (428)';
    case DisconnectReason.connectionLost:
      return 'connection lost or timed out (408)';
    case DisconnectReason.badSession:
      return 'bad session (500)';
    case DisconnectReason.multideviceMismatch:
      return 'multi-device mismatch (411)';
    case DisconnectReason.forbidden:
      return 'forbidden (403)';
    case DisconnectReason.unavailableService:
      return 'service unavailable (503)';
    case undefined:
      return 'network error';
    default:
      return `closed with code ${statusCode}`;
  }
}

/**
 * Decides how to reconnect after a close. `attempt` counts consecutive failed connections (reset when one opens).
 * 515 (normal right after pairing) reconnects at once; 401 means the phone removed this device; 440 means another
 * process uses the same session, so we back off for long instead of fighting it; everything else backs off
 * exponentially with jitter. Nothing here ever gives up.
 *
 * @example decideReconnect(515, 0) // { action: 'restart-now', reason: 'restart required (515)' }
 */
export function decideReconnect(statusCode: number | undefined, attempt: number, settings: BackoffSettings = DEFAULT_BACKOFF, random: () => number = Math.random): ReconnectDecision {
  const reason = describeClose(statusCode);
  if (statusCode === DisconnectReason.restartRequired) return { action: 'restart-now', reason };
  if (statusCode === DisconnectReason.loggedOut) return { action: 'logged-out', reason };
  if (statusCode === DisconnectReason.connectionReplaced) {
    return {
      action: 'backoff',
      delayMs: backoffDelay(attempt, settings.replacedBaseMs, settings.replacedMaxMs, random),
      reason,
      warning: 'another instance is using this WhatsApp session (connection replaced): stop the other instance; backing off instead of fighting over the session',
    };
  }
  return { action: 'backoff', delayMs: backoffDelay(attempt, settings.baseMs, settings.maxMs, random), reason };
}
