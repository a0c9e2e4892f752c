import type { Context } from 'koa';
import type Router from '@koa/router';
import { ApiError, formatScope, parseScopes, SCOPE_GRAMMAR, type ApiTokenInfo } from '../../core/operator.js';
import { timeTag } from '../format.js';
import { html, type SafeHtml } from '../html.js';
import type { ViewRouteDeps } from './view-route-deps.js';
import { shell, type Notice } from './views.js';

interface ApiTokensViewData {
  tokens: ApiTokenInfo[];
  csrf: string;
  /** A token just made: its secret, shown on this one answer and never again. */
  made?: { name: string; token: string };
  draft?: { name: string; scopes: string };
}

/** The API tokens view: make one (its secret shown once), the list with last use, revoke. */
function apiTokensView(data: ApiTokensViewData): SafeHtml {
  const made = data.made
    ? html`<section id="new-token" aria-labelledby="new-token-title"><h3 id="new-token-title">The token “${data.made.name}”</h3><p>Copy it now: it is shown only this once (only its hash is kept). Send it as <code>Authorization: Bearer &lt;token&gt;</code>.</p><p><code data-token>${data.made.token}</code></p></section>`
    : '';
  const rows = data.tokens.map(
    (t) =>
      html`<tr data-token-id="${t.id}"><td><code>${t.id}</code></td><td>${t.name}</td><td>${t.scopes.map((s) => html`<code>${formatScope(s)}</code> `)}</td><td>${timeTag(t.created)}</td><td>${t.lastUsed === undefined ? 'never' : timeTag(t.lastUsed)}</td><td><form method="post" action="/config/api/revoke"><input type="hidden" name="_csrf" value="${data.csrf}"><input type="hidden" name="id" value="${t.id}"><button type="submit" class="secondary">Revoke</button></form></td></tr>`,
  );
  const list = data.tokens.length
    ? html`<table><thead><tr><th scope="col">Id</th><th scope="col">Name</th><th scope="col">Scopes</th><th scope="col">Made</th><th scope="col">Last used</th><th scope="col">Revoke</th></tr></thead><tbody>${rows}</tbody></table>`
    : html`<p>No API tokens yet.</p>`;
  return html`${made}<section aria-labelledby="api-tokens-title"><h3 id="api-tokens-title">Tokens</h3>${list}</section>
<section aria-labelledby="api-make-title"><h3 id="api-make-title">Make a token</h3><form method="post" action="/config/api/create" id="api-create"><input type="hidden" name="_csrf" value="${data.csrf}">
<p><label>Name <input name="name" required maxlength="64" value="${data.draft?.name ?? ''}" placeholder="home-assistant"></label></p>
<p><label>Scopes <input name="scopes" required maxlength="2000" value="${data.draft?.scopes ?? ''}" placeholder="send:447700900123,read:447700900123"></label></p>
<p class="hint">${SCOPE_GRAMMAR}. See docs/owners/local-api.md.</p>
<p><button type="submit">Make the token</button></p></form></section>`;
}

/**
 * The dashboard's API tokens (`/config/api`): the same store as `npm run token` (made, listed with last use, revoked),
 * through the operator port. Every POST passes the dashboard's session + CSRF check (`authorisedForm`); the secret
 * of a new token is in that one answer only (no redirect: it is never in a URL, and the page is not cached).
 */
export function mountApiTokenRoutes(router: Router, deps: ViewRouteDeps): void {
  const { app } = deps;
  const tokens = () => app.automation.tokens;

  const render = (ctx: Context, status: number, notice?: Notice, extra: Pick<ApiTokensViewData, 'made' | 'draft'> = {}) => {
    const session = deps.currentSession(ctx);
    if (!session) {
      ctx.status = 303;
      ctx.redirect('/config/login');
      return;
    }
    deps.send(ctx, status, shell({ botName: app.config.botName, csrf: session.csrf, active: 'api', title: 'API tokens', body: apiTokensView({ tokens: tokens().list(), csrf: session.csrf, ...extra }), notice }));
  };

  router.get('/config/api', (ctx) => render(ctx, 200, ctx.query.done === 'revoked' ? { kind: 'ok', text: 'Revoked: the token is refused from its next request on.' } : undefined));

  router.post('/config/api/create', async (ctx) => {
    const ok = await deps.authorisedForm(ctx);
    if (!ok) return;
    const name = (ok.form.get('name') ?? '').slice(0, 200);
    const scopes = (ok.form.get('scopes') ?? '').slice(0, 2000);
    try {
      const { token, info } = tokens().create(name, parseScopes(scopes));
      app.log.info({ apiToken: info.name, apiTokenId: info.id, scopes: info.scopes.map(formatScope), ip: ctx.ip }, 'an API token was made from the dashboard');
      render(ctx, 200, { kind: 'ok', text: `Made the token “${info.name}”: copy it below now, it is not shown again.` }, { made: { name: info.name, token } });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      render(ctx, 422, { kind: 'error', text: `Not made: ${err.message}` }, { draft: { name, scopes } });
    }
  });

  router.post('/config/api/revoke', async (ctx) => {
    const ok = await deps.authorisedForm(ctx);
    if (!ok) return;
    const gone = tokens().revoke(ok.form.get('id') ?? '');
    if (!gone) return render(ctx, 404, { kind: 'error', text: 'There is no such token. Nothing was changed.' });
    app.log.info({ apiToken: gone.name, apiTokenId: gone.id, ip: ctx.ip }, 'an API token was revoked from the dashboard');
    ctx.status = 303;
    ctx.redirect('/config/api?done=revoked');
  });
}
