import type { AddressInfo } from 'node:net';
import http from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import type { App } from '../core/app.js';
import type { Transport } from '../core/transport/transport.js';

export interface WebServer {
  port: number;
  host: string;
  close(): Promise<void>;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

/**
 * Builds the Koa app: `GET /` (QR while not linked, status once linked), `/config` (dead while CONFIG_TOKEN is
 * empty) and the routes plugins declare.
 */
export function createWebApp(app: App, transport: () => Transport | undefined): Koa {
  const koa = new Koa();
  const router = new Router();
  koa.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      app.log.error({ err, path: ctx.path }, 'web request failed');
      ctx.status = 500;
      ctx.body = 'Internal error';
    }
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    if (!ctx.response.get('X-Frame-Options')) ctx.set('X-Frame-Options', 'DENY');
  });

  router.get('/', async (ctx) => {
    const session = transport()?.session() ?? { status: 'offline' as const };
    ctx.type = 'html';
    const name = escapeHtml(app.config.botName);
    if (session.status === 'qr' && session.qr) {
      const QRCode = (await import('qrcode')).default;
      const svg = await QRCode.toString(session.qr, { type: 'svg', margin: 2, width: 320 });
      ctx.body = `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="15"><title>${name}: link</title><body style="font-family:sans-serif;text-align:center"><h1>Link ${name}</h1><p>WhatsApp → Linked devices → Link a device, then scan:</p><div>${svg}</div><p>This page refreshes as the code rotates.</p></body>`;
      return;
    }
    const caps = app.capabilities.report().map((c) => `<li>${c.ok ? '✔' : '✘'} <b>${escapeHtml(c.name)}</b>: ${escapeHtml(c.detail)}</li>`).join('');
    const me = session.me ? escapeHtml([session.me.name, session.me.id, session.me.lid].filter(Boolean).join(' · ')) : '';
    const uptime = Math.round(process.uptime());
    ctx.body = `<!doctype html><meta charset="utf-8"><title>${name}: status</title><body style="font-family:sans-serif"><h1>${name}</h1><p>Session: <b>${escapeHtml(session.status)}</b>${me ? ` (linked as ${me})` : ''}</p><p>Uptime: ${uptime}s</p><h2>Capabilities</h2><ul>${caps}</ul></body>`;
  });

  // Fail closed: without CONFIG_TOKEN the dashboard does not exist, not even a login form.
  koa.use(async (ctx, next) => {
    if ((ctx.path === '/config' || ctx.path.startsWith('/config/')) && !app.settings.configToken) {
      ctx.status = 404;
      ctx.body = 'Not Found';
      return;
    }
    await next();
  });

  for (const state of app.bot.plugins()) {
    if (!state.plugin.routes) continue;
    try {
      state.plugin.routes(router, app.bot.host(state.plugin.name));
    } catch (err) {
      app.log.error({ err, plugin: state.plugin.name }, 'plugin routes could not be mounted');
    }
  }
  koa.use(router.routes()).use(router.allowedMethods());
  return koa;
}

/** Starts the web server on config `host`/`port` (port 0 picks a free port; the chosen one is logged). */
export async function startWebServer(app: App, transport: () => Transport | undefined): Promise<WebServer> {
  const koa = createWebApp(app, transport);
  const server = http.createServer(koa.callback());
  const host = app.config.host;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(app.config.port, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  app.log.info({ host, port }, `web server listening on http://${host.includes(':') ? `[${host}]` : host}:${port}/`);
  if (host !== '127.0.0.1' && host !== 'localhost' && host !== '::1') app.log.warn({ host }, 'the web server is reachable from other machines (config host)');
  return {
    port,
    host,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
