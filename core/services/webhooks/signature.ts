import { createHmac, timingSafeEqual } from 'node:crypto';

/*
 * How the bot's webhooks are signed, both ways (inbound `POST /hooks/<name>` and the outbound event webhooks): an
 * HMAC-SHA256 with the hook's secret over `<timestamp>.<raw body>`, sent as `X-Hook-Signature: sha256=<hex>` beside
 * `X-Hook-Timestamp: <unix seconds>`. The timestamp is inside the signed bytes, so a captured request cannot be
 * replayed later with a fresh timestamp; the window and a cache of seen signatures (replay-cache.ts) refuse the
 * same request twice within it.
 */

export const TIMESTAMP_HEADER = 'x-hook-timestamp';
export const SIGNATURE_HEADER = 'x-hook-signature';
/** How far a request's timestamp may be from the bot's clock, either way. */
export const SIGNATURE_WINDOW_MS = 5 * 60_000;

/**
 * The signature header's value for `body` sent at `timestamp` (unix seconds, as written in the timestamp header).
 * @example signatureOf('s3cret', '1764400000', '{"a":1}') // 'sha256=…64 hex…'
 */
export function signatureOf(secret: string, timestamp: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`;
}

/** True when `given` (the signature header) is the signature of `body` at `timestamp`; compared in constant time. */
export function signatureMatches(secret: string, timestamp: string, body: string | Buffer, given: string | undefined): boolean {
  if (!given) return false;
  const expected = Buffer.from(signatureOf(secret, timestamp, body));
  const actual = Buffer.from(given.trim().toLowerCase());
  // timingSafeEqual needs equal lengths; a wrong length is wrong anyway (the expected length is public).
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * Why a timestamp header is refused (missing, not unix seconds, or outside the window around `now`), or undefined.
 * @example staleness('1764400000', Date.now()) // 'the timestamp is 3 days old' (or undefined when fresh)
 */
export function timestampProblem(timestamp: string | undefined, now: number, windowMs = SIGNATURE_WINDOW_MS): string | undefined {
  if (!timestamp) return 'the X-Hook-Timestamp header is missing';
  if (!/^\d{1,12}$/.test(timestamp.trim())) return 'the X-Hook-Timestamp header is not unix seconds';
  const skew = now - Number(timestamp.trim()) * 1000;
  if (skew > windowMs) return `the timestamp is more than ${windowMs / 60_000} minutes old`;
  if (-skew > windowMs) return `the timestamp is more than ${windowMs / 60_000} minutes ahead of the bot's clock`;
  return undefined;
}

/** The headers that sign `body` now: what an outbound webhook sends, and what a script sending to a hook must send. */
export function signedHeaders(secret: string, body: string | Buffer, now: number): Record<string, string> {
  const timestamp = String(Math.floor(now / 1000));
  return { [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: signatureOf(secret, timestamp, body) };
}
