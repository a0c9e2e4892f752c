import type { AddressInfo } from 'node:net';
import http from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import type { OperatorPort } from '../core/operator.js';
import { capabilityMark } from '../core/operator.js';
import { humanDuration } from '../core/operator.js';
import type { Transport } from '../core/operator.js';
import { randomSecret } from './dashboard/auth.js';
import { dashboard, type DashboardOptions } from './dashboard/dashboard.js';
import { documentPage } from './dashboard/pages.js';
import { apiRoutes } from './api-routes.js';
import { operatorRoutes } from './operator-routes.js';
import { hooksRoute } from './automation/hooks-route.js';
import { mcpRoute } from './automation/mcp-route.js';
import { html, raw } from './html.js';
import { pairingCodeHtml, timeTag } from './format.js';
import { baseHeaders, crossSiteGuard, hostGuard, pageHeaders, type HostRules } from './security.js';
import { mountSites, startSiteServer } from './site-server.js';
import { PAGE_CSS_HASH } from './style.js';

export interface WebServer {
  port: number;
  host: string;
  close(): Promise<void>;
}

export interface WebAppOptions {
  /** Session store and login limiter of the dashboard (tests shorten the limits). */
  dashboard?: DashboardOptions;
  /** The clock of the signature windows (hooks); tests own it. */
  now?: () => number;
}

/** Bind addresses that keep the server on this machine. */
const LOOPBACK_BINDS = ['127.0.0.1', 'localhost', '::1'];

/**
 * How a set CONFIG_TOKEN falls short of 32 random bytes (64 hex characters), or undefined when it does not.
 * @example weakTokenReason('abc') // 'shorter than 64 characters'
 */
export function weakTokenReason(token: string): string | undefined {
  if (!token) return undefined;
  if (token.length < 64) return 'shorter than 64 hex characters (32 random bytes)';
  return undefined;
}

function hostRules(app: OperatorPort): HostRules {
  return {
    bindHost: app.config.host,
    publicBaseUrl: app.settings.publicBaseUrl,
    extraHosts: (app.settings.env.WEB_ALLOWED_HOSTS ?? '').split(',').map((h) => h.trim()).filter(Boolean),
  };
}

/**
 * Builds the Koa app: `/healthz`, `/readyz`, `/metrics` for operators (any Host), security guards (Host header,
 * cross-site writes, headers), `GET /` (QR while not linked,
 * status once linked), `/config` (404 while CONFIG_TOKEN is empty, else the dashboard) and the static sites plugins
 * serve (`host.serveSite`: workspace sites).
 *
 * @example const koa = createWebApp(app, () => transport); http.createServer(koa.callback()).listen(0, '127.0.0.1');
 */
