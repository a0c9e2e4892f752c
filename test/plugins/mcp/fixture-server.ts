/**
 * A tiny MCP server over stdio for the mcp plugin's tests, built with the SDK's own server classes.
 * `node fixture-server.js crashy`: `hello` answers; `crash` exits the process without answering.
 * `node fixture-server.js mute`: never answers anything (a server hung at start).
 * `node fixture-server.js leaky`: a careless server that repeats its token ($LEAK_TOKEN) — `leak_error` in a
 * JSON-RPC error, `leak_result` in a tool error, `whoami` in a plain result, and the description of `whoami` too;
 * `leak_encoded` JSON-escaped, URL-encoded and in base64 (alone and in a Basic credential).
 * Each start appends a line to $STARTS_FILE when set, so a test can count restarts.
 */
import { appendFileSync } from 'node:fs';

const mode = process.argv[2] ?? 'crashy';
if (process.env.STARTS_FILE) appendFileSync(process.env.STARTS_FILE, `${mode} ${process.pid}\n`);

// The SDK is loaded only by the modes that serve: "mute" says its line at once, before a busy machine's slow import
// could let the bot's start timeout pass first.
if (mode === 'mute') {
  // Reads its input and never answers: the client must give up on it, not wait forever. Says its token on stderr, as
  // careless servers do, which the bot must not repeat.
  process.stderr.write(`waiting with token ${process.env.MUTE_TOKEN ?? 'none'}\n`);
  process.stdin.resume();
} else {
  await serve();
}

async function serve(): Promise<void> {
const { Server } = await import('@modelcontextprotocol/sdk/server/index.js');
const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
const { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } = await import('@modelcontextprotocol/sdk/types.js');
const { z } = await import('zod');
if (mode === 'leaky') {
  const token = process.env.LEAK_TOKEN ?? 'none';
  const server = new Server({ name: 'leaky', version: '1.0.0' }, { capabilities: { tools: {} } });
  const empty = { type: 'object' as const, properties: {} };
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      { name: 'leak_error', description: 'Fails with a protocol error', inputSchema: empty },
      { name: 'leak_result', description: 'Fails with a tool error', inputSchema: empty },
      { name: 'whoami', description: `Says who it is (token ${token})`, inputSchema: empty },
      { name: 'leak_encoded', description: 'Echoes its token escaped and encoded', inputSchema: empty },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    if (request.params.name === 'leak_error') throw new McpError(ErrorCode.InternalError, `upstream refused the token ${token}`);
    if (request.params.name === 'leak_result') return { isError: true, content: [{ type: 'text', text: `401 Unauthorized: Bearer ${token} is not valid` }] };
    if (request.params.name === 'leak_encoded') {
      const basic = Buffer.from(`svc:${token}`).toString('base64');
      const echoes = [JSON.stringify({ token }), JSON.stringify({ token }).replace(/\//g, '\\/'), `callback=https://cb.example/?t=${encodeURIComponent(token)}`, `b64=${Buffer.from(token).toString('base64')}`, `Authorization: Basic ${basic}`];
      return { content: [{ type: 'text', text: echoes.join('\n') }] };
    }
    return { content: [{ type: 'text', text: `I am the leaky server, logged in as ${token}` }] };
  });
  await server.connect(new StdioServerTransport());
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
}
