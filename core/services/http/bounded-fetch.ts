import { answerTooLarge, readBodyUpTo } from './bounded-body.js';
import { boundedAnswer } from './bounded-answer.js';

/**
 * The most a provider's answer may weigh (a chat completion, a vision answer, a transcript): far above any real one
 * (answers are capped at `ai.maxAnswerChars`), far below what would hurt the bot.
 */
export const MAX_PROVIDER_ANSWER_BYTES = 8 * 1024 * 1024;
/** The most a spoken answer may weigh: WAV at 24 kHz is 2.9 MB a minute, so this is over twenty minutes of speech. */
export const MAX_SPEECH_ANSWER_BYTES = 64 * 1024 * 1024;

/** Statuses whose `Response` may not have a body. */
const NO_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * A `fetch` for an SDK client (openai, anthropic) whose answers are bounded by the bytes actually received: the SDK
 * reads an answer whole (`response.json()`, `arrayBuffer()`), so without this a gateway answering with gigabytes
 * would be held in memory whole. An answer that declares more than `maxBytes` is refused before its body is read;
 * one that passes the bound while arriving is cut off there (the connection closed, the upstream sends no more). Either
 * way the SDK's read rejects with `DownloadRefused` ("<what> is larger than N bytes"), which the provider chain counts
 * as a bad answer of that leg.
 *
 * An answer that declares its length within the bound, unencoded, is handed over as it came: fetch delivers no more
 * than a declared length. Any other is read whole, in a bounded loop, by the first of its readers the SDK calls (see
 * `boundedAnswer`): piping every answer through a bounding web stream cost ~30% of a chat request's CPU.
 *
 * @example
 * new OpenAI({ apiKey, baseURL, fetch: boundedFetch(4 * 1024 * 1024, 'the chat provider\'s answer') });
 */
export function boundedFetch(maxBytes: number, what: string, baseFetch: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const response = await baseFetch(input, init);
    if (!response.body || NO_BODY.has(response.status)) return response;
    const declared = Number(response.headers.get('content-length') ?? NaN);
    if (Number.isFinite(declared) && declared > maxBytes) {
      await response.body.cancel().catch(() => undefined);
      throw answerTooLarge(what, maxBytes);
    }
    // fetch decodes gzip, deflate and br itself: a declared length then bounds only the encoded bytes.
    const encoding = response.headers.get('content-encoding');
    if (Number.isFinite(declared) && (!encoding || encoding === 'identity')) return response;
    let whole: Promise<Buffer> | undefined;
    return boundedAnswer(
      { status: response.status, statusText: response.statusText, headers: response.headers, url: response.url, redirected: response.redirected, cancel: (reason) => response.body?.cancel(reason) },
      () => (whole ??= readBodyUpTo(response, maxBytes, what)),
    );
  };
}
