import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import type { CapabilityStatus, Logger, OwnerNotifier } from '../../core/index.js';
import { nextUtcMidnight, resetDelayMs } from './reset-time.js';

/** A rate-limited key without any reset hint rests this long. */
export const DEFAULT_PARK_MS = 60_000;

/** Thrown when no key can serve a request now; `message` is safe to show a user. */
export class AudioKeysExhaustedError extends Error {}

/** Thrown when the provider cannot be reached or keeps failing (not a key problem); safe to show a user. */
export class AudioProviderDownError extends Error {}

/** Thrown when the provider refused the request itself (bad or too large file): another key would not help. */
export class AudioRequestRejectedError extends Error {
  constructor(message: string, readonly status: number, readonly providerMessage: string) {
    super(message);
  }
}

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

function bodyText(err: APIError): string {
  const body = (err.error ?? {}) as { code?: unknown; type?: unknown; message?: unknown; error?: { code?: unknown; type?: unknown; message?: unknown } };
  const inner = body.error ?? body;
  return [inner.code, inner.type, inner.message, err.message].filter((v) => typeof v === 'string').join(' ');
}

const clock = (ms: number) => new Date(ms).toISOString().slice(11, 16) + ' UTC';

/**
 * The audio provider's keys and their state. A request goes to the first key that is neither parked nor rejected;
 * a 429 or daily-limit answer parks that key until its reset (retry-after / x-ratelimit-reset-* / "try again in",
 * else the next UTC midnight for a daily limit) and the same request moves on to the next key at once; a 401/403
 * rejects the key until restart. Keys are named by number in logs, never by value.
 *
 * @example
 * const pool = new AudioKeyPool(['k1', 'k2'], log);
 * const text = await pool.run('transcription', (key) => client(key).transcribe(file));
 */
export class AudioKeyPool {
  private readonly slots: KeySlot[];
  /** Owners hear once when every key is used up or rejected, and once when a key works again. */
  notices: OwnerNotifier | undefined;
  private exhaustedTold = false;

  constructor(keys: readonly string[], private readonly log: Logger, private readonly now: () => number = Date.now) {
    this.slots = keys.map((key, i) => ({ number: i + 1, key, parkedUntil: 0, rejected: false }));
  }

  get size(): number {
    return this.slots.length;
  }

  private usable(): KeySlot[] {
    const now = this.now();
    return this.slots.filter((s) => !s.rejected && s.parkedUntil <= now);
  }

  /** How many keys can be used right now. */
  usableCount(): number {
    return this.usable().length;
  }

  /** The pool's state as a capability: missing when every key is parked or rejected. Never shows a key. */
  status(): CapabilityStatus {
    const total = this.slots.length;
    if (!total) return { ok: false, detail: 'no audio key is configured (set AUDIO_API_KEYS)', counts: { usable: 0, parked: 0, rejected: 0 } };
    const usable = this.usable().length;
    const rejectedCount = this.slots.filter((s) => s.rejected).length;
    const counts = { usable, parked: total - usable - rejectedCount, rejected: rejectedCount };
    if (usable) return { ok: true, detail: `${usable} of ${total} audio key(s) usable`, counts };
    const parked = this.slots.filter((s) => !s.rejected);
    const rejected = total - parked.length;
    // A rejected key is not "used up": waiting will not help, the owner must fix it.
    if (!parked.length) return { ok: false, detail: `${total === 1 ? 'the audio key was' : `all ${total} audio keys were`} rejected by the provider (check AUDIO_API_KEYS in .env)`, counts };
    const parts: string[] = [];
    if (parked.length) {
      const until = Math.min(...parked.map((s) => s.parkedUntil));
      const daily = parked.every((s) => s.parkedFor === 'daily limit');
      parts.push(`${parked.length} ${daily ? 'reached the daily limit' : 'rate-limited'}, the first is free again at ${clock(until)}`);
    }
    if (rejected) parts.push(`${rejected} rejected by the provider`);
    return { ok: false, detail: `all ${total} audio key(s) are used up (${parts.join('; ')})`, counts };
  }

  /** Classifies a failed call. */
  private verdict(err: unknown): Verdict {
    if (err instanceof APIConnectionTimeoutError) return { kind: 'unreachable', summary: 'timed out' };
    if (err instanceof APIError && err.status !== undefined) {
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
    if (err instanceof APIConnectionError || (err as Error)?.name === 'AbortError') {
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
          this.notices?.recover('audio-keys-exhausted', 'An audio key works again: voice notes are heard again.');
        }
        return result;
      } catch (err) {
        const v = this.verdict(err);
        const where = { purpose, key: `#${slot.number} of ${this.slots.length}` };
        switch (v.kind) {
          case 'rejected':
            slot.rejected = true;
            this.log.warn({ ...where, status: v.summary }, `audio key #${slot.number} was rejected (${v.summary}); it is skipped until restart`);
            continue;
          case 'parked':
            if (!park) throw new AudioKeysExhaustedError(`the audio provider is rate-limiting ${purpose}`);
            slot.parkedUntil = v.until;
            slot.parkedFor = v.reason;
            this.log.warn({ ...where, status: v.summary, until: new Date(v.until).toISOString() }, `audio key #${slot.number} hit its ${v.reason}; parked until ${new Date(v.until).toISOString()}, trying the next key`);
            continue;
          case 'server':
            serverFailure = v.summary;
            this.log.warn({ ...where, status: v.summary }, `audio provider failed (${v.summary}) with key #${slot.number}; trying the next key`);
            continue;
          case 'unreachable':
            this.log.warn({ ...where, reason: v.summary }, `audio provider unreachable (${v.summary})`);
            throw new AudioProviderDownError(`the audio provider did not answer (${v.summary})`);
          case 'request':
            this.log.warn({ ...where, status: v.summary }, `audio provider refused the ${purpose} request (${v.summary})`);
            throw new AudioRequestRejectedError(`the audio provider refused it (${v.summary})`, v.status, v.providerMessage);
          case 'other':
            throw err;
        }
      }
    }
    if (serverFailure && this.usable().length) throw new AudioProviderDownError(`the audio provider is failing (${serverFailure})`);
    const detail = this.status().detail;
    if (this.slots.length && !this.exhaustedTold) {
      this.exhaustedTold = true;
      this.notices?.raise('audio-keys-exhausted', `The bot cannot hear voice notes: ${detail}.`);
    }
    throw new AudioKeysExhaustedError(detail);
  }
}
