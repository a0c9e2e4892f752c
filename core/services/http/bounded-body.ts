import { DownloadRefused } from '../../api/errors.js';

/**
 * The refusal of an answer over its bound, the same words wherever the bot reads one (fetch, node:http, the chat
 * legs' direct POST): "<what> is larger than N bytes", which the logs and the provider chain's summaries show.
 *
 * @example throw answerTooLarge('the answer of primary', MAX_PROVIDER_ANSWER_BYTES);
 */
export function answerTooLarge(what: string, maxBytes: number): DownloadRefused {
  return new DownloadRefused(`${what} is larger than ${maxBytes} bytes`);
}

/**
 * Reads a fetch `Response`'s body up to `maxBytes` actually received and no further: a larger answer is cancelled as
 * soon as it passes the bound (its `content-length`, when it declares more, refuses before reading) and rejects with
 * `DownloadRefused` ("… is larger than N bytes"). For every upstream answer the bot reads: whatever an upstream sends,
 * the bot holds at most the bound.
 *
 * @example
 * const body = await readBodyUpTo(await fetch(url), 2_000_000, 'the search answer');
 */
export async function readBodyUpTo(response: Response, maxBytes: number, what = 'the answer'): Promise<Buffer> {
  const tooLarge = () => answerTooLarge(what, maxBytes);
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  if (!response.body) return Buffer.alloc(0);
  const reader = response.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    parts.push(value);
  }
  // One chunk (most small answers) is not copied again.
  return parts.length === 1 ? Buffer.from(parts[0].buffer, parts[0].byteOffset, parts[0].byteLength) : Buffer.concat(parts, size);
}

/** `readBodyUpTo`, then JSON; undefined when the body is not JSON (a body over the bound still rejects). */
export async function readJsonUpTo(response: Response, maxBytes: number, what = 'the answer'): Promise<unknown> {
  const body = await readBodyUpTo(response, maxBytes, what);
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}
