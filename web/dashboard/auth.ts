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
 * What lives as long as a session (the live streams) watches it and is told when it ends: logout, expiry (idle or
 * absolute, checked every second while something watches) or eviction by a newer session.
 *
 * @example const s = sessions.create(); sessions.get(s.id)?.csrf; const unwatch = sessions.watch(s.id, () => stream.end());
 */
export class SessionStore {
  private readonly sessions = new Map<string, DashboardSession>();
  private readonly watchers = new Map<string, Set<() => void>>();
  private sweeper: NodeJS.Timeout | undefined;
  constructor(
    readonly limits: SessionLimits = DEFAULT_SESSION_LIMITS,
    private readonly now: () => number = Date.now,
    private readonly sweepMs = 1000,
  ) {}

  create(): DashboardSession {
    const time = this.now();
    const session = { id: randomSecret(), csrf: randomSecret(), createdAt: time, lastSeenAt: time };
    this.sessions.set(session.id, session);
    while (this.sessions.size > this.limits.max) this.end(this.sessions.keys().next().value as string);
    return session;
  }

  /** The live session with this id (touching it), or undefined when unknown or expired. */
  get(id: string | undefined): DashboardSession | undefined {
    const session = this.peek(id);
    if (session) session.lastSeenAt = this.now();
    return session;
  }

  /** The live session with this id without counting as use (a live stream is not the owner at work). */
  peek(id: string | undefined): DashboardSession | undefined {
    if (!id) return undefined;
    const session = this.sessions.get(id);
    if (!session) return undefined;
    const time = this.now();
    if (time - session.lastSeenAt > this.limits.idleMs || time - session.createdAt > this.limits.absoluteMs) {
      this.end(id);
      return undefined;
    }
    return session;
  }

  delete(id: string | undefined): void {
    if (id) this.end(id);
  }

  /**
   * Calls `onEnd` once when the session ends (at once when it is already gone). Returns the function that stops
   * watching; call it when what watches ends first.
   */
  watch(id: string, onEnd: () => void): () => void {
    if (!this.peek(id)) {
      onEnd();
      return () => undefined;
    }
    let set = this.watchers.get(id);
    if (!set) this.watchers.set(id, (set = new Set()));
    set.add(onEnd);
    this.sweeper ??= setInterval(() => {
      for (const watched of [...this.watchers.keys()]) this.peek(watched);
    }, this.sweepMs).unref();
    return () => {
      set.delete(onEnd);
      if (!set.size && this.watchers.get(id) === set) this.watchers.delete(id);
      this.stopSweeping();
    };
  }

  private end(id: string): void {
    this.sessions.delete(id);
    const set = this.watchers.get(id);
    if (!set) return;
    this.watchers.delete(id);
    this.stopSweeping();
    for (const onEnd of set) onEnd();
  }

  private stopSweeping(): void {
    if (this.watchers.size || !this.sweeper) return;
    clearInterval(this.sweeper);
    this.sweeper = undefined;
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
  /** The longest a wrong token's answer waits. */
  maxDelayMs: number;
  /** Wrong tokens waiting for their answer at once (all addresses together); more are answered 429 at once. */
  maxPending: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = { freePerAddress: 3, freeGlobal: 10, windowMs: 15 * 60_000, baseDelayMs: 1000, maxDelayMs: 30_000, maxPending: 8 };

export type Admission = { admitted: true; waitedMs: number } | { admitted: false; retryAfterMs: number };

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Slows wrong dashboard tokens, per address and for all addresses together (so rotating through 127.0.0.x gains
 * nothing): past the free failures the answer to a wrong token waits, the wait doubling with each wrong token up to
 * `maxDelayMs`, and at most `maxPending` of them wait at once (more are answered 429 at once). The token is compared
 * first, and the right one never enters the limiter: it gets in at once, however many wrong ones a local process
 * sends, and clears its address's failures and the global count. What keeps guessing out is the token's strength
 * (64 hex characters; a shorter one is warned about at start).
 *
 * @example
 * if (tokenMatches(given, token)) { limiter.succeed(ip); return logIn(); }
 * const admission = await limiter.admit(ip);
 * limiter.fail(ip);
 * if (!admission.admitted) return tooMany(admission.retryAfterMs);
 * try { wrongToken(); } finally { limiter.release(); }
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

  /** How long the answer to the next wrong token from this address waits. */
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

  /** The right token (never slowed): the owner is in, so the slowing stops. */
  succeed(address: string): void {
    this.byAddress.delete(address);
    this.global = [];
  }
}

export interface FailedLoginSummary {
  /** Wrong tokens answered 401 (after their wait). */
  wrong: number;
  /** Wrong tokens answered 429 at once (too many were waiting). */
  refused: number;
  /** The addresses that sent the most (at most 5), with their counts. */
  addresses: Record<string, number>;
  periodS: number;
}

/**
 * Logs failed dashboard logins without letting a flood of them flood the log: the first wrong token after a quiet
 * period is logged at once (with its address), every further one is only counted, and one summary line per
 * `periodMs` says how many came (and from where) while they keep coming. A million wrong tokens cost one line a
 * minute.
 *
 * @example const failed = new FailedLogins((line, summary) => log.warn(summary, line)); failed.record(ip, 'wrong');
 */
export class FailedLogins {
  private counts: { wrong: number; refused: number; byAddress: Map<string, number> } | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly write: (line: string, detail: Record<string, unknown>) => void,
    readonly periodMs = 60_000,
  ) {}

  record(address: string, outcome: 'wrong' | 'refused'): void {
    if (!this.timer) {
      this.write('dashboard login failed: wrong token', { ip: address, outcome });
      this.counts = { wrong: 0, refused: 0, byAddress: new Map() };
      this.schedule();
      return;
    }
    const counts = this.counts!;
    counts[outcome]++;
    // Bounded however many addresses a flood rotates through: only the first 1,000 are told apart.
    if (counts.byAddress.has(address) || counts.byAddress.size < 1000) counts.byAddress.set(address, (counts.byAddress.get(address) ?? 0) + 1);
  }

  private schedule(): void {
    this.timer = setTimeout(() => this.summarise(), this.periodMs);
    this.timer.unref();
  }

  /** Writes the period's summary; a period without failures ends the summaries until the next one. */
  private summarise(): void {
    const counts = this.counts!;
    if (!counts.wrong && !counts.refused) {
      this.timer = undefined;
      this.counts = undefined;
      return;
    }
    const top = [...counts.byAddress].sort((a, b) => b[1] - a[1]).slice(0, 5);
    const summary: FailedLoginSummary = { wrong: counts.wrong, refused: counts.refused, addresses: Object.fromEntries(top), periodS: this.periodMs / 1000 };
    this.write(`dashboard login failures: ${counts.wrong + counts.refused} more wrong token(s) in the last ${this.periodMs / 1000} s`, { ...summary });
    this.counts = { wrong: 0, refused: 0, byAddress: new Map() };
    this.schedule();
  }
}
