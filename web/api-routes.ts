import { readBoundedBody } from './bounded-body.js';
import type { Context, Next } from 'koa';
import Router from '@koa/router';
import type { OperatorPort } from '../core/operator.js';
import { ApiError, MAX_API_MEDIA_BYTES, type ApiTokenInfo } from '../core/operator.js';
import { openApiDocument } from './api-openapi.js';

/** Largest JSON body the API reads (a text or a prompt fits many times over). */
export const MAX_API_BODY_BYTES = 64 * 1024;
/** Largest body of POST /api/v1/messages: a media file of MAX_API_MEDIA_BYTES in base64, and room for the rest. */
export const MAX_MESSAGE_BODY_BYTES = Math.ceil(MAX_API_MEDIA_BYTES / 3) * 4 + MAX_API_BODY_BYTES;

/**
 * The local HTTP API under `/api` (docs/owners/local-api.md): bearer tokens with scopes (`npm run token`, the
 * dashboard), JSON in and out, errors as `{ "error": { "code", "message" } }` with the codes of
 * docs/reference/errors.md. `GET /api/openapi.json` describes it. Served only under a local Host name (the Host guard
 * runs before it), never through PUBLIC_BASE_URL.
 */
export function apiRouter(app: OperatorPort): Router {
  const router = new Router({ prefix: '/api' });
  const { tokens, actions } = app.automation;
  const token = (ctx: Context): ApiTokenInfo => {
    const info = tokens.authenticate(ctx.get('authorization') || undefined);
    ctx.state.apiToken = info;
    return info;
  };

  router.get('/openapi.json', (ctx) => {
    ctx.body = openApiDocument();
  });
  router.post('/v1/messages', async (ctx) => {
    const who = token(ctx);
    // Only a media file makes a body larger than the others may be: a text or a poll keeps their limit.
    const body = await readJson(ctx, MAX_MESSAGE_BODY_BYTES, (json) => json.media !== undefined && json.media !== null);
    const outcome = await actions.send(who, body.to, body);
    ctx.status = outcome.status === 'held' ? 202 : 200;
    ctx.body = outcome;
  });
  router.get('/v1/chats', async (ctx) => {
    ctx.body = { chats: await actions.chats(token(ctx)) };
  });
  router.get('/v1/chats/:chat/messages', async (ctx) => {
    const who = token(ctx);
    ctx.body = await actions.messages(who, ctx.params.chat, ctx.query.limit);
  });
  router.post('/v1/prompts', async (ctx) => {
    const who = token(ctx);
    const body = await readJson(ctx);
    const outcome = await actions.prompt(who, body.to, body.prompt);
    ctx.status = outcome.status === 'held' ? 202 : 200;
    ctx.body = outcome;
  });
  return router;
}

/** The routes the API serves, as OpenAPI writes them (`/api/v1/chats/{chat}/messages`): what openapi.json must describe. */
export function servedApiRoutes(router: Router): Array<{ method: string; path: string }> {
  return router.stack.flatMap((layer) => layer.methods.filter((m) => m !== 'HEAD').map((method) => ({ method: method.toLowerCase(), path: String(layer.path).replace(/:(\w+)/g, '{$1}') })));
}

/**
 * Koa middleware for `/api/…`: the routes above, JSON errors (an unknown route is `API_NOT_FOUND`), one log line per
 * request naming the token by name and id (never its secret). Other paths pass on.
 */
export function apiRoutes(app: OperatorPort) {
  const router = apiRouter(app);
  const routes = router.routes();
  const log = app.log.child({ part: 'api' });
  return async (ctx: Context, next: Next): Promise<void> => {
    if (ctx.path !== '/api' && !ctx.path.startsWith('/api/')) return next();
    try {
      // Through PUBLIC_BASE_URL (workspace sites) the API does not exist.
      if (ctx.state.hostKind !== 'local') throw new ApiError('API_NOT_FOUND', 404, 'there is no API here');
      await routes(ctx as Parameters<typeof routes>[0], async () => undefined);
      if (ctx.body === undefined) throw new ApiError('API_NOT_FOUND', 404, `no ${ctx.method} ${ctx.path} in the API: GET /api/openapi.json lists what there is`);
    } catch (err) {
      const failure = err instanceof ApiError ? err : undefined;
      if (!failure) log.error({ err, path: ctx.path }, 'an API request failed');
      ctx.status = failure?.status ?? 500;
      ctx.body = { error: { code: failure?.code ?? 'API_INTERNAL', message: failure?.message ?? 'the bot failed on this request; its log says why' } };
    }
    const who = ctx.state.apiToken as ApiTokenInfo | undefined;
    const code = (ctx.body as { error?: { code?: string } } | undefined)?.error?.code;
    log.info({ method: ctx.method, path: ctx.path, status: ctx.status, ...(who ? { apiToken: who.name, apiTokenId: who.id } : {}), ...(code ? { code } : {}) }, `api: ${ctx.method} ${ctx.path} → ${ctx.status}`);
  };
}

/**
 * Reads a JSON object body of at most `maxBytes` (MAX_API_BODY_BYTES unless `mayBeLarger` says so of the JSON). Throws an ApiError: 400 for another content type or JSON
 * that is not an object, 413 for a larger body.
 */
async function readJson(ctx: Context, maxBytes = MAX_API_BODY_BYTES, mayBeLarger: (json: Record<string, unknown>) => boolean = () => false): Promise<Record<string, unknown>> {
  if (!ctx.is('application/json')) throw new ApiError('API_BAD_REQUEST', 400, 'send the body as JSON (Content-Type: application/json)');
  const tooLarge = (max: number) => new ApiError('API_BODY_TOO_LARGE', 413, `the body is larger than ${max >= 1024 * 1024 ? `${Math.round(max / 1024 / 1024)} MB` : `${max / 1024} KB`}`);
  const body = await readBoundedBody(ctx, maxBytes, () => tooLarge(maxBytes));
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    throw new ApiError('API_BAD_REQUEST', 400, 'the body is not valid JSON');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new ApiError('API_BAD_REQUEST', 400, 'the body must be a JSON object');
  if (body.length > MAX_API_BODY_BYTES && !mayBeLarger(value as Record<string, unknown>)) throw tooLarge(MAX_API_BODY_BYTES);
  return value as Record<string, unknown>;
}
