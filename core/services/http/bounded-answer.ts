/** What an answer came with, apart from its body. */
export interface Received {
  status: number;
  statusText: string;
  headers: HeadersInit;
  url: string;
  redirected: boolean;
  /** Stops receiving the body (nothing read yet). */
  cancel(reason?: unknown): unknown;
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
 *
 * Made at the first answer, not when this module loads: `Response` is one of Node's lazy globals, and reading it loads
 * Node's fetch (undici, with http2, tls, zlib and worker_threads), ~70 ms of CPU that a start does not need before
 * "console chat ready" (measured with `process.cpuUsage()` around a bare `globalThis.Response`).
 */
export function boundedAnswer(source: Received, whole: () => Promise<Buffer>): Response {
  answerClass ??= defineBoundedAnswer();
  return new answerClass(source, whole);
}

let answerClass: ReturnType<typeof defineBoundedAnswer> | undefined;

function defineBoundedAnswer() {
  return class BoundedAnswer extends Response {
    private used = false;
    private stream: ReadableStream<Uint8Array<ArrayBuffer>> | undefined;

    constructor(
      private readonly source: Received,
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
            if (!this.used) await this.source.cancel(reason);
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
  };
}
