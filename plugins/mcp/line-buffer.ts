import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * The stdio reader of an MCP server's output, in linear time and bounded per message: the SDK's own `ReadBuffer`
 * copies everything it holds at each chunk (`Buffer.concat`), so one 8 MB line in small pipe chunks cost seconds of
 * CPU. Chunks are kept as they come and joined once, when a line ends; past `maxBytes` without a line end, all of it
 * is dropped and `append` throws (the SDK's transport then closes the server) with the SDK's own words.
 */
export class LineBuffer {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly parse: (line: string) => JSONRPCMessage,
  ) {}

  append(chunk: Buffer): void {
    if (this.size + chunk.length > this.maxBytes) {
      // A line end inside this chunk may close the message in time: only what is still open after it counts.
      const end = chunk.indexOf(0x0a);
      if (end < 0 || this.size + end > this.maxBytes) {
        this.clear();
        throw new Error(`ReadBuffer exceeded maximum size of ${this.maxBytes} bytes`);
      }
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
  }

  /** The next whole message, or null while its line has not ended. */
  readMessage(): JSONRPCMessage | null {
    for (let i = 0; i < this.chunks.length; i++) {
      const end = this.chunks[i]!.indexOf(0x0a);
      if (end < 0) continue;
      const parts = this.chunks.slice(0, i);
      parts.push(this.chunks[i]!.subarray(0, end));
      const rest = this.chunks[i]!.subarray(end + 1);
      this.chunks = rest.length ? [rest, ...this.chunks.slice(i + 1)] : this.chunks.slice(i + 1);
      this.size = this.chunks.reduce((n, c) => n + c.length, 0);
      return this.parse(Buffer.concat(parts).toString('utf8').replace(/\r$/, ''));
    }
    return null;
  }

  clear(): void {
    this.chunks = [];
    this.size = 0;
  }
}
