/** Static files a plugin serves through the web server (see `PluginHost.serveSite`). */
export interface SiteDeclaration {
  /** What is served, for the start log: e.g. `workspace sites` ("workspace sites served on port 8081 (SITE_PORT)"). */
  label: string;
  /** Serves GET/HEAD `/<name>/…`; calls `next()` for anything it does not serve. */
  handler: SiteHandler;
}

/**
 * One web request as a site handler sees it: the part of the web server's request context that serving files needs.
 * The web server hands in its Koa context, which has these members (and more); declared here so that the plugin API
 * carries no web-server types.
 */
export interface SiteRequest {
  readonly method: string;
  /** The request path, without the query. */
  readonly path: string;
  status: number;
  /** The Content-Type (a full value such as `text/html; charset=utf-8`, or an extension). */
  type: string;
  /** The Content-Length in bytes. */
  length: number;
  /** A string, a Buffer or a readable stream. */
  body: unknown;
  /** Sets a response header. */
  set(field: string, value: string): void;
  redirect(url: string): void;
}

/**
 * A site's request handler, middleware-style: answers by setting `ctx.status`/`ctx.body`, or calls `next()` to let
 * the web server go on (a 404 in the end).
 *
 * @example
 * const handler: SiteHandler = async (ctx, next) => { if (ctx.path !== '/hello/') return next(); ctx.type = 'text/plain'; ctx.body = 'hi'; };
 */
export type SiteHandler = (ctx: SiteRequest, next: () => Promise<unknown>) => unknown;
