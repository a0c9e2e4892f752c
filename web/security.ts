import type { Context, Next } from 'koa';

/** Host names every loopback visit uses. */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];
/** Bind addresses that mean "every interface": the Host header then names something we cannot guess. */
const WILDCARD_BINDS = ['0.0.0.0', '::', '[::]'];

export interface HostRules {
  /** Config `host` the server binds to (a specific address is also a valid Host name). */
  bindHost: string;
  /** PUBLIC_BASE_URL (workspace sites behind a proxy); its host is accepted as is. */
  publicBaseUrl: string;
  /** Extra names from WEB_ALLOWED_HOSTS: `name` (with the server's port or none) or `name:port`. */
  extraHosts: string[];
}

function parseHost(header: string): { hostname: string; port: string; host: string } | undefined {
  if (!header || /[\s/\\@?#]/.test(header)) return undefined;
  try {
    const url = new URL(`http://${header}`);
    return { hostname: url.hostname.toLowerCase(), port: url.port, host: url.host.toLowerCase() };
  } catch {
    return undefined;
  }
}

/** How a request reached the server: by a local name (loopback, bound address, WEB_ALLOWED_HOSTS) or the public one. */
export type HostKind = 'local' | 'public';

/**
 * What a request's Host header names: `local` for a loopback name with the port the request came in on, the
 * bound address or a WEB_ALLOWED_HOSTS entry; `public` for the host of PUBLIC_BASE_URL (workspace sites behind a
 * proxy); undefined for anything else, which is refused so a DNS-rebinding page (evil.example resolving to
 * 127.0.0.1) cannot read or drive the server.
 *
 * @example hostKind('127.0.0.1:3000', 3000, { bindHost: '127.0.0.1', publicBaseUrl: '', extraHosts: [] }) // 'local'
 */
export function hostKind(header: string, localPort: number, rules: HostRules): HostKind | undefined {
  const parsed = parseHost(header);
  if (!parsed) return undefined;
  const portMatches = parsed.port === String(localPort) || (parsed.port === '' && localPort === 80);
  const names = [...LOOPBACK_NAMES];
  const bind = rules.bindHost.toLowerCase();
  if (!WILDCARD_BINDS.includes(bind)) names.push(bind.includes(':') && !bind.startsWith('[') ? `[${bind}]` : bind);
  if (names.includes(parsed.hostname) && portMatches) return 'local';
  for (const entry of rules.extraHosts) {
    const extra = parseHost(entry.trim());
    if (!extra) continue;
    if (extra.port ? extra.host === parsed.host : extra.hostname === parsed.hostname && (portMatches || parsed.port === '')) return 'local';
  }
  if (rules.publicBaseUrl) {
    try {
      if (new URL(rules.publicBaseUrl).host.toLowerCase() === parsed.host) return 'public';
    } catch {
      /* an unparsable PUBLIC_BASE_URL adds nothing */
    }
  }
  return undefined;
}

/**
 * True when a request's Host header names this server at all (see hostKind).
 * @example hostAllowed('evil.example:3000', 3000, rules) // false
 */
export function hostAllowed(header: string, localPort: number, rules: HostRules): boolean {
  return hostKind(header, localPort, rules) !== undefined;
}

/**
 * Koa middleware refusing (421) requests whose Host header is not an expected name (DNS rebinding); the others
 * get `ctx.state.hostKind` ('local' or 'public').
 * @example koa.use(hostGuard(() => rules))
 */
export function hostGuard(rules: () => HostRules) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const localPort = ctx.req.socket.localPort ?? 0;
    const kind = hostKind(ctx.get('host'), localPort, rules());
    if (!kind) {
      ctx.status = 421;
      ctx.type = 'text/plain';
      ctx.body = `Misdirected request: this server does not answer to that host name. Open it at http://127.0.0.1:${localPort}/ (or add the name to WEB_ALLOWED_HOSTS).\n`;
      return;
    }
    ctx.state.hostKind = kind;
    await next();
  };
}

const SAFE_METHODS = ['GET', 'HEAD', 'OPTIONS'];

/**
 * Why a state-changing request is cross-site, or undefined when it is not. `Sec-Fetch-Site` is set by the browser
 * and cannot be forged by a page, so it decides when present; otherwise `Origin` must name this host. A request
 * with neither comes from a non-browser client (and still needs a session and a CSRF token for the dashboard).
 *
 * @example crossSiteReason('POST', { origin: 'https://evil.example', host: '127.0.0.1:3000' }) // 'Origin is another site'
 */
export function crossSiteReason(method: string, headers: { origin?: string; secFetchSite?: string; host: string }): string | undefined {
  if (SAFE_METHODS.includes(method.toUpperCase())) return undefined;
  const site = headers.secFetchSite?.toLowerCase();
  if (site) return site === 'same-origin' || site === 'none' ? undefined : `Sec-Fetch-Site is ${site}`;
  if (headers.origin !== undefined && headers.origin !== '') {
    if (headers.origin === 'null') return 'Origin is null';
    try {
      if (new URL(headers.origin).host.toLowerCase() !== headers.host.toLowerCase()) return 'Origin is another site';
    } catch {
      return 'Origin is malformed';
    }
  }
  return undefined;
}

/**
 * Koa middleware refusing (403) cross-site state-changing requests (POST/PUT/PATCH/DELETE from another origin).
 * @example koa.use(crossSiteGuard())
 */
export function crossSiteGuard() {
  return async (ctx: Context, next: Next): Promise<void> => {
    const reason = crossSiteReason(ctx.method, { origin: ctx.get('origin') || undefined, secFetchSite: ctx.get('sec-fetch-site') || undefined, host: ctx.get('host') });
    if (reason) {
      ctx.status = 403;
      ctx.type = 'text/plain';
      ctx.body = 'Forbidden: cross-site requests may not change anything here.\n';
      return;
    }
    await next();
  };
}

/**
 * Headers for the server's own pages (`/` and `/config`): a strict CSP (scripts only from this server's own files —
 * the dashboard's one script — never inline; only the page's own inline stylesheet, pinned by hash; live updates
 * only from this server), no framing, no caching.
 *
 * @example pageHeaders(ctx, "'sha256-…'")
 */
export function pageHeaders(ctx: Context, styleHash: string): void {
  ctx.set(
    'Content-Security-Policy',
    `default-src 'none'; script-src 'self'; connect-src 'self'; style-src ${styleHash}; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
  );
  ctx.set('X-Frame-Options', 'DENY');
  // same-origin, not no-referrer: with no-referrer browsers send `Origin: null` on the page's own form posts.
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Pragma', 'no-cache');
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
  ctx.set('Cross-Origin-Resource-Policy', 'same-origin');
}

/**
 * Headers on every response, including plugins' static sites (workspace sites): no MIME sniffing, no referrer and no framing
 * unless the route (or pageHeaders) chose otherwise.
 */
export function baseHeaders(ctx: Context): void {
  ctx.set('X-Content-Type-Options', 'nosniff');
  if (!ctx.response.get('Referrer-Policy')) ctx.set('Referrer-Policy', 'no-referrer');
  if (!ctx.response.get('X-Frame-Options')) ctx.set('X-Frame-Options', 'DENY');
}
