/**
 * When a rate-limited audio key may be used again, read from what the provider said: `retry-after` (seconds or an
 * HTTP date), `retry-after-ms`, the `x-ratelimit-reset-*` headers of OpenAI-compatible providers (`2m59.56s`,
 * `7.66s`, `500ms`, or plain seconds), or the "try again in 7m30s" sentence of the error message.
 */

type HeaderBag = Headers | Record<string, string | string[] | undefined> | undefined;

function header(headers: HeaderBag, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(value) ? value[0] : value;
}

function headerNames(headers: HeaderBag): string[] {
  if (!headers) return [];
  if (typeof (headers as Headers).keys === 'function' && typeof (headers as Headers).get === 'function') return [...(headers as Headers).keys()];
  return Object.keys(headers);
}

/**
 * Parses a duration such as `2m59.56s`, `1h2m`, `7.66s`, `500ms` or `30` (seconds) into milliseconds.
 *
 * @example parseDurationMs('2m59.5s') // 179500
 */
export function parseDurationMs(raw: string | undefined): number | undefined {
  if (!raw) return undefined;
  const text = raw.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  let total = 0;
  let matched = false;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)\s*(ms|h|m|s)/g)) {
    matched = true;
    const n = Number(m[1]);
    total += m[2] === 'ms' ? n : m[2] === 's' ? n * 1000 : m[2] === 'm' ? n * 60_000 : n * 3_600_000;
  }
  return matched ? total : undefined;
}

/**
 * Milliseconds until the provider allows this key again, or undefined when it did not say.
 * The reset headers of an exhausted limit (`x-ratelimit-remaining-<x>: 0`) win; otherwise the longest reset given.
 *
 * @example resetDelayMs(new Headers({ 'retry-after': '30' }), '') // 30000
 */
export function resetDelayMs(headers: HeaderBag, message: string, now = Date.now()): number | undefined {
  const ms = Number(header(headers, 'retry-after-ms'));
  if (Number.isFinite(ms) && ms > 0) return ms;
  const retryAfter = header(headers, 'retry-after');
  if (retryAfter) {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
    const date = Date.parse(retryAfter);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  const resets = headerNames(headers)
    .map((name) => name.toLowerCase())
    .filter((name) => name.startsWith('x-ratelimit-reset-'))
    .map((name) => {
      const limit = name.slice('x-ratelimit-reset-'.length);
      const remaining = header(headers, `x-ratelimit-remaining-${limit}`);
      return { exhausted: remaining !== undefined && Number(remaining) <= 0, ms: parseDurationMs(header(headers, name)) };
    })
    .filter((r): r is { exhausted: boolean; ms: number } => r.ms !== undefined);
  const pick = resets.some((r) => r.exhausted) ? resets.filter((r) => r.exhausted) : resets;
  if (pick.length) return Math.max(...pick.map((r) => r.ms));
  const sentence = /try again in\s+([0-9hms.\s]+)/i.exec(message);
  return sentence ? parseDurationMs(sentence[1]) : undefined;
}

/**
 * The next midnight UTC after `now`: when a daily limit without a reset header is assumed to reset.
 *
 * @example nextUtcMidnight(Date.parse('2025-01-01T13:00:00Z')) // Date.parse('2025-01-02T00:00:00Z')
 */
export function nextUtcMidnight(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
}
