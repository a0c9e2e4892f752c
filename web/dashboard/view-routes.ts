import { statfs } from 'node:fs/promises';
import type { Context } from 'koa';
import type Router from '@koa/router';
import { ConfigError, saveConfigFile } from '../../core/operator.js';
import type { Access } from '../../core/operator.js';
import { LEVEL_RANK, logTail, type TailLine } from '../../core/operator.js';
import { recentProblems } from '../../core/operator.js';
import { today } from '../../core/operator.js';
import { humanDuration, projectVersion } from '../../core/operator.js';
import type { SafeHtml } from '../html.js';
import type { DashboardSession } from './auth.js';
import type { ViewRouteDeps } from './view-route-deps.js';
import { mountAccessRoutes } from './access-routes.js';
import { mountApiTokenRoutes } from './api-tokens-routes.js';
import { DASHBOARD_SCRIPT } from './client-script.js';
import { idList, orderLike, sectionKeysOf } from './config-form.js';
import { readOptions } from './option-form.js';
import {
  legsRegion,
  linkRegion,
  logLineHtml,
  logView,
  pluginsView,
  providersRegion,
  providersView,
  relinkConfirmView,
  SCRIPT_PATH,
  shell,
  statusView,
  usageRegion,
  usageView,
  type Notice,
  type PluginCard,
  type UsageViewData,
  type ViewId,
} from './views.js';

export type { ViewRouteDeps } from './view-route-deps.js';

/** How often the live views are re-rendered for their server-sent events (only changed regions are sent). */
const LIVE_INTERVAL_MS = 1000;

const LIMIT_FIELDS = ['requestsPerMinute', 'tokensPerDay', 'premiumTokensPerDay', 'quotaMainTokens', 'quotaPremiumTokens'] as const;

/**
 * The dashboard's views besides the settings form: status, providers, usage, plugins and log, their forms
 * (relink with confirmation, "test now", limits, plugin options built from each plugin's schema) and the live
 * updates (server-sent events). Every route sits behind the dashboard's session, CSRF, Host and cross-site guards.
 */
