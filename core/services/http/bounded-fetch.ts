import { DownloadRefused } from '../../api/errors.js';
import { readBodyUpTo } from './bounded-body.js';

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
 * `BoundedAnswer`): piping every answer through a bounding web stream cost ~30% of a chat request's CPU.
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
      throw new DownloadRefused(`${what} is larger than ${maxBytes} bytes`);
    }
    // fetch decodes gzip, deflate and br itself: a declared length then bounds only the encoded bytes.
    const encoding = response.headers.get('content-encoding');
    if (Number.isFinite(declared) && (!encoding || encoding === 'identity')) return response;
    let whole: Promise<Buffer> | undefined;
    return new BoundedAnswer(response, () => (whole ??= readBodyUpTo(response, maxBytes, what)));
  };
}

/** A copy: the bytes read are shared with clones (and may be a view into a larger buffer). */
function copyOf(bytes: Buffer): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

const UTF8_BOM = [0xef, 0xbb, 0xbf];

/**
 * An answer whose body is read whole, up to the bound, by the first reader called (`json()`, `text()`,
 * `arrayBuffer()`, `bytes()`, `blob()`, `formData()` or `body`): its status, headers and url are the answer's own.
 * A clone shares the one read. Reading twice, as with any `Response`, is a TypeError.
 */
class BoundedAnswer extends Response {
  private used = false;
  private stream: ReadableStream<Uint8Array<ArrayBuffer>> | undefined;

  constructor(
    private readonly source: Response,
    private readonly whole: () => Promise<Buffer>,
  ) {
    super(null, { status: source.status, statusText: source.statusText, headers: source.headers });
  }

  override get url(): string {
    return this.source.url;
  }

  override get redirected(): boolean {
    return this.source.redirected;
  }

  override get bodyUsed(): boolean {
    return this.used;
  }

  override get body(): ReadableStream<Uint8Array<ArrayBuffer>> {
    // One chunk, read when the stream is first read (highWaterMark 0): asking for the stream reads nothing yet.
    this.stream ??= new ReadableStream<Uint8Array<ArrayBuffer>>(
      {
        pull: async (controller) => {
          controller.enqueue(new Uint8Array(copyOf(await this.take())));
          controller.close();
        },
        cancel: async (reason) => {
          if (!this.used) await this.source.body?.cancel(reason);
        },
      },
      { highWaterMark: 0 },
    );
    return this.stream;
  }

  override clone(): Response {
    if (this.used) throw new TypeError('Response.clone: the body has already been read');
    return new BoundedAnswer(this.source, this.whole);
  }

  override async text(): Promise<string> {
    const bytes = await this.take();
    // As Response.text(): UTF-8, a leading byte order mark dropped.
    const start = UTF8_BOM.every((b, i) => bytes[i] === b) ? 3 : 0;
    return bytes.toString('utf8', start);
  }

  override async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    return copyOf(await this.take());
  }

  override async bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return new Uint8Array(await this.arrayBuffer());
  }

  override async blob(): Promise<Blob> {
    return new Blob([await this.arrayBuffer()], { type: this.headers.get('content-type') ?? '' });
  }

  override async formData(): Promise<FormData> {
    return new Response(await this.arrayBuffer(), { headers: this.headers }).formData();
  }

  private take(): Promise<Buffer> {
    if (this.used) return Promise.reject(new TypeError('Body is unusable: Body has already been read'));
    this.used = true;
    return this.whole();
  }
}
