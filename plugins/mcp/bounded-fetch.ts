/**
 * The `fetch` the streamable HTTP transport uses: every message a server sends is bounded by the bytes actually
 * received. The SDK would read a JSON answer whole (`response.json()`) and let one event of a stream grow without end,
 * so a server answering with hundreds of megabytes would take the bot's memory with it. The transport keeps a stream
 * open for as long as the session lives, so the bound is per message, never on a stream's total: a JSON answer is one
 * message, an event of a stream is one message.
 *
 * A message past the bound is never handed on: the connection is closed (the server sends no more), and each request
 * the answer was for gets a JSON-RPC error saying so, so the call fails at once with a clear reason (instead of
 * waiting for its timeout) and the session goes on.
 */

/** The most one MCP message may weigh: a tool result with a few pictures in it fits, a flood does not. */
export const MAX_MCP_MESSAGE_BYTES = 8 * 1024 * 1024;
/** An error answer's body is only read for its first words (the SDK puts it in the error message). */
const MAX_ERROR_BODY_BYTES = 16 * 1024;
/** JSON-RPC's "internal error" (the SDK gives -32000 and -32001 meanings of its own: connection closed, timeout). */
const TOO_LARGE_CODE = -32603;
/** Statuses whose `Response` may not have a body. */
const NO_BODY = new Set([101, 103, 204, 205, 304]);

const LF = 0x0a;
const CR = 0x0d;
const encoder = new TextEncoder();

/** The ids of the requests in a JSON-RPC message or batch (what an answer to it must answer). */
function requestIds(body: unknown): Array<string | number> {
  if (typeof body !== 'string') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  return messages.flatMap((m) => (m && typeof m === 'object' && 'method' in m && 'id' in m && (typeof m.id === 'string' || typeof m.id === 'number') ? [m.id] : []));
}

function tooLargeErrors(ids: Array<string | number>, reason: string): object[] {
  return ids.map((id) => ({ jsonrpc: '2.0', id, error: { code: TOO_LARGE_CODE, message: reason } }));
}

/** A JSON answer: passed on whole once it ended within the bound; past it, the errors for its requests instead. */
function boundedWhole(maxBytes: number, ids: Array<string | number>, reason: string): TransformStream<Uint8Array, Uint8Array> {
  let parts: Uint8Array[] = [];
  let size = 0;
  return new TransformStream({
    transform(chunk, controller) {
      size += chunk.byteLength;
      if (size <= maxBytes) {
        parts.push(chunk);
        return;
      }
      parts = [];
      const errors = tooLargeErrors(ids, reason);
      if (errors.length > 0) controller.enqueue(encoder.encode(JSON.stringify(errors.length === 1 ? errors[0] : errors)));
      controller.terminate();
    },
    flush(controller) {
      for (const part of parts) controller.enqueue(part);
    },
  });
}

/**
 * An event stream: each event (up to the empty line that ends it) is passed on whole once complete; an event growing
 * past the bound is dropped, an error event for each request the stream answers goes in its place, and the stream ends.
 */
function boundedEvents(maxBytes: number, ids: Array<string | number>, reason: string): TransformStream<Uint8Array, Uint8Array> {
  let parts: Uint8Array[] = [];
  let size = 0;
  // Where the scan is, across chunks: right after a line's end (so a further line end is an empty line), and whether
  // that end was a CR (a LF right after it belongs to it: CRLF is one line end).
  let atLineStart = true;
  let afterCR = false;
  return new TransformStream({
    transform(chunk, controller) {
      let start = 0;
      for (let i = 0; i < chunk.length; i++) {
        const byte = chunk[i];
        if (byte === LF && afterCR) {
          afterCR = false;
          continue;
        }
        afterCR = byte === CR;
        if (byte !== LF && byte !== CR) {
          atLineStart = false;
          if (size + (i - start + 1) > maxBytes) {
            parts = [];
            for (const error of tooLargeErrors(ids, reason)) controller.enqueue(encoder.encode(`event: message\ndata: ${JSON.stringify(error)}\n\n`));
            controller.terminate();
            return;
          }
          continue;
        }
        if (!atLineStart) {
          atLineStart = true;
          continue;
        }
        // An empty line: the event is complete.
        for (const part of parts) controller.enqueue(part);
        controller.enqueue(chunk.subarray(start, i + 1));
        parts = [];
        size = 0;
        start = i + 1;
      }
      if (start < chunk.length) {
        parts.push(chunk.subarray(start));
        size += chunk.length - start;
      }
    },
    flush(controller) {
      for (const part of parts) controller.enqueue(part);
    },
  });
}

/** The first `maxBytes` of a body, then its end (the rest is not read). */
function truncated(maxBytes: number): TransformStream<Uint8Array, Uint8Array> {
  let size = 0;
  return new TransformStream({
    transform(chunk, controller) {
      const room = maxBytes - size;
      size += chunk.byteLength;
      if (room > 0) controller.enqueue(chunk.subarray(0, room));
      if (size >= maxBytes) controller.terminate();
    },
  });
}

/**
 * A `fetch` whose answers carry at most `maxBytes` per message (see the module's comment); `server` names the server
 * in the error a too-large answer becomes.
 */
export function boundedFetch(server: string, maxBytes = MAX_MCP_MESSAGE_BYTES, baseFetch: typeof fetch = fetch): typeof fetch {
  const size = maxBytes >= 1024 * 1024 ? `${Math.round(maxBytes / 1024 / 1024)} MB` : `${maxBytes} bytes`;
  const reason = `the MCP server "${server}" sent a message larger than ${size}; it was cut off unread`;
  return async (input, init) => {
    const response = await baseFetch(input, init);
    if (!response.body || NO_BODY.has(response.status)) return response;
    const ids = requestIds(init?.body);
    const type = (response.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    const bounded = !response.ok
      ? response.body.pipeThrough(truncated(MAX_ERROR_BODY_BYTES))
      : response.body.pipeThrough(type === 'text/event-stream' ? boundedEvents(maxBytes, ids, reason) : boundedWhole(maxBytes, ids, reason));
    const wrapped = new Response(bounded, { status: response.status, statusText: response.statusText, headers: response.headers });
    // The SDK names a redirect's target from where the answer came from.
    Object.defineProperty(wrapped, 'url', { value: response.url });
    return wrapped;
  };
}
