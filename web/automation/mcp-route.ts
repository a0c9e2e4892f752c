import type { Context, Next } from 'koa';
import { ApiError, MAX_API_MEDIA_BYTES, projectVersion, type ApiTokenInfo, type OperatorPort } from '../../core/operator.js';
import { readBoundedBody } from '../bounded-body.js';
import { MCP_TOOLS, runMcpTool } from './mcp-tools.js';

/** Largest JSON-RPC request body read from an MCP client: a send_message with a media file at its cap, in base64. */
export const MAX_MCP_BODY_BYTES = Math.ceil(MAX_API_MEDIA_BYTES / 3) * 4 + 64 * 1024;

function jsonError(ctx: Context, status: number, code: string, message: string): void {
  ctx.status = status;
  ctx.body = { error: { code, message } };
}

async function readJson(ctx: Context): Promise<unknown> {
  const body = await readBoundedBody(ctx, MAX_MCP_BODY_BYTES, () => new ApiError('API_BODY_TOO_LARGE', 413, `the request is larger than ${MAX_MCP_BODY_BYTES} bytes`));
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new ApiError('API_BAD_REQUEST', 400, 'the body is not JSON-RPC (JSON)');
  }
}

/** An MCP server (the official SDK's low-level Server) with the bot's tools bound to `token`. Loaded at first use. */
async function serverFor(app: OperatorPort, token: ApiTokenInfo) {
  const [{ Server }, { CallToolRequestSchema, ListToolsRequestSchema }] = await Promise.all([import('@modelcontextprotocol/sdk/server/index.js'), import('@modelcontextprotocol/sdk/types.js')]);
  const server = new Server({ name: 'wa-assistant-bot', version: projectVersion() }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: MCP_TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => runMcpTool(app, token, request.params.name, (request.params.arguments ?? {}) as Record<string, unknown>));
  return server;
}

/**
 * `/mcp`: the bot as an MCP server over Streamable HTTP (stateless: each POST is one JSON-RPC exchange, answered as
 * JSON), bearer token = an API token (`npm run token`), its tools and scopes those of web/automation/mcp-tools.ts.
 * 401 without a valid token (JSON error with the API's code), 405 for GET/DELETE (no server-sent stream to resume).
 *
 * @example koa.use(mcpRoute(app));
 */
export function mcpRoute(app: OperatorPort) {
  return async (ctx: Context, next: Next): Promise<void> => {
    if (ctx.path !== '/mcp') return next();
    ctx.set('Cache-Control', 'no-store');
    let token: ApiTokenInfo;
    let body: unknown;
    try {
      token = app.automation.tokens.authenticate(ctx.get('authorization') || undefined);
      if (ctx.method !== 'POST') {
        ctx.set('Allow', 'POST');
        jsonError(ctx, 405, 'API_BAD_REQUEST', 'this MCP server is stateless: POST each JSON-RPC request');
        return;
      }
      body = await readJson(ctx);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.status === 401) ctx.set('WWW-Authenticate', 'Bearer realm="wa-assistant-bot"');
      jsonError(ctx, err.status, err.code, err.message);
      return;
    }
    const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
    const server = await serverFor(app, token);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    ctx.respond = false;
    ctx.res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(ctx.req, ctx.res, body);
  };
}
