import { isSdkError, type SdkError } from './sdk-errors.js';
import { BadAnswerError, CodedError, UpstreamFailure, retryAfterMs } from '../../api/errors.js';

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

function isTimeoutError(err: unknown): boolean {
  return isSdkError(err, 'APIConnectionTimeoutError') || (err instanceof UpstreamFailure && err.kind === 'timeout');
}

function isConnectionError(err: unknown): boolean {
  return isSdkError(err, 'APIConnectionError') || (err instanceof UpstreamFailure && err.kind === 'network');
}

function asApiError(err: unknown): { status: number; headers: unknown; error?: unknown; message?: string } | undefined {
  if (isSdkError(err, 'APIError') && err.status !== undefined) return err as SdkError & { status: number; headers: unknown };
  if (err instanceof UpstreamFailure && err.kind === 'http' && typeof err.details.status === 'number') {
    return { status: err.details.status, headers: err.details.headers, error: err.details.body, message: err.message };
  }
  return undefined;
}

function errorBody(err: { error?: unknown; message?: string }): { code?: string; type?: string; message: string } {
  // An answer that was text, not JSON (a proxy's page, "too many requests per day"): its words are what is read.
  if (typeof err.error === 'string') return { message: err.error };
  const body = (err.error ?? {}) as { code?: unknown; type?: unknown; message?: unknown; error?: { code?: unknown; type?: unknown; message?: unknown } };
  const inner = body.error ?? body;
  return {
    code: typeof inner.code === 'string' ? inner.code : undefined,
    type: typeof inner.type === 'string' ? inner.type : undefined,
    message: typeof inner.message === 'string' ? inner.message : err.message ?? '',
  };
}

/**
 * Classifies an error from the openai SDK, an UpstreamFailure (or any thrown value) into a failure class with its cooldown:
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
  // A system error's code (ECONNRESET…); the core's own coded errors (`PLUGIN_…`) are not network failures.
  if (isConnectionError(err) || (!(err instanceof CodedError) && (err as NodeJS.ErrnoException)?.code)) {
    const code = (err instanceof UpstreamFailure ? err.details.code : undefined) ?? (err as { cause?: { code?: string } }).cause?.code ?? (err as NodeJS.ErrnoException).code ?? 'connection error';
    return { kind: 'network', cooldownMs: COOLDOWN.network, summary: String(code) };
  }
  if ((err as Error)?.name === 'AbortError' || /timed? ?out/i.test((err as Error)?.message ?? '')) {
    return { kind: 'timeout', cooldownMs: COOLDOWN.network, summary: 'timed out' };
  }
  return { kind: 'bad-answer', cooldownMs: COOLDOWN.badAnswer, summary: (err as Error)?.message?.slice(0, 120) ?? 'unknown error' };
}
