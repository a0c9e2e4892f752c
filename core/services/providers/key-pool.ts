import { isSdkError, knowSdkErrors, type SdkError } from './sdk-errors.js';
import type { CapabilityStatus } from '../../api/capability-status.js';
import type { Logger } from '../../api/logger.js';
import type { OwnerNotifier } from '../notices/owner-notifier.js';
import { nextUtcMidnight, resetDelayMs } from './reset-time.js';
import { KeysExhaustedError, ProviderDownError, RequestRejectedError } from '../../api/errors.js';

/** A rate-limited key without any reset hint rests this long. */
export const DEFAULT_PARK_MS = 60_000;

interface KeySlot {
  /** 1-based position, the only way a key is named in logs. */
  number: number;
  key: string;
  parkedUntil: number;
  /** Why it is parked: 'rate limit' or 'daily limit'. */
  parkedFor?: string;
  rejected: boolean;
}

type Verdict =
  | { kind: 'rejected'; summary: string }
  | { kind: 'parked'; until: number; reason: string; summary: string }
  | { kind: 'server'; summary: string }
  | { kind: 'unreachable'; summary: string }
  | { kind: 'request'; status: number; summary: string; providerMessage: string }
  | { kind: 'other' };

function bodyText(err: SdkError): string {
  const body = (err.error ?? {}) as { code?: unknown; type?: unknown; message?: unknown; error?: { code?: unknown; type?: unknown; message?: unknown } };
  const inner = body.error ?? body;
  return [inner.code, inner.type, inner.message, err.message].filter((v) => typeof v === 'string').join(' ');
}

const clock = (ms: number) => new Date(ms).toISOString().slice(11, 16) + ' UTC';

/** How a pool names its keys in logs and capability details; the default is the audio provider's. */
export interface KeyPoolWording {
  /** `audio` → "audio key #2", "2 of 3 audio key(s) usable". */
  label: string;
  /** The setting that holds the keys, named in the fix. */
  setting: string;
}

/** What owners are told when every key is used up or rejected, and when one works again (set by the capability's owner). */
export interface KeyPoolNotices {
  exhausted(detail: string): string;
  recovered: string;
}

/**
 * The core's one key pool (rotation and cooldowns): the audio provider's keys and their state, shared by every
 * user of those keys (transcription, reactions, the backup search and the chain's audio legs), so one key has one
 * health state. A request goes to the first key that is neither parked nor rejected;
 * a 429 or daily-limit answer parks that key until its reset (retry-after / x-ratelimit-reset-* / "try again in",
 * else the next UTC midnight for a daily limit) and the same request moves on to the next key at once; a 401/403
 * rejects the key until restart. Keys are named by number in logs, never by value.
 *
 * @example
 * const pool = new KeyPool(['k1', 'k2'], log);
 * const text = await pool.run('transcription', (key) => client(key).transcribe(file));
 */
export class KeyPool {
  private readonly slots: KeySlot[];
  /** Owners hear once when every key is used up or rejected, and once when a key works again. */
  notices: OwnerNotifier | undefined;
  /** The sentences they hear (the plugin owning the keys' capability words them for its users). */
  noticeText: KeyPoolNotices;
  private exhaustedTold = false;

  constructor(
    keys: readonly string[],
    private readonly log: Logger,
    // Read at each call, not captured: a test's fake clock (the kit's useClock) moves cooldowns too.
    private now: () => number = () => Date.now(),
    private readonly wording: KeyPoolWording = { label: 'audio', setting: 'AUDIO_API_KEYS' },
  ) {
    const label = wording.label;
    this.noticeText = { exhausted: (detail) => `Every ${label} key is unusable: ${detail}.`, recovered: `A ${label} key works again.` };
    this.slots = keys.map((key, i) => ({ number: i + 1, key, parkedUntil: 0, rejected: false }));
  }

  private get noticeKey(): string {
    return `${this.wording.label}-keys-exhausted`;
  }

  get size(): number {
    return this.slots.length;
  }

  private usable(): KeySlot[] {
    const now = this.now();
    return this.slots.filter((s) => !s.rejected && s.parkedUntil <= now);
  }

  /** Reads time from `now` instead (a test's clock, so rests can be watched ending without waiting). */
  useClock(now: () => number): void {
    this.now = now;
  }

  /** True when `key` is in the pool and neither parked nor rejected now (keys not in the pool: true). */
  isUsable(key: string): boolean {
    const slot = this.slots.find((s) => s.key === key);
    return !slot || (!slot.rejected && slot.parkedUntil <= this.now());
  }

  /**
   * Records a failure seen by another user of the same key (the provider chain's audio legs), so every user skips it:
   * `until` Infinity rejects it until restart, else parks it until then.
   */
  markFailed(key: string, until: number, reason: string): void {
    const slot = this.slots.find((s) => s.key === key);
    if (!slot) return;
    if (until === Infinity) slot.rejected = true;
    else if (until > slot.parkedUntil) {
      slot.parkedUntil = until;
      slot.parkedFor = reason;
    }
  }

  /** How many keys can be used right now. */
  usableCount(): number {
    return this.usable().length;
  }

