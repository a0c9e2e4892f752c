import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { OperatorPort } from '../core/operator.js';
import { readiness } from '../core/operator.js';
import type { Transport } from '../core/operator.js';

/** Paths for probes and Prometheus; workspace sites may not take these names. */
export const OPERATOR_PATHS = ['/healthz', '/readyz', '/metrics'] as const;

/** Constant-time comparison of a presented bearer token with METRICS_TOKEN (hashes first: equal lengths). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer[ \t]+(\S+)\s*$/i.exec(header ?? '');
  if (!match) return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(match[1]), digest(token));
}

/**
 * Koa middleware answering `GET /healthz` (alive: the event loop turned to answer), `GET /readyz` (transport
 * connected, account not restricted and a chat leg usable now; 503 with the reasons otherwise) and `GET /metrics`
 * (Prometheus text; bearer METRICS_TOKEN when set). Mounted before the Host guard: probes and Prometheus reach a
 * pod by its address, and these answers carry no chat data. Every other request passes on to the guarded server.
 *
 * @example koa.use(operatorRoutes(app, () => transport));
 */
export function operatorRoutes(app: OperatorPort, transport: () => Transport | undefined) {
  return async (ctx: Context, next: Next): Promise<void> => {
    if (!(OPERATOR_PATHS as readonly string[]).includes(ctx.path) || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) {
      await next();
      return;
    }
    ctx.set('Cache-Control', 'no-store');
    if (ctx.path === '/healthz') {
      ctx.body = { ok: true, uptimeSeconds: Math.round(process.uptime()) };
      return;
    }
    if (ctx.path === '/readyz') {
      const state = readiness(transport(), app.chain.health());
      ctx.status = state.ready ? 200 : 503;
      ctx.body = state.ready ? { ready: true, restricted: false } : { ready: false, reasons: state.reasons, restricted: state.restricted };
      return;
    }
    const token = app.settings.metricsToken;
    if (token && !bearerMatches(ctx.get('authorization'), token)) {
      ctx.status = 401;
      ctx.set('WWW-Authenticate', 'Bearer realm="metrics"');
      ctx.type = 'text/plain';
      ctx.body = 'Unauthorized: send Authorization: Bearer <METRICS_TOKEN>\n';
      return;
    }
    const { contentType, text } = await app.metrics.exposition();
    ctx.type = contentType;
    ctx.body = text;
  };
}
