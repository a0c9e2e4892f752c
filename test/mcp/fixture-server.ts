/**
 * A tiny MCP server over stdio for the mcp plugin's tests, built with the SDK's own server classes.
 * `node fixture-server.js crashy`: `hello` answers; `crash` exits the process without answering.
 * `node fixture-server.js mute`: never answers anything (a server hung at start).
 * Each start appends a line to $STARTS_FILE when set, so a test can count restarts.
 */
import { appendFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const mode = process.argv[2] ?? 'crashy';
if (process.env.STARTS_FILE) appendFileSync(process.env.STARTS_FILE, `${mode} ${process.pid}\n`);

if (mode === 'mute') {
  // Reads its input and never answers: the client must give up on it, not wait forever. Says its token on stderr, as
  // careless servers do, which the bot must not repeat.
  process.stderr.write(`waiting with token ${process.env.MUTE_TOKEN ?? 'none'}\n`);
  process.stdin.resume();
} else {
  const server = new McpServer({ name: 'fixture', version: '1.0.0' });
  server.registerTool('hello', { description: 'Says hello', inputSchema: { name: z.string() } }, async ({ name }) => ({
    content: [{ type: 'text', text: `hello ${name} from pid ${process.pid}` }],
  }));
  server.registerTool('crash', { description: 'Exits the server mid-call', inputSchema: {} }, async () => {
    process.exit(3);
  });
  await server.connect(new StdioServerTransport());
}
