import http from 'node:http';
import type https from 'node:https';
import { createRequire } from 'node:module';
import { boundedAnswer } from './bounded-answer.js';
import { answerTooLarge } from './bounded-body.js';
import { boundedFetch } from './bounded-fetch.js';

/** Statuses a gateway that moved answers with: the request is asked again through fetch, which follows them. */
export const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * Connections kept open between requests, as fetch keeps them, and closed after 4 s idle as fetch closes them (or
 * earlier, when the upstream's Keep-Alive header says it hangs up sooner: node's agent honours that hint only under a
 * timeout of its own). Without one, an idle connection the upstream closed meanwhile would be reused, and the next
 * answer fail as a reset.
 */
const IDLE_MS = 4_000;
const plain = { client: http, agent: new http.Agent({ keepAlive: true, timeout: IDLE_MS }) };
let secure: { client: typeof https; agent: https.Agent } | undefined;

/** node:http, or node:https loaded at the first https request (with TLS, ~15 ms that a start need not pay). */
export function transportFor(protocol: string): { client: typeof http | typeof https; agent: http.Agent } {
  if (protocol !== 'https:') return plain;
  if (!secure) {
    const client = createRequire(import.meta.url)('node:https') as typeof https;
    secure = { client, agent: new client.Agent({ keepAlive: true, timeout: IDLE_MS }) };
  }
  return secure;
}

/**
 * `boundedFetch` made on node:http instead of the built-in fetch, for the chat legs' SDK clients (their chat
 * completions go around the SDK, chat-post.ts, on the same agents; the clients carry the rest): a chat request
 * through fetch (its web streams for the request and the answer, its Request and Response objects) cost ~40% of
 * the request's CPU. The answer is the same: bounded by the bytes received (`maxBytes`; more declared is refused before
 * reading, more arriving is cut off there, with `DownloadRefused` "<what> is larger than N bytes"), aborted by the
 * request's signal (the SDK's timeout), a connection failure rejecting with the socket's error (its `code`).
 *
 * Unlike fetch, no compressed answer is asked for (none is decoded). A redirect, and a request this does not send
 * (a body other than text or bytes: the audio's form uploads, a stream), go through `boundedFetch` as before.
 *
 * @example
 * new OpenAI({ apiKey, baseURL, fetch: boundedHttpFetch(MAX_PROVIDER_ANSWER_BYTES, 'the answer of primary') });
 */
export function boundedHttpFetch(maxBytes: number, what: string): typeof fetch {
  const viaFetch = boundedFetch(maxBytes, what);
  const tooLarge = () => answerTooLarge(what, maxBytes);
  return (input, init) => {
    const body = init?.body;
    const url = typeof input === 'string' ? new URL(input) : input instanceof URL ? input : undefined;
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || (body != null && typeof body !== 'string' && !(body instanceof Uint8Array))) {
      return viaFetch(input, init);
    }
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => (headers[name] = value));
    const signal = init?.signal ?? undefined;
    return new Promise<Response>((resolve, reject) => {
      const { client, agent } = transportFor(url.protocol);
      const request = client.request(url, { method: init?.method ?? 'GET', headers, agent, signal }, (answer) => {
        if (REDIRECTS.has(answer.statusCode ?? 0)) {
          // Rare (a gateway moved): asked again through fetch, which follows it as before.
          answer.resume();
          resolve(viaFetch(input, init));
          return;
        }
        const declared = Number(answer.headers['content-length'] ?? NaN);
        if (declared > maxBytes) {
          answer.destroy();
          reject(tooLarge());
          return;
        }
        const fields = new Headers();
        for (let i = 0; i < answer.rawHeaders.length; i += 2) fields.append(answer.rawHeaders[i], answer.rawHeaders[i + 1]);
        let whole: Promise<Buffer> | undefined;
        const received = { status: answer.statusCode ?? 0, statusText: answer.statusMessage ?? '', headers: fields, url: url.href, redirected: false, cancel: () => answer.destroy() };
        try {
          resolve(boundedAnswer(received, () => (whole ??= readUpTo(answer, maxBytes, tooLarge))));
        } catch (err) {
          // A status no Response can have (under 200, over 599).
          answer.destroy();
          reject(err);
        }
      });
      request.on('error', reject);
      request.end(body ?? undefined);
    });
  };
}

/** The answer's body, up to `maxBytes` received: past it the connection is closed and the read rejects. */
function readUpTo(answer: http.IncomingMessage, maxBytes: number, tooLarge: () => Error): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    answer.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        answer.destroy();
        reject(tooLarge());
      } else parts.push(chunk);
    });
    answer.once('end', () => resolve(parts.length === 1 ? parts[0] : Buffer.concat(parts, size)));
    answer.once('error', reject);
    // Closed before its end (the upstream hung up, the request was aborted): what arrived is not the answer.
    answer.once('close', () => {
      if (!answer.complete) reject(Object.assign(new Error('the upstream closed the connection before its answer ended'), { code: 'ECONNRESET' }));
    });
  });
}
