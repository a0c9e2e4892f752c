import type http from 'node:http';
import { createRequire } from 'node:module';
import { urlToHttpOptions } from 'node:url';
import { BadAnswerError, UpstreamFailure } from '../../api/errors.js';
import { answerTooLarge } from '../http/bounded-body.js';
import { REDIRECTS, transportFor } from '../http/http-fetch.js';

/** What a chat POST resolves to when the gateway answered with a redirect: the caller asks again through the SDK. */
export const MOVED = Symbol('the gateway answered with a redirect');

export interface ChatPostOptions {
  /** The leg's base URL (`https://gw.example/v1`): the request goes to `<baseUrl>/chat/completions`. */
  baseUrl: string;
  apiKey: string;
  /** The whole request, from sending to the last byte of the answer: over it, `UpstreamFailure` kind 'timeout'. */
  timeoutMs: number;
  /** The most the answer may weigh (declared more is refused before reading; more arriving is cut off there). */
  maxBytes: number;
  /** The answer's name in the refusal: "<what> is larger than N bytes". */
  what: string;
}

/** A chat POST: the request body's JSON text in, the answer's JSON out (or `MOVED`). */
export type ChatPost = (bodyText: string) => Promise<unknown>;

let userAgent: string | undefined;

/** What the openai SDK said it was (its gateways saw it so), read from its one-line version module at the first POST. */
function sdkUserAgent(): string {
  userAgent ??= `OpenAI/JS ${(createRequire(import.meta.url)('openai/version') as { VERSION: string }).VERSION}`;
  return userAgent;
}

/**
 * A chat leg's `POST <baseUrl>/chat/completions` as one request over node:http/https (http-fetch.ts's keep-alive
 * agents), instead of the openai SDK's `client.post`: the SDK's per-request machinery (its debug-log formatting, its
 * headers built through `Headers`, an AbortController and a timer, a Response to wrap and parse) cost ~2.7× the
 * request itself, and every chat message makes one (docs/choices.md). What an owner saw of the SDK's request stays:
 *
 * - the URL joined as the SDK joins it, `Authorization: Bearer <key>`, `Content-Type` and `Accept` JSON, its
 *   User-Agent; the key goes in the header only, never in an error's text;
 * - no answer within `timeoutMs` (reading included) → `UpstreamFailure` 'timeout'; a connection that fails or
 *   breaks → 'network' with the socket's code (ECONNREFUSED…); a non-2xx status → 'http' with its status, headers
 *   (retry-after) and body (parsed JSON, else text), which `classifyFailure` reads as it read the SDK's errors;
 * - the answer bounded by `maxBytes` received (`DownloadRefused` "<what> is larger than N bytes"); a 2xx answer that
 *   is not JSON → `BadAnswerError`;
 * - a redirect resolves to `MOVED`: the caller asks again through the SDK, whose fetch follows it (rare: a moved
 *   gateway).
 *
 * No compressed answer is asked for (none would be decoded: a gzip bomb stays unread bytes that are not JSON).
 *
 * @example
 * const post = chatPost({ baseUrl: 'http://127.0.0.1:8080/v1', apiKey, timeoutMs: 60_000, maxBytes: MAX_PROVIDER_ANSWER_BYTES, what: 'the answer of primary' });
 * const completion = await post('{"model":"m","messages":[…]}');
 */
export function chatPost(options: ChatPostOptions): ChatPost {
  const { baseUrl, timeoutMs, maxBytes, what } = options;
  const path = '/chat/completions';
  // As the SDK's buildURL: base + path, without a double slash.
  const url = new URL(baseUrl + (baseUrl.endsWith('/') ? path.slice(1) : path));
  const target = urlToHttpOptions(url);
  const { client, agent } = transportFor(url.protocol);
  const authorization = `Bearer ${options.apiKey}`;
  return (bodyText) =>
    new Promise((resolve, reject) => {
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(err);
        request?.destroy();
      };
      const timer = setTimeout(() => fail(new UpstreamFailure('timeout', { message: `no answer within ${timeoutMs} ms` })), timeoutMs);
      const headers = {
        authorization,
        'content-type': 'application/json',
        accept: 'application/json',
        'user-agent': sdkUserAgent(),
        'content-length': Buffer.byteLength(bodyText),
      };
      let request: http.ClientRequest | undefined;
      let received: http.IncomingMessage | undefined;
      try {
        request = client.request({ ...target, method: 'POST', headers, agent }, (answer) => {
          received = answer;
          const status = answer.statusCode ?? 0;
          if (REDIRECTS.has(status)) {
            answer.resume();
            settled = true;
            clearTimeout(timer);
            resolve(MOVED);
            return;
          }
          if (Number(answer.headers['content-length'] ?? NaN) > maxBytes) return fail(answerTooLarge(what, maxBytes));
          const parts: Buffer[] = [];
          let size = 0;
          answer.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > maxBytes) fail(answerTooLarge(what, maxBytes));
            else parts.push(chunk);
          });
          answer.once('end', () => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            const text = (parts.length === 1 ? parts[0] : Buffer.concat(parts, size)).toString('utf8');
            // As Response.text(), which the SDK read it with: a leading byte order mark dropped.
            const json = jsonOf(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
            if (status >= 200 && status < 300) {
              if (json === NOT_JSON) reject(new BadAnswerError('answer is not JSON'));
              else resolve(json);
            } else reject(new UpstreamFailure('http', { status, headers: answer.headers, body: json === NOT_JSON ? text : json, message: `HTTP ${status}` }));
          });
          answer.on('error', (err) => fail(brokenConnection(err)));
          // Closed before its end (the upstream hung up): what arrived is not the answer.
          answer.once('close', () => {
            if (!answer.complete) fail(brokenConnection(Object.assign(new Error('closed before the answer ended'), { code: 'ECONNRESET' })));
          });
        });
      } catch (err) {
        // Refused before sending (a key or URL no header may carry): node's message names the header, not its value.
        clearTimeout(timer);
        settled = true;
        reject(brokenConnection(err as Error));
        return;
      }
      request.on('error', (err) => {
        // Bytes past a whole answer (more than it declared) break the connection, not the answer: its end follows.
        if (!received?.complete) fail(brokenConnection(err));
      });
      request.end(bodyText);
    });
}

const NOT_JSON = Symbol('not JSON');

function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}

/** A connection that failed or broke, with the socket's code (ECONNREFUSED, ECONNRESET…) and no more of its text. */
function brokenConnection(err: Error): UpstreamFailure {
  const code = (err as NodeJS.ErrnoException).code ?? 'connection error';
  return new UpstreamFailure('network', { code, message: `connection failed (${code})` });
}
