#!/usr/bin/env node
import { readFile } from 'node:fs/promises';
import { loadSettings } from '../core/services/config/settings.js';
import { projectVersion } from '../core/kernel/status/status-report.js';

/*
 * `npm run --silent mcp`: the bot as an MCP server on stdio, for an MCP client that starts commands (Claude Desktop,
 * an agent). It relays every request to the running bot's `/mcp` (Streamable HTTP) with an API token, so it has the
 * same tools and the same scopes, and a second process never opens the bot's data folder. Token: `--token <token>`
 * or BOT_API_TOKEN (the environment or .env; better than the flag, which other users of the machine can see in the
 * process list). URL: `--url <url>` or BOT_MCP_URL, else config.json's host and port. stdout carries only JSON-RPC;
 * every word for people goes to stderr, and the token never does.
 */

function flag(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  if (at >= 0) return process.argv[at + 1];
  const inline = process.argv.find((a) => a.startsWith(`--${name}=`));
  return inline?.slice(name.length + 3);
}

async function defaultUrl(configFile: string): Promise<string> {
  let host = '127.0.0.1';
  let port = 3000;
  try {
    const config = JSON.parse(await readFile(configFile, 'utf8')) as { host?: string; port?: number };
    if (config.host && !['0.0.0.0', '::'].includes(config.host)) host = config.host;
    if (config.port) port = config.port;
  } catch {
    /* no config.json: the defaults */
  }
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}/mcp`;
}

async function main(): Promise<number> {
  const settings = loadSettings({ requireProviderKey: false });
  const token = flag('token') ?? settings.env.BOT_API_TOKEN;
  if (!token) {
    process.stderr.write('npm run mcp: no API token. Make one with `npm run token -- create <name> --scope …` and set BOT_API_TOKEN (or pass --token).\n');
    return 2;
  }
  const url = flag('url') ?? settings.env.BOT_MCP_URL ?? (await defaultUrl(settings.configFile));
  const [{ Client }, { StreamableHTTPClientTransport }, { Server }, { StdioServerTransport }, { CallToolRequestSchema, ListToolsRequestSchema }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/stdio.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  const client = new Client({ name: 'wa-assistant-bot-stdio', version: projectVersion() });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  } catch (err) {
    const why = String((err as Error).message ?? err).split(token).join('[token]');
    process.stderr.write(`npm run mcp: the bot at ${url} did not take the connection (${why}). Is it running (npm start), and is the token valid?\n`);
    return 1;
  }
  const server = new Server({ name: 'wa-assistant-bot', version: projectVersion() }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => client.listTools());
  server.setRequestHandler(CallToolRequestSchema, (request) => client.callTool(request.params));
  const stdio = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => (stdio.onclose = resolve));
  await server.connect(stdio);
  process.stdin.on('end', () => void server.close());
  await closed;
  await client.close();
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`npm run mcp failed: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
