import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import type Router from '@koa/router';
import type { OperatorPort } from '../core/operator.js';
import { hostGuard, type HostRules } from './security.js';

/** Mounts the static sites plugins serve (`host.serveSite`) on the main server's router, at `/<name>/…`. */
export function mountSites(app: OperatorPort, router: Router): void {
  for (const site of app.bot.sites()) router.get(['/:site', '/:site/{*rest}'], site.handler);
}

/**
 * The server of the plugins' static sites alone (SITE_PORT), so they live on their own origin, apart from the
 * dashboard, behind the same Host guard as the main server. Started by the web server; closed with it.
 *
 * @example const sites = await startSiteServer(app, 8081, rules); await sites?.close();
 */
export async function startSiteServer(app: OperatorPort, port: number, rules: HostRules): Promise<{ port: number; close(): Promise<void> } | undefined> {
  const sites = app.bot.sites();
  if (!sites.length) return undefined;
  const koa = new Koa();
  // The same DNS-rebinding guard as the main web server: only the public site host, loopback names and
  // WEB_ALLOWED_HOSTS are answered.
  koa.use(hostGuard(() => rules));
  koa.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      app.log.error({ err }, 'site request failed');
      ctx.status = 500;
      ctx.body = 'Internal error';
    }
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (!ctx.response.get('X-Frame-Options')) ctx.set('X-Frame-Options', 'DENY');
  });
  for (const site of sites) koa.use(site.handler);
  koa.use(async (ctx) => {
    ctx.status = 404;
    ctx.body = 'Not found';
  });
  const server = http.createServer(koa.callback());
  const host = app.config.host || '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  for (const site of sites) app.log.info({ port: bound, plugin: site.plugin }, `${site.label} served on port ${bound} (SITE_PORT)`);
  return {
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
