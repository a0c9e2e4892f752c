import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * True when `given` equals `expected`, compared in constant time. Both sides are hashed first so neither the
 * length nor a common prefix of the token leaks through timing.
 *
 * @example tokenMatches(form.get('token') ?? '', settings.configToken)
 */
export function tokenMatches(given: string, expected: string): boolean {
  if (!expected) return false;
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/**
 * True when two random tokens (CSRF, session ids) are equal, in constant time.
 * @example sameSecret(form.get('_csrf'), session.csrf)
 */
export function sameSecret(a: string | null | undefined, b: string): boolean {
  if (!a) return false;
  return tokenMatches(a, b);
}

/** A random url-safe secret (session ids, CSRF tokens, cookie keys). */
export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export interface DashboardSession {
  id: string;
  /** The CSRF token every form of this session carries. */
  csrf: string;
  createdAt: number;
  lastSeenAt: number;
}

export interface SessionLimits {
  /** A session unused this long is gone. */
  idleMs: number;
  /** A session is gone this long after login, used or not. */
  absoluteMs: number;
  /** At most this many live sessions; the oldest is dropped first. */
  max: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = { idleMs: 60 * 60_000, absoluteMs: 8 * 60 * 60_000, max: 50 };

/**
 * Dashboard sessions, kept in memory only: a restart logs everyone out (the cookie keys are per process too).
 *
 * @example const s = sessions.create(); sessions.get(s.id)?.csrf
 */
export class SessionStore {
  private readonly sessions = new Map<string, DashboardSession>();
  constructor(readonly limits: SessionLimits = DEFAULT_SESSION_LIMITS, private readonly now: () => number = Date.now) {}

  create(): DashboardSession {
    const time = this.now();
    const session = { id: randomSecret(), csrf: randomSecret(), createdAt: time, lastSeenAt: time };
    this.sessions.set(session.id, session);
    while (this.sessions.size > this.limits.max) this.sessions.delete(this.sessions.keys().next().value as string);
    return session;
  }

  /** The live session with this id (touching it), or undefined when unknown or expired. */
  get(id: string | undefined): DashboardSession | undefined {
    if (!id) return undefined;
    const session = this.sessions.get(id);
    if (!session) return undefined;
    const time = this.now();
    if (time - session.lastSeenAt > this.limits.idleMs || time - session.createdAt > this.limits.absoluteMs) {
      this.sessions.delete(id);
      return undefined;
    }
    session.lastSeenAt = time;
    return session;
  }

  delete(id: string | undefined): void {
    if (id) this.sessions.delete(id);
  }
}

export interface LoginLimits {
  /** Failed logins allowed per address within `windowMs` before it is locked out. */
  maxFailures: number;
  windowMs: number;
  /** How long a locked-out address waits. */
  lockMs: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = { maxFailures: 5, windowMs: 15 * 60_000, lockMs: 15 * 60_000 };

interface Attempts {
  failures: number;
  firstAt: number;
  lockedUntil: number;
}

/**
 * Rate limit of failed logins per client address: after `maxFailures` failures within `windowMs` the address is
 * locked out for `lockMs` (even the right token is refused meanwhile, so guessing gains nothing).
 *
 * @example if (limiter.retryAfterMs(ip) > 0) return tooMany(); if (!ok) limiter.fail(ip); else limiter.succeed(ip);
 */
export class LoginLimiter {
  private readonly attempts = new Map<string, Attempts>();
  constructor(readonly limits: LoginLimits = DEFAULT_LOGIN_LIMITS, private readonly now: () => number = Date.now) {}

  /** Milliseconds this address must still wait (0 when it may try). */
  retryAfterMs(address: string): number {
    const entry = this.attempts.get(address);
    if (!entry) return 0;
    return Math.max(0, entry.lockedUntil - this.now());
  }

  /** Records a failure; returns the failures in the window and whether the address is now locked out. */
  fail(address: string): { failures: number; locked: boolean } {
    const time = this.now();
    this.prune(time);
    let entry = this.attempts.get(address);
    if (!entry || time - entry.firstAt > this.limits.windowMs) {
      entry = { failures: 0, firstAt: time, lockedUntil: 0 };
      this.attempts.set(address, entry);
    }
    entry.failures++;
    if (entry.failures >= this.limits.maxFailures) entry.lockedUntil = time + this.limits.lockMs;
    return { failures: entry.failures, locked: entry.lockedUntil > time };
  }

  succeed(address: string): void {
    this.attempts.delete(address);
  }

  /** Forgets stale entries so a flood of addresses cannot grow the map without bound. */
  private prune(time: number): void {
    if (this.attempts.size < 1000) return;
    for (const [address, entry] of this.attempts) {
      if (entry.lockedUntil <= time && time - entry.firstAt > this.limits.windowMs) this.attempts.delete(address);
    }
  }
}
