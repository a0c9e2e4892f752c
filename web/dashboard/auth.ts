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
  /** Wrong tokens one address may send within `windowMs` before its attempts are slowed. */
  freePerAddress: number;
  /** Wrong tokens all addresses together may send within `windowMs` before every attempt is slowed. */
  freeGlobal: number;
  windowMs: number;
  /** The first delay once over a limit; it doubles with each further wrong token. */
  baseDelayMs: number;
  /** The longest any attempt waits, the right token included: slowed, never locked out. */
  maxDelayMs: number;
  /** Attempts waiting at once (all addresses together); more are answered 429 at once. */
  maxPending: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = { freePerAddress: 3, freeGlobal: 10, windowMs: 15 * 60_000, baseDelayMs: 1000, maxDelayMs: 30_000, maxPending: 8 };

export type Admission = { admitted: true; waitedMs: number } | { admitted: false; retryAfterMs: number };

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Slows dashboard logins after wrong tokens, per address and for all addresses together (so rotating through
 * 127.0.0.x gains nothing): past the free failures every attempt waits before its token is even compared, the wait
 * doubling with each wrong token up to `maxDelayMs`. At most `maxPending` attempts wait at once, which caps the guess
 * rate of any number of addresses. The right token is never refused for long: it waits at most `maxDelayMs`, so no
 * local process can lock the owner out. A right token clears its address's failures and the global count.
 *
 * @example
 * const admission = await limiter.admit(ip);
 * if (!admission.admitted) return tooMany(admission.retryAfterMs);
 * try { if (tokenMatches(given, token)) limiter.succeed(ip); else limiter.fail(ip); } finally { limiter.release(); }
 */
export class LoginLimiter {
  private readonly byAddress = new Map<string, number[]>();
  private global: number[] = [];
  private pending = 0;

  constructor(
    readonly limits: LoginLimits = DEFAULT_LOGIN_LIMITS,
    private readonly now: () => number = Date.now,
    private readonly sleep: (ms: number) => Promise<void> = sleepFor,
  ) {}

  private recent(times: number[] | undefined): number[] {
    const since = this.now() - this.limits.windowMs;
    return (times ?? []).filter((t) => t > since);
  }

  private delayFor(excess: number): number {
    if (excess <= 0) return 0;
    return Math.min(this.limits.maxDelayMs, this.limits.baseDelayMs * 2 ** Math.min(30, excess - 1));
  }

  /** How long the next attempt from this address waits before its token is compared. */
  delayMs(address: string): number {
    const own = this.recent(this.byAddress.get(address)).length - this.limits.freePerAddress;
    const all = this.recent(this.global).length - this.limits.freeGlobal;
    return this.delayFor(Math.max(own, all));
  }

  /** Wrong tokens in the window: from this address, and from all addresses together. */
  failures(address: string): { address: number; global: number } {
    return { address: this.recent(this.byAddress.get(address)).length, global: this.recent(this.global).length };
  }

  /** Takes a waiting slot and waits the current delay; refused at once when every slot is taken. Pair with release(). */
  async admit(address: string): Promise<Admission> {
    const delay = this.delayMs(address);
    if (this.pending >= this.limits.maxPending) return { admitted: false, retryAfterMs: Math.max(1000, delay) };
    this.pending++;
    try {
      if (delay > 0) await this.sleep(delay);
    } catch (err) {
      this.pending--;
      throw err;
    }
    return { admitted: true, waitedMs: delay };
  }

  /** Frees the slot taken by admit(). */
  release(): void {
    this.pending = Math.max(0, this.pending - 1);
  }

  /** Records a wrong token; returns the counts and the wait of this address's next attempt. */
  fail(address: string): { failures: number; globalFailures: number; nextDelayMs: number } {
    const time = this.now();
    const own = this.recent(this.byAddress.get(address));
    own.push(time);
    this.byAddress.set(address, own);
    this.global = this.recent(this.global).slice(-10_000);
    this.global.push(time);
    if (this.byAddress.size > 1000) for (const [key, times] of this.byAddress) if (!this.recent(times).length) this.byAddress.delete(key);
    return { failures: own.length, globalFailures: this.global.length, nextDelayMs: this.delayMs(address) };
  }

  /** The right token: the owner is in, so the slowing stops. */
  succeed(address: string): void {
    this.byAddress.delete(address);
    this.global = [];
  }
}
