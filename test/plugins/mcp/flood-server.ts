/**
 * A hostile MCP server over stdio for the bound test, built with the SDK's server classes: `hello` answers; `flood`
 * answers with one line that never ends (it offers `FLOOD_BYTES`, default 512 MB, written as fast as the pipe takes
 * it). Each start appends a line to $STARTS_FILE, and each flood ends by appending how many bytes it wrote to
 * $WRITTEN_FILE (when the pipe breaks or the process is told to stop).
 */
import { appendFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

if (process.env.STARTS_FILE) appendFileSync(process.env.STARTS_FILE, `${process.pid}\n`);
const offered = Number(process.env.FLOOD_BYTES ?? 512 * 1024 * 1024);
let written = -1;
const report = () => {
  if (written >= 0 && process.env.WRITTEN_FILE) appendFileSync(process.env.WRITTEN_FILE, `${written}\n`);
  written = -1;
};
process.on('SIGTERM', () => {
  report();
  process.exit(0);
});
process.stdout.on('error', () => {
  report();
  process.exit(0);
});

/**
 * Writes the start of an answer to request `id`, then `bytes` of filler (default `FLOOD_BYTES`); with `complete`, the
 * end of a valid answer and its newline after them (one well-formed message of that size).
 */
async function flood(id: unknown, bytes = offered, complete = false): Promise<void> {
  const filler = 'x'.repeat(64 * 1024);
  written = 0;
  const head = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`;
  process.stdout.write(head);
  written += head.length;
  while (written < bytes && written >= 0) {
    written += filler.length;
    if (!process.stdout.write(filler)) await new Promise((resolve) => process.stdout.once('drain', resolve));
  }
  if (complete && written >= 0) process.stdout.write('"}]}}\n');
  report();
}

const server = new McpServer({ name: 'flooder', version: '1.0.0' });
server.registerTool('hello', { description: 'Says hello', inputSchema: { name: z.string() } }, async ({ name }) => ({ content: [{ type: 'text', text: `hello ${name} from pid ${process.pid}` }] }));
server.registerTool('flood', { description: 'Floods', inputSchema: { bytes: z.number().optional(), complete: z.boolean().optional() } }, async () => ({ content: [] }));
const transport = new StdioServerTransport();
// The flood call is answered by hand, bypassing the SDK's writer, as a broken or hostile server would.
await server.connect(transport);
const sdkHandler = transport.onmessage!;
transport.onmessage = (message) => {
  const m = message as { method?: string; id?: unknown; params?: { name?: string; arguments?: { bytes?: number; complete?: boolean } } };
  if (m.method === 'tools/call' && m.params?.name === 'flood') return void flood(m.id, m.params.arguments?.bytes, m.params.arguments?.complete);
  return sdkHandler(message);
};