export function createWebApp(app: OperatorPort, transport: () => Transport | undefined, options: WebAppOptions = {}): Koa {
  // Cookie signing keys live only in this process: a restart invalidates every dashboard session.
  const koa = new Koa({ keys: [randomSecret(), randomSecret()] });
  const router = new Router();
  const rules = hostRules(app);

  koa.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const status = (err as { status?: number; expose?: boolean }).status;
      if (status && status >= 400 && status < 500 && (err as { expose?: boolean }).expose) {
        ctx.status = status;
        ctx.type = 'text/plain';
        ctx.body = `${(err as Error).message}\n`;
      } else {
        app.log.error({ err, path: ctx.path }, 'web request failed');
        ctx.status = 500;
        ctx.type = 'text/plain';
        ctx.body = 'Internal error\n';
      }
    } finally {
      baseHeaders(ctx);
    }
  });
  // Probes and Prometheus come before the Host guard: they reach a pod by its address and carry no chat data.
  koa.use(operatorRoutes(app, transport));
  koa.use(hostGuard(() => rules));
  koa.use(crossSiteGuard());
  // Signed hooks from automation (Home Assistant, n8n, scripts): on the local and the public host alike.
  koa.use(hooksRoute(app, { now: options.now }));
  // The local API (scoped bearer tokens): on local names only.
  koa.use(apiRoutes(app));
  // The bot as an MCP server (Streamable HTTP), on the API's tokens and scopes.
  koa.use(mcpRoute(app));

  // Fail closed: without CONFIG_TOKEN the dashboard does not exist, not even a login form. Through the public
  // host (PUBLIC_BASE_URL, meant for workspace sites) neither the dashboard nor the QR page exists either.
  koa.use(async (ctx, next) => {
    const dashboardPath = ctx.path === '/config' || ctx.path.startsWith('/config/');
    if ((dashboardPath && !app.settings.configToken) || ((dashboardPath || ctx.path === '/') && ctx.state.hostKind !== 'local')) {
      ctx.status = 404;
      ctx.body = 'Not Found';
      return;
    }
    await next();
  });
  if (app.settings.configToken) koa.use(dashboard(app, transport, options.dashboard));

  router.get('/', async (ctx) => {
    pageHeaders(ctx, PAGE_CSS_HASH);
    const session = transport()?.session() ?? { status: 'offline' as const };
    ctx.type = 'html';
    const name = app.config.botName;
    // The pairing-code form sits behind the dashboard's login (it starts a link); this page only points to it.
    const pairingLink = app.settings.configToken && transport()?.requestPairingCode ? html`<p>No camera at hand? <a href="/config/status#pairing">Link with a phone number instead</a> (dashboard login).</p>` : '';
    if (session.status === 'qr' && session.qr) {
      const QRCode = (await import('qrcode')).default;
      const svg = await QRCode.toString(session.qr, { type: 'svg', margin: 2, width: 320 });
      ctx.body = documentPage(
        `${name}: link`,
        html`<main class="qr"><h1>Link ${name}</h1><p>WhatsApp → Linked devices → Link a device, then scan:</p><div>${raw(svg)}</div>${pairingLink}<p class="hint">This page refreshes as the code rotates.</p></main>`,
        html`<meta http-equiv="refresh" content="15">`,
      ).value;
      return;
    }
    const caps = app.capabilities.report().map((c) => html`<li><span class="${!c.ok ? (c.notConfigured ? 'off' : 'bad') : c.degraded ? 'warn' : 'ok'}">${capabilityMark(c)}</span> <b>${c.name}</b>: ${c.notConfigured && !c.ok ? 'off — ' : ''}${c.detail}</li>`);
    const me = session.me ? [session.me.name, session.me.id, session.me.lid].filter(Boolean).join(' · ') : '';
    // While not linked, say why and when the next attempt is, and show a pairing code when that login is used.
    const problem =
      session.status !== 'linked' && session.lastError
        ? html`<p class="bad">Cannot reach WhatsApp: ${session.lastError}${session.retryAt ? html`; next try at ${timeTag(session.retryAt)}` : ''}</p>`
        : '';
    const pairing = session.status !== 'linked' ? pairingCodeHtml(session) : '';
    ctx.body = documentPage(
      `${name}: status`,
      html`<main><h1>${name}</h1><section><p>Session: <b>${session.status}</b>${me ? html` (linked as ${me})` : ''}</p>${problem}${pairing}<p>Uptime: ${humanDuration(process.uptime() * 1000)}</p></section><section><h2>Capabilities</h2><ul>${caps}</ul></section></main>`,
      session.status === 'linked' ? undefined : html`<meta http-equiv="refresh" content="15">`,
    ).value;
  });

  // With SITE_PORT set, plugins' sites live only on their own port (their own origin, away from the dashboard).
  if (app.settings.sitePort === undefined) mountSites(app, router);
  koa.use(router.routes()).use(router.allowedMethods());
  return koa;
}

/**
 * Starts the web server on config `host`/`port` (port 0 picks a free port; the chosen one is logged). The host
 * is always passed to listen: Node would otherwise bind every interface.
 *
 * @example const web = await startWebServer(app, () => transport); await web.close();
 */
export async function startWebServer(app: OperatorPort, transport: () => Transport | undefined, options: WebAppOptions = {}): Promise<WebServer> {
  const koa = createWebApp(app, transport, options);
  const server = http.createServer(koa.callback());
  // Slow-loris and oversized headers: Node's defaults, made explicit.
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;
  const host = app.config.host || '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(app.config.port, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const base = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  app.log.info({ host, port }, `web server listening on ${base}/`);
  if (!LOOPBACK_BINDS.includes(host)) app.log.warn({ host }, 'the web server is reachable from other machines (config host); requests must still name an expected Host');
  if (app.settings.configToken) {
    app.log.info(`dashboard: ${base}/config`);
    const weak = weakTokenReason(app.settings.configToken);
    if (weak) app.log.warn(`CONFIG_TOKEN is ${weak}: generate a strong one with \`openssl rand -hex 32\``);
  }
  let sites: Awaited<ReturnType<typeof startSiteServer>>;
  if (app.settings.sitePort !== undefined) {
    // A site port that cannot be had costs the sites, never the bot or the dashboard.
    sites = await startSiteServer(app, app.settings.sitePort, hostRules(app)).catch((err: unknown) => {
      app.log.error({ err, port: app.settings.sitePort }, `the sites cannot be served on SITE_PORT ${app.settings.sitePort}: ${(err as Error).message}`);
      return undefined;
    });
  }
  return {
    port,
    host,
    close: async () => {
      await Promise.all([
        sites?.close(),
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
      ]);
    },
  };
}
