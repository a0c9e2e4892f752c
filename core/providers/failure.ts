import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';

/** How a failed upstream call is classified, and how long the leg then rests. */
export interface Failure {
  kind: 'auth' | 'quota' | 'rate-limit' | 'server' | 'timeout' | 'network' | 'context-length' | 'bad-request' | 'bad-answer';
  status?: number;
  /** Cooldown in ms; Infinity = until restart. */
  cooldownMs: number;
  /** Short, key-free text for the log. Never shown to users. */
  summary: string;
}

export const COOLDOWN = {
  rateLimitDefault: 30_000,
  rateLimitMax: 60 * 60_000,
  quota: 6 * 60 * 60_000,
  server: 30_000,
  network: 30_000,
  badAnswer: 10_000,
};

/**
 * Vision goes through @anthropic-ai/sdk, whose errors have the same class names and the same status/headers/body
 * shape as openai's. They are recognised by shape, not `instanceof`, so the core does not load that SDK at start
 * (it costs ~200 ms and ~10 MB; only the vision plugin needs it, and loads it on first use).
 */
function sdkErrorName(err: unknown): string | undefined {
  let proto = err && typeof err === 'object' ? Object.getPrototypeOf(err) : undefined;
  // Walk up the class chain: RateLimitError → APIError, APIConnectionTimeoutError → APIConnectionError.
  for (let depth = 0; proto && depth < 6; depth++, proto = Object.getPrototypeOf(proto)) {
    const name = (proto.constructor as { name?: string } | undefined)?.name;
    if (name === 'APIConnectionTimeoutError' || name === 'APIConnectionError' || name === 'APIError') return name;
  }
  return undefined;
}

function isTimeoutError(err: unknown): boolean {
  return err instanceof APIConnectionTimeoutError || sdkErrorName(err) === 'APIConnectionTimeoutError';
}

function isConnectionError(err: unknown): boolean {
  return err instanceof APIConnectionError || sdkErrorName(err) === 'APIConnectionError';
}

function asApiError(err: unknown): { status: number; headers: unknown; error?: unknown; message?: string } | undefined {
  if (err instanceof APIError && err.status !== undefined) return err as APIError & { status: number };
  const shaped = err as { status?: unknown; headers?: unknown };
  return sdkErrorName(err) === 'APIError' && typeof shaped.status === 'number' ? (err as { status: number; headers: unknown }) : undefined;
}

/** Thrown by a leg whose answer was unusable (no content, malformed JSON). */
export class BadAnswerError extends Error {}

function headerOf(headers: unknown, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | undefined>;
  return record[name] ?? record[name.toLowerCase()];
}

/** Reads retry-after (seconds or HTTP date) and retry-after-ms; undefined when absent or unreadable. */
export function retryAfterMs(headers: unknown, now = Date.now()): number | undefined {
  const ms = Number(headerOf(headers, 'retry-after-ms'));
  if (Number.isFinite(ms) && ms > 0) return ms;
  const raw = headerOf(headers, 'retry-after');
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(raw);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

function errorBody(err: { error?: unknown; message?: string }): { code?: string; type?: string; message: string } {
  const body = (err.error ?? {}) as { code?: unknown; type?: unknown; message?: unknown; error?: { code?: unknown; type?: unknown; message?: unknown } };
  const inner = body.error ?? body;
  return {
    code: typeof inner.code === 'string' ? inner.code : undefined,
    type: typeof inner.type === 'string' ? inner.type : undefined,
    message: typeof inner.message === 'string' ? inner.message : err.message ?? '',
  };
}

/**
 * Classifies an error from the openai or Anthropic SDK (or any thrown value) into a failure class with its cooldown:
 * retry-after when given; long for exhausted quota (429 insufficient_quota, 402, "per day"); until restart for a
 * rejected key (401/403).
 */
export function classifyFailure(err: unknown): Failure {
  if (err instanceof BadAnswerError) return { kind: 'bad-answer', cooldownMs: COOLDOWN.badAnswer, summary: err.message };
  if (isTimeoutError(err)) return { kind: 'timeout', cooldownMs: COOLDOWN.network, summary: 'timed out' };
  const apiError = asApiError(err);
  if (apiError) {
    const status = apiError.status;
    const body = errorBody(apiError);
    const text = `${body.code ?? ''} ${body.type ?? ''} ${body.message}`.toLowerCase();
    const summary = `HTTP ${status}${body.code ? ` ${body.code}` : ''}`;
    if (status === 401 || status === 403) return { kind: 'auth', status, cooldownMs: Infinity, summary };
    if (status === 402 || /insufficient_quota|quota|per day|daily|tokens per day|requests per day/.test(text)) {
      if (status === 402 || status === 429 || /insufficient_quota/.test(text)) {
        return { kind: 'quota', status, cooldownMs: retryAfterMs(apiError.headers) ?? COOLDOWN.quota, summary };
      }
    }
    if (status === 429) {
      const wait = retryAfterMs(apiError.headers) ?? COOLDOWN.rateLimitDefault;
      return { kind: 'rate-limit', status, cooldownMs: Math.min(wait, COOLDOWN.rateLimitMax), summary };
    }
    if (status === 400 || status === 413) {
      if (status === 413 || /context|maximum.*tokens|too long|too many tokens/.test(text)) return { kind: 'context-length', status, cooldownMs: 0, summary };
      return { kind: 'bad-request', status, cooldownMs: 0, summary };
    }
    if (status >= 500) return { kind: 'server', status, cooldownMs: retryAfterMs(apiError.headers) ?? COOLDOWN.server, summary };
    return { kind: 'bad-request', status, cooldownMs: 0, summary };
  }
  if (isConnectionError(err) || (err as NodeJS.ErrnoException)?.code) {
    const code = (err as { cause?: { code?: string } }).cause?.code ?? (err as NodeJS.ErrnoException).code ?? 'connection error';
    return { kind: 'network', cooldownMs: COOLDOWN.network, summary: String(code) };
  }
  if ((err as Error)?.name === 'AbortError' || /timed? ?out/i.test((err as Error)?.message ?? '')) {
    return { kind: 'timeout', cooldownMs: COOLDOWN.network, summary: 'timed out' };
  }
  return { kind: 'bad-answer', cooldownMs: COOLDOWN.badAnswer, summary: (err as Error)?.message?.slice(0, 120) ?? 'unknown error' };
}
