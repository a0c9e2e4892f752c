import { DisconnectReason } from '@whiskeysockets/baileys';

/** What to do after the WhatsApp connection closed. */
export type ReconnectDecision =
  | { action: 'restart-now'; reason: string }
  | { action: 'logged-out'; reason: string }
  /** 405: WhatsApp retired the Web version we announced; fetch the current one, then reconnect after the delay. */
  | { action: 'refetch-version'; delayMs: number; reason: string; warning: string }
  /** 403: the account is banned or forbidden from using WhatsApp Web; retrying cannot help and may make it worse. */
  | { action: 'stop'; reason: string; warning: string }
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
  /** Length of the window in which connection attempts are counted. */
  windowMs: number;
  /** Most connection attempts (restarts included) started within one window; more wait for the window to move on. */
  maxPerWindow: number;
  /** Most immediate 515 restarts within one window; more are backed off like other failures. */
  maxRestartsPerWindow: number;
  /** A connection must stay open this long before the failure counter starts over. */
  stableMs: number;
}

export const DEFAULT_BACKOFF: BackoffSettings = {
  baseMs: 2_000,
  maxMs: 5 * 60_000,
  replacedBaseMs: 60_000,
  replacedMaxMs: 30 * 60_000,
  windowMs: 10 * 60_000,
  maxPerWindow: 10,
  maxRestartsPerWindow: 3,
  stableMs: 60_000,
};

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
    case 405:
      return 'client version too old (405)';
    case undefined:
      return 'network error';
    default:
      return `closed with code ${statusCode}`;
  }
}

/**
 * Decides how to reconnect after a close. `attempt` counts consecutive failed connections (reset only once a
 * connection stayed open for a while). 515 (normal right after pairing) reconnects at once; 401 means the phone
 * removed this device; 403 means WhatsApp refuses the account (banned): stop; 405 means the announced Web version
 * is too old: refetch it; 440 means another process uses the same session, so we back off for long instead of
 * fighting it; everything else (500 bad session included) backs off exponentially with jitter.
 *
 * @example decideReconnect(515, 0) // { action: 'restart-now', reason: 'restart required (515)' }
 */
export function decideReconnect(statusCode: number | undefined, attempt: number, settings: BackoffSettings = DEFAULT_BACKOFF, random: () => number = Math.random): ReconnectDecision {
  const reason = describeClose(statusCode);
  if (statusCode === DisconnectReason.restartRequired) return { action: 'restart-now', reason };
  if (statusCode === DisconnectReason.loggedOut) return { action: 'logged-out', reason };
  if (statusCode === DisconnectReason.forbidden) {
    return { action: 'stop', reason, warning: 'WhatsApp refused this account (403 forbidden: banned or blocked from WhatsApp Web); not reconnecting, since retrying cannot help. Check the phone, then restart the bot' };
  }
  if (statusCode === 405) {
    return {
      action: 'refetch-version',
      delayMs: backoffDelay(attempt, settings.baseMs, settings.maxMs, random),
      reason,
      warning: 'WhatsApp refused the announced WhatsApp Web version as too old (405): fetching the current version and reconnecting',
    };
  }
  if (statusCode === DisconnectReason.connectionReplaced) {
    return {
      action: 'backoff',
      delayMs: backoffDelay(attempt, settings.replacedBaseMs, settings.replacedMaxMs, random),
      reason,
      warning: 'another instance is using this WhatsApp session (connection replaced): stop the other instance; backing off instead of fighting over the session',
    };
  }
  if (statusCode === DisconnectReason.badSession) {
    return {
      action: 'backoff',
      delayMs: backoffDelay(attempt, settings.baseMs, settings.maxMs, random),
      reason,
      warning: 'WhatsApp reports a bad session (500): the stored session keys do not match; retrying, and if it persists unlink the device on the phone, delete data/session_auth and link again',
    };
  }
  return { action: 'backoff', delayMs: backoffDelay(attempt, settings.baseMs, settings.maxMs, random), reason };
}

/**
 * Counts connection attempts in a sliding window so no close code, however it arrives, can make the transport
 * loop faster than `maxPerWindow` attempts per `windowMs`.
 *
 * @example const w = new AttemptWindow(10 * 60_000, 10); w.record(); w.waitMs() // 0 until the 10th attempt
 */
export class AttemptWindow {
  private readonly times: number[] = [];
  constructor(private readonly windowMs: number, private readonly max: number, private readonly now: () => number = () => Date.now()) {}
  private prune(): void {
    const since = this.now() - this.windowMs;
    while (this.times.length && this.times[0] <= since) this.times.shift();
  }
  record(): void {
    this.prune();
    this.times.push(this.now());
  }
  count(): number {
    this.prune();
    return this.times.length;
  }
  /** How long to wait before the next attempt fits in the window (0: now). */
  waitMs(): number {
    this.prune();
    if (this.times.length < this.max) return 0;
    return this.times[this.times.length - this.max] + this.windowMs - this.now();
  }
}