export function mountViews(router: Router, deps: ViewRouteDeps): void {
  const { app } = deps;

  /** Renders a view for a logged-in session, or sends the visitor to the login. */
  const page = async (ctx: Context, status: number, active: ViewId, title: string, body: (session: DashboardSession) => Promise<SafeHtml> | SafeHtml, notice?: Notice, live = true) => {
    const session = deps.currentSession(ctx);
    if (!session) {
      ctx.status = 303;
      ctx.redirect('/config/login');
      return;
    }
    deps.send(ctx, status, shell({ botName: app.config.botName, csrf: session.csrf, active, title, body: await body(session), notice, live }));
  };

  const qrSvg = async (qr: string | undefined) => {
    if (!qr) return undefined;
    const QRCode = (await import('qrcode')).default;
    return QRCode.toString(qr, { type: 'svg', margin: 2, width: 280 });
  };

  const statusData = async (csrf: string) => {
    const session = deps.transport()?.session() ?? { status: 'offline' as const, lastError: 'no transport connected yet' };
    let freeDisk: { bytes: number; dir: string } | undefined;
    try {
      const fs = await statfs(app.settings.dataDir);
      freeDisk = { bytes: fs.bavail * fs.bsize, dir: app.settings.dataDir };
    } catch {
      freeDisk = undefined;
    }
    // The service's uptime (since the app started), as `.status` says it.
    const uptimeMs = (await app.bot.statusSource?.())?.uptimeMs ?? process.uptime() * 1000;
    const searchCheck = app.startChecks.find((c) => c.name === 'search');
    return { session, legs: app.chain.health(), ...(searchCheck ? { searchCheck: { ok: searchCheck.ok, ...(searchCheck.degraded ? { degraded: true } : {}), detail: searchCheck.detail, ...(searchCheck.fix ? { fix: searchCheck.fix } : {}) } } : {}), problems: recentProblems.list(), qrSvg: session.status === 'qr' ? await qrSvg(session.qr) : undefined, uptimeMs, version: projectVersion(), freeDisk, canRelink: Boolean(deps.transport()?.relink), sessionStored: session.status === 'linked' || Boolean(session.me), canPair: Boolean(deps.transport()?.requestPairingCode), incidents: app.bot.notices.incidents?.() ?? [], csrf };
  };

  const providersData = (csrf: string) => ({
    legs: app.chain.health(),
    audio: { keys: app.settings.audio.keys.length, status: app.capabilities.status('audio') },
    capabilities: app.capabilities.report(),
    csrf,
  });

  const usageData = async (csrf: string, problems: UsageViewData['problems'] = [], limits?: UsageViewData['limits']): Promise<UsageViewData> => {
    const usage = await app.usage.snapshot();
    const day = today();
    const rows = Object.entries(usage.days?.[day] ?? {}).map(([key, c]) => {
      const [leg, ...model] = key.split('|');
      return { leg: leg ?? key, model: model.join('|'), requests: c.requests, total: c.total };
    });
    const ai = app.config.ai;
    return {
      day,
      rows,
      users: await app.budgets.todayByUser(),
      totals: usage.totals,
      limits: limits ?? { requestsPerMinute: ai.requestsPerMinute, tokensPerDay: ai.tokensPerDay, premiumTokensPerDay: ai.premiumTokensPerDay, quotaMainTokens: ai.quotaMainTokens, quotaPremiumTokens: ai.quotaPremiumTokens },
      problems,
      csrf,
    };
  };

  const pluginCards = async (draft?: { name: string; enabled: boolean; access: Access; values: Record<string, unknown>; problems: PluginCard['problems'] }, opened?: string): Promise<PluginCard[]> => {
    const config = await deps.readConfig();
    const panels = await Promise.all(app.bot.plugins().map((s) => panelOf(s)));
    return app.bot.plugins().map((s, i) => {
      const section = (config.plugins?.[s.plugin.name] ?? {}) as Record<string, unknown>;
      const { enabled: _e, access: _a, ...values } = section;
      const missing = app.capabilities.missing(s.plugin.needs ?? []);
      // Refused at registration: the card says why (the owner did not turn it off; switching it on changes nothing).
      const state = s.refused ? `off: ${s.refused.message}` : !s.enabled ? 'turned off' : !s.started ? `inactive: ${s.problem ?? 'not started'}` : missing.length ? `active, degraded: missing ${missing.join(', ')}` : 'active';
      const core = s.core ? (s.core.canTurnOff ? ' (core plugin)' : ' (core plugin, always on)') : '';
      const own = draft?.name === s.plugin.name ? draft : undefined;
      return {
        name: s.plugin.name,
        description: s.plugin.description,
        state: state + core,
        healthy: s.enabled && s.started && !missing.length,
        alwaysOn: s.core && !s.core.canTurnOff ? s.core.why : undefined,
        enabled: own?.enabled ?? ((section.enabled as boolean | undefined) ?? s.plugin.enabledByDefault ?? true),
        access: own?.access ?? ((section.access as Access | undefined) ?? 'everyone'),
        schema: s.plugin.optionsSchema,
        values: own?.values ?? values,
        problems: own?.problems ?? [],
        open: opened === s.plugin.name,
        ...(panels[i] ? { panel: panels[i] } : {}),
      };
    });
  };

  /** A started plugin's dashboard panel, read now; a read that fails is shown as such and logged, never the page's end. */
  const panelOf = async (s: ReturnType<typeof app.bot.plugins>[number]): Promise<PluginCard['panel']> => {
    const panel = s.started ? s.instance?.panel : undefined;
    if (!panel) return undefined;
    const actions = (panel.actions ?? []).map(({ name, label, field }) => ({ name, label, field }));
    try {
      const tables = await panel.read();
      return { tables: Array.isArray(tables) ? tables : [], actions };
    } catch (err) {
      app.log.error({ err, plugin: s.plugin.name }, 'a plugin failed to read its dashboard panel');
      return { tables: [], actions, error: `${s.plugin.name} could not read what it keeps just now; the log has the details.` };
    }
  };

  router.post('/config/plugins/panel', async (ctx) => {
    const ok = await deps.authorisedForm(ctx);
    if (!ok) return;
    const form = ok.form;
    const state = app.bot.plugins().find((s) => s.plugin.name === form.get('plugin'));
    const action = state?.started ? state.instance?.panel?.actions?.find((a) => a.name === form.get('action')) : undefined;
    if (!state || !action) {
      await page(ctx, 404, 'plugins', 'Plugins', async (s) => pluginsView(await pluginCards(), s.csrf), { kind: 'error', text: 'There is no such plugin action (is the plugin on?).' }, false);
      return;
    }
    const value = (form.get('value') ?? '').trim().slice(0, 500);
    let said: { kind: 'ok' | 'error'; text: string };
    try {
      said = { kind: 'ok', text: String(await action.run(value)) };
      app.log.info({ plugin: state.plugin.name, action: action.name, ip: ctx.ip }, `dashboard: ${state.plugin.name} ${action.name}`);
    } catch (err) {
      app.log.error({ err, plugin: state.plugin.name, action: action.name }, 'a plugin action from the dashboard failed');
      said = { kind: 'error', text: `${state.plugin.name} could not do that; the log has the details.` };
    }
    await page(ctx, said.kind === 'ok' ? 200 : 500, 'plugins', 'Plugins', async (s) => pluginsView(await pluginCards(undefined, state.plugin.name), s.csrf), said, false);
  });

  /** The regions of a live view, rendered exactly as on the full page. */
  const regions = async (view: string, csrf: string): Promise<Record<string, string>> => {
    if (view === 'status') {
      const d = await statusData(csrf);
      return { link: linkRegion(d).value, legs: legsRegion(d).value, uptime: humanDuration(d.uptimeMs) };
    }
    if (view === 'providers') return { providers: providersRegion(providersData(csrf)).value };
    if (view === 'usage') return { usage: usageRegion(await usageData(csrf)).value };
    return {};
  };

  router.get(SCRIPT_PATH, (ctx) => {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = DASHBOARD_SCRIPT;
  });

  router.get('/config/settings', (ctx) => {
    ctx.status = 303;
    ctx.redirect('/config');
  });

  // ----- status -----
  router.get('/config/status', async (ctx) => {
    const notice: Notice | undefined =
      ctx.query.relinked === '1'
        ? { kind: 'warn', text: 'Logged out of WhatsApp: scan the new QR code to link again.' }
        : ctx.query.pairing === '1'
          ? { kind: 'ok', text: 'Pairing code asked for: on the phone open WhatsApp → Linked devices → Link a device → "Link with phone number instead" and type the code shown below.' }
          : undefined;
    await page(ctx, 200, 'status', 'Status', async (s) => statusView(await statusData(s.csrf)), notice);
  });

  router.post('/config/status/relink', async (ctx) => {
    const ok = await deps.authorisedForm(ctx);
    if (!ok) return;
    const transport = deps.transport();
    if (!transport?.relink) {
      await page(ctx, 409, 'status', 'Status', async (s) => statusView(await statusData(s.csrf)), { kind: 'error', text: 'This transport cannot relink from the dashboard.' });
      return;
    }
    if (ok.form.get('confirm') !== 'yes') {
      await page(ctx, 200, 'status', 'Confirm: log out and relink', () => relinkConfirmView(ok.session.csrf), undefined, false);
      return;
    }
    app.log.warn({ ip: ctx.ip }, 'WhatsApp relink requested from the dashboard: logging out');
    await transport.relink();
    ctx.status = 303;
    ctx.redirect('/config/status?relinked=1');
  });

  router.post('/config/status/pairing-code', async (ctx) => {
    const ok = await deps.authorisedForm(ctx);
    if (!ok) return;
    const transport = deps.transport();
    const again = async (status: number, notice: Notice) => page(ctx, status, 'status', 'Status', async (s) => statusView(await statusData(s.csrf)), notice);
    if (!transport?.requestPairingCode) {
      await again(409, { kind: 'error', text: `Linking with a phone number is not available with the ${transport?.name ?? 'current'} transport.` });
      return;
    }
    try {
      await transport.requestPairingCode(ok.form.get('phone') ?? '');
    } catch (err) {
      await again(422, { kind: 'error', text: `No pairing code: ${(err as Error).message}.` });
      return;
    }
    app.log.info({ ip: ctx.ip }, 'pairing code asked for from the dashboard');
    ctx.status = 303;
    ctx.redirect('/config/status?pairing=1');
  });

  // ----- providers -----
  router.get('/config/providers', async (ctx) => {
    const result = typeof ctx.query.tested === 'string' ? ctx.query.tested : undefined;
    const notice: Notice | undefined = result ? { kind: ctx.query.ok === '1' ? 'ok' : 'error', text: `Test: ${result}.` } : undefined;
    await page(ctx, 200, 'providers', 'Providers', (s) => providersView(providersData(s.csrf)), notice);
  });

  router.post('/config/providers/test', async (ctx) => {
    const ok = await deps.authorisedForm(ctx);
    if (!ok) return;
    const outcome = await app.chain.testLeg(ok.form.get('leg') ?? '');
    ctx.status = 303;
    ctx.redirect(`/config/providers?ok=${outcome.ok ? 1 : 0}&tested=${encodeURIComponent(outcome.text)}`);
  });

  // ----- usage -----
  router.get('/config/usage', async (ctx) => {
    const notice: Notice | undefined = ctx.query.saved === '1' ? { kind: 'ok', text: 'Limits saved and applied.' } : undefined;
    await page(ctx, 200, 'usage', 'Usage', async (s) => usageView(await usageData(s.csrf)), notice);
  });

  router.post('/config/usage/limits', async (ctx) => {
    const ok = await deps.authorisedForm(ctx);
    if (!ok) return;
    const problems: UsageViewData['problems'] = [];
    const limits = {} as UsageViewData['limits'];
    for (const field of LIMIT_FIELDS) {
      const text = (ok.form.get(field) ?? '').trim();
      if (!/^\d{1,12}$/.test(text)) problems.push({ field, message: `${field}: must be a whole number, 0 or more (got "${text.slice(0, 20)}")` });
      limits[field] = /^\d{1,12}$/.test(text) ? Number(text) : (app.config.ai[field] as number);
    }
    if (problems.length) {
      await page(ctx, 422, 'usage', 'Usage', async (s) => usageView(await usageData(s.csrf, problems, limits)), { kind: 'error', text: 'Not saved: fix the marked fields.' });
      return;
    }
    const config = await deps.readConfig();
    config.ai = { ...(config.ai ?? {}), ...limits };
    const saved = await saveOrExplain(ctx, config, 'usage');
    if (!saved) return;
    app.usage.setQuotas(saved.ai.quotaMainTokens, saved.ai.quotaPremiumTokens);
    app.log.info({ changed: ['ai'], ip: ctx.ip }, 'limits saved from the dashboard and applied');
    ctx.status = 303;
    ctx.redirect('/config/usage?saved=1');
  });

  // ----- plugins -----
  router.get('/config/plugins', async (ctx) => {
    const name = typeof ctx.query.saved === 'string' ? ctx.query.saved : undefined;
    await page(ctx, 200, 'plugins', 'Plugins', async (s) => pluginsView(await pluginCards(undefined, name), s.csrf), name ? { kind: 'ok', text: `Saved ${name} and applied.` } : undefined, false);
  });

  router.post('/config/plugins/save', async (ctx) => {
    const ok = await deps.authorisedForm(ctx);
    if (!ok) return;
    const form = ok.form;
    const state = app.bot.plugins().find((s) => s.plugin.name === form.get('plugin'));
    if (!state) {
      await page(ctx, 404, 'plugins', 'Plugins', async (s) => pluginsView(await pluginCards(), s.csrf), { kind: 'error', text: 'There is no such plugin.' }, false);
      return;
    }
    const plugin = state.plugin;
    const config = await deps.readConfig();
    const previous = (config.plugins?.[plugin.name] ?? {}) as Record<string, unknown>;
    const { enabled: wasEnabled, access: hadAccess, ...previousOptions } = previous;
    const choice = form.get('access');
    const access: Access = choice === 'owners' ? 'owners' : choice === 'list' ? idList(form.get('ids')) : 'everyone';
    const enabled = form.get('enabled') === 'on';
    const { values, problems } = readOptions(form, plugin.optionsSchema, previousOptions);
    if (!enabled && state.core && !state.core.canTurnOff) {
      problems.push({ field: 'enabled', message: `${plugin.name} is a core plugin that cannot be turned off: ${state.core.why}.` });
    }
    if (problems.length) {
      await page(ctx, 422, 'plugins', 'Plugins', async (s) => pluginsView(await pluginCards({ name: plugin.name, enabled, access, values, problems }), s.csrf), { kind: 'error', text: `Not saved: ${problems.some((p) => p.field === 'enabled') ? `${plugin.name} is a core plugin that cannot be turned off` : `${plugin.name} has options that are not valid`}.` }, false);
      return;
    }
    // Only what differs from what the card showed is written: the defaults stay out of config.json.
    const section: Record<string, unknown> = { ...values };
    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
    if (!same(enabled, wasEnabled ?? plugin.enabledByDefault ?? true)) section.enabled = enabled;
    else if (wasEnabled !== undefined) section.enabled = wasEnabled;
    if (!same(access, hadAccess ?? 'everyone')) section.access = access;
    else if (hadAccess !== undefined) section.access = hadAccess;
    config.plugins = { ...(config.plugins ?? {}), [plugin.name]: orderLike(previous, section) };
    const saved = await saveOrExplain(ctx, config, 'plugins');
    if (!saved) return;
    app.log.info({ changed: [`plugins.${plugin.name}`], ip: ctx.ip }, `plugin ${plugin.name} saved from the dashboard and applied`);
    ctx.status = 303;
    ctx.redirect(`/config/plugins?saved=${encodeURIComponent(plugin.name)}#plugin-${plugin.name}`);
  });

  const saveOrExplain = async (ctx: Context, config: Record<string, any>, view: 'usage' | 'plugins') => {
    try {
      const saved = await saveConfigFile(app.configFile, config, sectionKeysOf(app.bot.plugins().map((s) => s.plugin)));
      app.bot.setConfig(saved);
      return saved;
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      const text = `Not saved: ${err.problems.join('; ')}`;
      if (view === 'usage') await page(ctx, 422, 'usage', 'Usage', async (s) => usageView(await usageData(s.csrf)), { kind: 'error', text });
      else await page(ctx, 422, 'plugins', 'Plugins', async (s) => pluginsView(await pluginCards(), s.csrf), { kind: 'error', text }, false);
      return undefined;
    }
  };

  mountAccessRoutes(router, deps);
  mountApiTokenRoutes(router, deps);

  // ----- log -----
  const levelOf = (value: unknown): TailLine['level'] => (typeof value === 'string' && value in LEVEL_RANK ? (value as TailLine['level']) : 'info');
  router.get('/config/log', async (ctx) => {
    const level = levelOf(ctx.query.level);
    await page(ctx, 200, 'log', 'Log', () => logView(logTail.list(level).slice(-200), level), undefined, false);
  });

  // ----- live updates (server-sent events) -----
  /**
   * Opens a stream that lives exactly as long as the session: it ends (after a `session-ended` event, so the page's
   * script stops reconnecting) at logout, at expiry, or when the client goes. An open stream does not count as use:
   * a tab left open still idles out. Returns undefined (answered 401) without a live session.
   */
  const openStream = (ctx: Context, onClose: () => void) => {
    let closed = false;
    let unwatch: (() => void) | undefined;
    const close = () => {
      if (closed) return;
      closed = true;
      unwatch?.();
      onClose();
      if (!ctx.res.writableEnded) ctx.res.end('event: session-ended\ndata: {}\n\n');
    };
    unwatch = deps.watchSession(ctx, close);
    if (!unwatch || closed) {
      if (!closed) {
        ctx.status = 401;
        ctx.body = 'Not logged in\n';
      }
      return undefined;
    }
    ctx.req.socket.setTimeout(0);
    ctx.req.socket.setNoDelay(true);
    ctx.status = 200;
    ctx.type = 'text/event-stream';
    ctx.set('Cache-Control', 'no-store');
    ctx.set('X-Accel-Buffering', 'no');
    ctx.respond = false;
    ctx.res.writeHead(200, Object.fromEntries(Object.entries(ctx.response.headers).map(([k, v]) => [k, String(v)])));
    ctx.res.write(': live\n\n');
    ctx.req.on('close', close);
    return (event: string, data: unknown) => {
      if (!closed) ctx.res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
  };

  router.get('/config/events', async (ctx) => {
    const session = deps.currentSession(ctx);
    if (!session) {
      ctx.status = 401;
      ctx.body = 'Not logged in\n';
      return;
    }
    const view = String(ctx.query.view ?? '');
    let timer: NodeJS.Timeout | undefined;
    const emit = openStream(ctx, () => clearInterval(timer));
    if (!emit) return;
    const last: Record<string, string> = {};
    let busy = false;
    const tick = async () => {
      if (busy) return;
      busy = true;
      try {
        const now = await regions(view, session.csrf);
        const changed = Object.fromEntries(Object.entries(now).filter(([k, v]) => last[k] !== v));
        if (Object.keys(changed).length) {
          Object.assign(last, changed);
          emit('regions', changed);
        }
      } catch (err) {
        app.log.warn({ err }, 'dashboard live update failed');
      } finally {
        busy = false;
      }
    };
    timer = setInterval(() => void tick(), LIVE_INTERVAL_MS);
    await tick();
  });

  router.get('/config/log/stream', async (ctx) => {
    if (!deps.currentSession(ctx)) {
      ctx.status = 401;
      ctx.body = 'Not logged in\n';
      return;
    }
    const level = levelOf(ctx.query.level);
    const after = Number(ctx.query.after ?? 0) || 0;
    let off: (() => void) | undefined;
    const emit = openStream(ctx, () => off?.());
    if (!emit) return;
    const send = (line: TailLine) => {
      if (line.seq > after && LEVEL_RANK[line.level] >= LEVEL_RANK[level]) emit('line', { seq: line.seq, html: logLineHtml(line).value });
    };
    for (const line of logTail.list(level).slice(-200)) send(line);
    off = logTail.subscribe(send);
  });
}

