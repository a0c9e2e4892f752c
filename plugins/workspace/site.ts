import path from 'node:path';
import { FileRefused, openInside } from './files.js';
import type { SiteHandler } from '../../core/index.js';
import type { WorkspaceStore } from './store.js';

/** Content types of the files a site may serve; anything else (python sources, data files) is not served. */
export const SITE_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.xml': 'application/xml; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.mp3': 'audio/mpeg',
  '.ogg': 'audio/ogg',
  '.wav': 'audio/wav',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.pdf': 'application/pdf',
  '.wasm': 'application/wasm',
};

/**
 * The content security policy of user sites. `sandbox` (without allow-same-origin) gives every site page an opaque
 * origin: its scripts cannot read the service's cookies or make same-origin requests to the dashboard even on the
 * main port; `connect-src 'none'` and `form-action 'none'` stop fetch/XHR and form posts anywhere.
 */
export const SITE_CSP = [
  "default-src 'self' data: blob:",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob: https:",
  "media-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "object-src 'none'",
  'sandbox allow-scripts allow-popups allow-downloads',
].join('; ');

const USERNAME_PATH = /^[a-z0-9-]{3,30}$/;

/** Splits the request path after `/<username>/` into checked parts, or undefined when any part is hostile. */
function safeParts(rest: string): string[] | undefined {
  const parts: string[] = [];
  const raw = rest.split('/');
  for (const [i, part] of raw.entries()) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(part);
    } catch {
      return undefined;
    }
    if (!decoded) {
      if (i === raw.length - 1) continue; // trailing slash: the folder's index.html
      return undefined;
    }
    // eslint-disable-next-line no-control-regex
    if (decoded.startsWith('.') || /[/\\\u0000-\u001f\u007f]/.test(decoded) || decoded.length > 100) return undefined;
    parts.push(decoded);
  }
  return parts;
}

/**
 * Koa middleware serving workspace sites at `/<username>/…`: static files of that workspace only, known content
 * types only, no listing, no dotfiles, no traversal, no symlinks (the open file is checked to lie inside the
 * workspace). Paths whose first part is not a claimed username fall through to the next middleware.
 *
 * @example koa.use(siteMiddleware(() => store));
 */
export function siteMiddleware(store: () => WorkspaceStore | undefined): SiteHandler {
  return async (ctx, next) => {
    const match = /^\/([^/]+)(\/.*)?$/.exec(ctx.path);
    const s = store();
    const name = match?.[1];
    const meta = s && name && USERNAME_PATH.test(name) ? s.byUsername(name) : undefined;
    if (!s || !meta || !match) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.status = 405;
      ctx.set('Allow', 'GET, HEAD');
      return;
    }
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Content-Security-Policy', SITE_CSP);
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
    ctx.set('Cache-Control', 'no-cache');
    if (match[2] === undefined) {
      ctx.status = 301;
      ctx.redirect(`./${name}/`);
      return;
    }
    const parts = safeParts(match[2].slice(1));
    const notFound = (text = 'Not found') => {
      ctx.status = 404;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = text;
    };
    if (!parts) return notFound();
    const relative = match[2].endsWith('/') ? [...parts, 'index.html'].join('/') : parts.join('/');
    const type = SITE_TYPES[path.extname(relative).toLowerCase()];
    if (!type) return notFound();
    try {
      const handle = await openInside(s.dirOf(meta), relative);
      const { size } = await handle.stat();
      ctx.status = 200;
      ctx.type = type;
      ctx.length = size;
      if (ctx.method === 'HEAD') {
        await handle.close();
        return;
      }
      ctx.body = handle.createReadStream({ autoClose: true });
    } catch (err) {
      if (err instanceof FileRefused) return notFound(relative === 'index.html' ? 'This site has no index.html yet.' : 'Not found');
      throw err;
    }
  };
}