  /** The pool's state as a capability: missing when every key is parked or rejected. Never shows a key. */
  status(): CapabilityStatus {
    const total = this.slots.length;
    if (!total) return { ok: false, notConfigured: true, detail: `no ${this.wording.label} key is configured (set ${this.wording.setting})`, counts: { usable: 0, parked: 0, rejected: 0 } };
    const usable = this.usable().length;
    const rejectedCount = this.slots.filter((s) => s.rejected).length;
    const counts = { usable, parked: total - usable - rejectedCount, rejected: rejectedCount };
    if (usable) return { ok: true, detail: `${usable} of ${total} ${this.wording.label} key(s) usable`, counts };
    const parked = this.slots.filter((s) => !s.rejected);
    const rejected = total - parked.length;
    // A rejected key is not "used up": waiting will not help, the owner must fix it.
    if (!parked.length) return { ok: false, detail: `${total === 1 ? `the ${this.wording.label} key was` : `all ${total} ${this.wording.label} keys were`} rejected by the provider (check ${this.wording.setting} in .env)`, counts };
    const parts: string[] = [];
    if (parked.length) {
      const until = Math.min(...parked.map((s) => s.parkedUntil));
      const daily = parked.every((s) => s.parkedFor === 'daily limit');
      parts.push(`${parked.length} ${daily ? 'reached the daily limit' : 'rate-limited'}, the first is free again at ${clock(until)}`);
    }
    if (rejected) parts.push(`${rejected} rejected by the provider`);
    return { ok: false, detail: `all ${total} ${this.wording.label} key(s) are used up (${parts.join('; ')})`, counts };
  }

  /** Classifies a failed call. */
  private verdict(err: unknown): Verdict {
    if (isSdkError(err, 'APIConnectionTimeoutError')) return { kind: 'unreachable', summary: 'timed out' };
    if (isSdkError(err, 'APIError') && err.status !== undefined) {
      const status = err.status;
      const text = bodyText(err);
      const lower = text.toLowerCase();
      const summary = `HTTP ${status}`;
      if (status === 401 || status === 403) return { kind: 'rejected', summary };
      const daily = status === 402 || /per day|daily|\b(rpd|tpd|asd)\b|insufficient_quota/.test(lower);
      if (status === 429 || status === 402) {
        const now = this.now();
        const delay = resetDelayMs(err.headers as Headers | undefined, text, now);
        const until = delay !== undefined ? now + delay : daily ? nextUtcMidnight(now) : now + DEFAULT_PARK_MS;
        return { kind: 'parked', until, reason: daily ? 'daily limit' : 'rate limit', summary };
      }
      if (status >= 500) return { kind: 'server', summary };
      const message = typeof (err.error as { error?: { message?: unknown } } | undefined)?.error?.message === 'string'
        ? String((err.error as { error: { message: string } }).error.message)
        : err.message;
      return { kind: 'request', status, summary, providerMessage: message.slice(0, 200) };
    }
    if (isSdkError(err, 'APIConnectionError') || (err as Error)?.name === 'AbortError') {
      const code = (err as { cause?: { code?: string } })?.cause?.code;
      return { kind: 'unreachable', summary: code ?? ((err as Error)?.name === 'AbortError' ? 'timed out' : 'connection failed') };
    }
    // Not an upstream failure (an answer without text, a bug): the caller decides.
    return { kind: 'other' };
  }

  /**
   * Runs `call` with the first usable key, moving the same request on to the next key after a limit, a rejected key
   * or a server error. `park: false` (auto reactions) leaves rate limits of other models out of the key's state.
   */
  async run<T>(purpose: string, call: (key: string) => Promise<T>, options: { park?: boolean } = {}): Promise<T> {
    const park = options.park ?? true;
    const tried = new Set<number>();
    let serverFailure: string | undefined;
    for (;;) {
      const slot = this.usable().find((s) => !tried.has(s.number));
      if (!slot) break;
      tried.add(slot.number);
      try {
        const result = await call(slot.key);
        if (this.exhaustedTold) {
          this.exhaustedTold = false;
          this.notices?.recover(this.noticeKey, this.noticeText.recovered);
        }
        return result;
      } catch (err) {
        // The SDK's classes to tell its errors by, if nothing loaded them yet (a plugin's own client failed first).
        await knowSdkErrors();
        const v = this.verdict(err);
        const where = { purpose, key: `#${slot.number} of ${this.slots.length}` };
        switch (v.kind) {
          case 'rejected':
            slot.rejected = true;
            this.log.warn({ ...where, status: v.summary }, `${this.wording.label} key #${slot.number} was rejected (${v.summary}); it is skipped until restart`);
            continue;
          case 'parked':
            if (!park) throw new KeysExhaustedError(`the ${this.wording.label} provider is rate-limiting ${purpose}`);
            slot.parkedUntil = v.until;
            slot.parkedFor = v.reason;
            this.log.warn({ ...where, status: v.summary, until: new Date(v.until).toISOString() }, `${this.wording.label} key #${slot.number} hit its ${v.reason}; parked until ${new Date(v.until).toISOString()}, trying the next key`);
            continue;
          case 'server':
            serverFailure = v.summary;
            this.log.warn({ ...where, status: v.summary }, `${this.wording.label} provider failed (${v.summary}) with key #${slot.number}; trying the next key`);
            continue;
          case 'unreachable':
            this.log.warn({ ...where, reason: v.summary }, `${this.wording.label} provider unreachable (${v.summary})`);
            throw new ProviderDownError(`the ${this.wording.label} provider did not answer (${v.summary})`);
          case 'request':
            this.log.warn({ ...where, status: v.summary }, `${this.wording.label} provider refused the ${purpose} request (${v.summary})`);
            throw new RequestRejectedError(`the ${this.wording.label} provider refused it (${v.summary})`, v.status, v.providerMessage);
          case 'other':
            throw err;
        }
      }
    }
    if (serverFailure && this.usable().length) throw new ProviderDownError(`the ${this.wording.label} provider is failing (${serverFailure})`);
    const detail = this.status().detail;
    if (this.slots.length && !this.exhaustedTold) {
      this.exhaustedTold = true;
      this.notices?.raise(this.noticeKey, this.noticeText.exhausted(detail));
    }
    throw new KeysExhaustedError(detail);
  }
}
