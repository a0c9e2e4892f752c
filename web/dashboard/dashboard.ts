import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Context, Middleware } from 'koa';
import Router from '@koa/router';
import type { OperatorPort } from '../../core/operator.js';
import { ConfigError, saveConfigFile } from '../../core/operator.js';
import { shownSocketUrl } from '../../core/operator.js';
import { recentProblems } from '../../core/operator.js';
import { isLid, userPart } from '../../core/operator.js';
import { today } from '../../core/operator.js';
import type { Transport } from '../../core/operator.js';
import type { SafeHtml } from '../html.js';
import { pageHeaders } from '../security.js';
import { PAGE_CSS_HASH } from '../style.js';
import { FailedLogins, LoginLimiter, randomSecret, sameSecret, SessionStore, tokenMatches, type DashboardSession } from './auth.js';
import { formToConfig, isTextSection, sectionKeysOf, sectionText, type FieldProblem } from './config-form.js';
import { BodyError, readForm } from './form-body.js';
import { dashboardPage, loginPage, messagePage, type DashboardView } from './pages.js';
import { mountViews } from './view-routes.js';

/** Cookie of a logged-in dashboard session (signed; the value is a random session id). */
export const SESSION_COOKIE = 'wab_dash';
/** Cookie carrying the login form's CSRF token before there is a session (signed, double-submit). */
export const LOGIN_COOKIE = 'wab_login';

export interface DashboardOptions {
  sessions?: SessionStore;
  limiter?: LoginLimiter;
  /** How often failed logins are summarised in the log (default a minute; tests shorten it). */
  failureSummaryMs?: number;
}

interface ConfigOnDisk {
  value: Record<string, any>;
  version: string;
  /** Set when the file could not be read as JSON (the live config is shown instead). */
  problem?: string;
}

/**
 * The `/config` dashboard as Koa middleware: token login (constant-time compare; wrong tokens slowed per address
 * and globally and logged as a periodic summary; the right one never slowed, so never locked out),
 * a signed httpOnly SameSite=Strict session cookie, a CSRF token on every form, the config form (validated with
 * the start-up schema, written atomically with a backup, applied at once) and the service's health.
 * Mount it only when CONFIG_TOKEN is set; the caller answers 404 otherwise.
 *
 * @example koa.use(dashboard(app, () => transport));
 */
export function dashboard(app: OperatorPort, transport: () => Transport | undefined, options: DashboardOptions = {}): Middleware {
  const sessions = options.sessions ?? new SessionStore();
  const limiter = options.limiter ?? new LoginLimiter();
  const failedLogins = new FailedLogins((line, detail) => app.log.warn(detail, line), options.failureSummaryMs);
  // What the running server was started with: a saved port/host differing from it needs a restart.
  const running = { host: app.config.host, port: app.config.port };
  let saving: Promise<unknown> = Promise.resolve();
  const router = new Router();

  const cookieOptions = (ctx: Context, maxAge: number) => ({
    httpOnly: true,
    sameSite: 'strict' as const,
    signed: true,
    secure: ctx.secure,
    path: '/config',
    maxAge,
    overwrite: true,
  });

  const send = (ctx: Context, status: number, page: SafeHtml) => {
    ctx.status = status;
    ctx.type = 'html';
    ctx.body = page.value;
  };

  const currentSession = (ctx: Context): DashboardSession | undefined => sessions.get(ctx.cookies.get(SESSION_COOKIE, { signed: true }));

  const readConfigFile = async (): Promise<ConfigOnDisk> => {
    let text = '';
    try {
      text = await readFile(app.configFile, 'utf8');
      const value = JSON.parse(text) as unknown;
      if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error('not a JSON object');
      return { value: value as Record<string, any>, version: hash(text) };
    } catch (err) {
      return { value: structuredClone(app.config) as unknown as Record<string, any>, version: hash(text), problem: (err as Error).message };
    }
  };

  const view = async (session: DashboardSession, draft: { config: Record<string, any>; optionTexts: Record<string, string>; problems: FieldProblem[] } | undefined, version: string, notice?: DashboardView['notice']): Promise<DashboardView> => {
    const t = transport();
    const state = t?.session() ?? { status: 'offline' as const };
    const config = draft?.config ?? (await readConfigFile()).value;
    const targets: string[] = Array.isArray(config.targetUserIds) ? config.targetUserIds.map(String) : [];
    const ownIds = (t?.ownIds() ?? []).map((raw) => {
      const id = userPart(raw);
      const label = state.me?.lid && userPart(state.me.lid) === id ? 'LID' : isLid(raw) ? 'LID' : state.me?.id && userPart(state.me.id) === id ? 'phone id' : raw.includes('@s.whatsapp.net') ? 'phone id' : 'id';
      return { id, label, added: targets.includes(id) };
    });
    const usage = await app.usage.snapshot();
    const day = today();
    const rows = Object.entries(usage.days?.[day] ?? {}).map(([key, c]) => {
      const [leg, ...model] = key.split('|');
      return { leg: leg ?? key, model: model.join('|'), requests: c.requests, prompt: c.prompt, cached: c.cached ?? 0, completion: c.completion, total: c.total };
    });
    return {
      botName: app.config.botName,
      csrf: session.csrf,
      version,
      config,
      optionTexts: draft?.optionTexts ?? {},
      problems: draft?.problems ?? [],
      notice,
      session: state,
      ownIds,
      plugins: app.bot.plugins().map((s) => {
        const missing = app.capabilities.missing(s.plugin.needs ?? []);
        const text = s.refused ? `off: ${s.refused.message}` : !s.enabled ? 'disabled' : !s.started ? `inactive: ${s.problem ?? 'not started'}` : missing.length ? `active, degraded: missing ${missing.join(', ')}` : 'active';
        const core = s.core ? (s.core.canTurnOff ? ' (core plugin)' : ' (core plugin, always on)') : '';
        return { name: s.plugin.name, description: s.plugin.description, state: text + core, healthy: s.enabled && s.started && !missing.length, hasSchema: Boolean(s.plugin.optionsSchema), defaultEnabled: s.plugin.enabledByDefault ?? true, alwaysOn: s.core && !s.core.canTurnOff ? s.core.why : undefined };
      }),
      sections: app.bot.configSections().map((s) => {
        const value = config[s.key];
        const text = isTextSection(s.rule);
        const shown = draft?.optionTexts[`section:${s.key}`] ?? sectionText(s.rule, value);
        return { key: s.key, plugin: s.plugin, description: String((s.rule.schema as { description?: unknown }).description ?? ''), text, schema: s.rule.schema, value: shown, problems: s.problems };
      }),
      capabilities: app.capabilities.report(),
      envOnly: [
        // The core's own: where the WhatsApp socket connects (credentials in the URL are never shown).
        { plugin: 'whatsapp', name: 'WA_WEBSOCKET_URL', description: "the WebSocket URL WhatsApp connects to instead of WhatsApp's own (a test server or a proxy you run; it sees the whole session)", value: app.settings.whatsappSocketUrl ? shownSocketUrl(app.settings.whatsappSocketUrl) : undefined },
        ...app.bot.plugins().flatMap((s) => {
          const moved = new Set(Object.values(s.plugin.movedToEnv ?? {}));
          return (s.plugin.settings ?? []).filter((d) => moved.has(d.name)).map((d) => ({ plugin: s.plugin.name, name: d.name, description: d.description, value: app.settings.env[d.name] || undefined }));
        }),
      ],
      legs: app.chain.health(),
      gateways: app.gatewayHealth,
      audio: { keys: app.settings.audio.keys.length, status: app.capabilities.status('audio') },
      usage: { day, rows, totals: usage.totals, quotas: usage.quotas },
      pluginFailures: app.pluginFailures,
      recentProblems: recentProblems.list(),
      data: { ...app.dataProblems(), freeBytes: app.freeSpace()?.freeBytes, low: app.freeSpace()?.low },
      running,
      now: Date.now(),
    };
  };

  /** Reads the form and checks the session's CSRF token; answers (401/403/4xx) and returns undefined on failure. */
  const authorisedForm = async (ctx: Context): Promise<{ session: DashboardSession; form: URLSearchParams } | undefined> => {
    const session = currentSession(ctx);
    if (!session) {
      send(ctx, 401, messagePage('Not logged in', 'Your dashboard session is missing, forged or expired. Nothing was changed. Log in again.', { href: '/config/login', label: 'Log in' }));
      return undefined;
    }
    const form = await readFormOrAnswer(ctx);
    if (!form) return undefined;
    if (!sameSecret(form.get('_csrf'), session.csrf)) {
      send(ctx, 403, messagePage('Missing security token', 'The form did not carry this session\'s CSRF token, so nothing was changed. Reload the dashboard and try again.', { href: '/config', label: 'Back to the dashboard' }));
      return undefined;
    }
    return { session, form };
  };

  const readFormOrAnswer = async (ctx: Context): Promise<URLSearchParams | undefined> => {
    try {
      return await readForm(ctx);
    } catch (err) {
      if (!(err instanceof BodyError)) throw err;
      send(ctx, err.status, messagePage('Form refused', `${err.message} Nothing was changed.`, { href: '/config', label: 'Back to the dashboard' }));
      return undefined;
    }
  };

  router.get('/config/login', async (ctx) => {
    if (currentSession(ctx)) return ctx.redirect('/config');
    const csrf = randomSecret();
    ctx.cookies.set(LOGIN_COOKIE, csrf, cookieOptions(ctx, 30 * 60_000));
    send(ctx, 200, loginPage({ botName: app.config.botName, csrf, notice: ctx.query.out === '1' ? 'Logged out.' : undefined }));
  });

  router.post('/config/login', async (ctx) => {
    const address = ctx.ip;
    const form = await readFormOrAnswer(ctx);
    if (!form) return;
    const expected = ctx.cookies.get(LOGIN_COOKIE, { signed: true });
    if (!expected || !sameSecret(form.get('_csrf'), expected)) {
      send(ctx, 403, messagePage('Missing security token', 'The login form had no valid CSRF token (cookies off, or the form is too old). Open the login page again.', { href: '/config/login', label: 'Log in' }));
      return;
    }
    // The token is compared first: the right one never waits and is never refused, however many wrong ones a local
    // process sends (only wrong ones are slowed), and a flood of wrong ones is logged as a summary a minute.
    if (tokenMatches(form.get('token') ?? '', app.settings.configToken)) {
      limiter.succeed(address);
    } else {
      const admission = await limiter.admit(address);
      const { nextDelayMs } = limiter.fail(address);
      if (!admission.admitted) {
        failedLogins.record(address, 'refused');
        const retryS = Math.ceil(admission.retryAfterMs / 1000);
        ctx.set('Retry-After', String(retryS));
        send(ctx, 429, loginPage({ botName: app.config.botName, csrf: expected, error: `Wrong token, and too many wrong tokens are being tried right now. Try again in ${retryS} second(s).` }));
        return;
      }
      try {
        failedLogins.record(address, 'wrong');
        const slowed = nextDelayMs > 0 ? ` After several wrong tokens each attempt waits longer (next: ${Math.ceil(nextDelayMs / 1000)} s).` : '';
        send(ctx, 401, loginPage({ botName: app.config.botName, csrf: expected, error: `Wrong token.${slowed}` }));
      } finally {
        limiter.release();
      }
      return;
    }
    const session = sessions.create();
    ctx.cookies.set(LOGIN_COOKIE, null, { path: '/config' });
    ctx.cookies.set(SESSION_COOKIE, session.id, cookieOptions(ctx, sessions.limits.absoluteMs));
    app.log.info({ ip: address }, 'dashboard login');
    ctx.status = 303;
    ctx.redirect('/config');
  });

  router.post('/config/logout', async (ctx) => {
    const ok = await authorisedForm(ctx);
    if (!ok) return;
    sessions.delete(ok.session.id);
    ctx.cookies.set(SESSION_COOKIE, null, { path: '/config' });
    ctx.status = 303;
    ctx.redirect('/config/login?out=1');
  });

  router.get('/config', async (ctx) => {
    const session = currentSession(ctx);
    if (!session) {
      ctx.status = 303;
      return ctx.redirect('/config/login');
    }
    const disk = await readConfigFile();
    let notice: DashboardView['notice'];
    if (disk.problem) notice = { kind: 'error', text: `config.json could not be read (${disk.problem}); showing the running config. Saving replaces the file.` };
    else if (ctx.query.restart === '1') notice = { kind: 'warn', text: 'Saved and applied. The new port or bind address takes effect after a restart.' };
    else if (ctx.query.saved === '1') notice = { kind: 'ok', text: 'Saved and applied. The previous file is kept as config.json.bak.' };
    send(ctx, 200, dashboardPage(await view(session, undefined, disk.version, notice)));
  });

  // Owners' privacy controls: export or delete everything the bot keeps about one person (as `.mydata` does).
  router.post('/config/mydata', async (ctx) => {
    const ok = await authorisedForm(ctx);
    if (!ok) return;
    const digits = (ok.form.get('person') ?? '').replace(/\D/g, '');
    if (!/^\d{3,30}$/.test(digits)) {
      send(ctx, 422, messagePage('Which person?', 'Give the phone number or LID as digits (3 to 30). Nothing was exported or deleted.', { href: '/config', label: 'Back to the dashboard' }));
      return;
    }
    const person = [`${digits}@s.whatsapp.net`, `${digits}@lid`];
    if (ok.form.get('action') === 'delete') {
      if ((ok.form.get('confirm') ?? '').replace(/\D/g, '') !== digits) {
        send(ctx, 422, messagePage('Not deleted', 'To delete, type the same digits again in the confirmation field. Nothing was deleted.', { href: '/config', label: 'Back to the dashboard' }));
        return;
      }
      try {
        const counts = await app.bot.privacy.deleteFor(person);
        app.log.info({ counts, ip: ctx.ip }, 'privacy delete of one person from the dashboard');
        send(ctx, 200, messagePage('Deleted', `Everything kept about ${digits} was deleted (${Object.entries(counts).map(([k, n]) => `${k}: ${n}`).join(', ')}).`, { href: '/config', label: 'Back to the dashboard' }));
      } catch (err) {
        send(ctx, 500, messagePage('Not everything was deleted', `${(err as Error).message}. Try again; the log has the details.`, { href: '/config', label: 'Back to the dashboard' }));
      }
      return;
    }
    const data = await app.bot.privacy.exportFor(person);
    ctx.status = 200;
    ctx.type = 'application/json';
    ctx.set('Content-Disposition', `attachment; filename="data-${digits}.json"`);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = JSON.stringify(data, null, 2);
  });

  router.post('/config/save', async (ctx) => {
    const ok = await authorisedForm(ctx);
    if (!ok) return;
    // One save at a time: the version check and the write must not interleave with another save.
    const run = saving.then(() => save(ctx, ok.session, ok.form));
    saving = run.catch(() => undefined);
    await run;
  });

  const save = async (ctx: Context, session: DashboardSession, form: URLSearchParams): Promise<void> => {
    const disk = await readConfigFile();
    if (form.get('version') !== disk.version) {
      send(ctx, 409, messagePage('config.json changed meanwhile', 'config.json was changed after this page was loaded (another save or an edit by hand). Your changes were not saved, so nothing was overwritten: reload the dashboard and make them again.', { href: '/config', label: 'Reload the dashboard' }));
      return;
    }
    const draft = formToConfig(form, disk.value, app.bot.plugins().map((s) => s.plugin));
    if (draft.problems.length) {
      send(ctx, 422, dashboardPage(await view(session, draft, disk.version)));
      return;
    }
    let saved;
    try {
      saved = await saveConfigFile(app.configFile, draft.config, sectionKeysOf(app.bot.plugins().map((s) => s.plugin)));
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      send(ctx, 422, dashboardPage(await view(session, { ...draft, problems: err.problems.map((message) => ({ field: '', message })) }, disk.version)));
      return;
    }
    app.bot.setConfig(saved);
    app.usage.setQuotas(saved.ai.quotaMainTokens, saved.ai.quotaPremiumTokens);
    const restart = saved.port !== running.port || saved.host !== running.host;
    app.log.info({ changed: changedKeys(disk.value, draft.config), ip: ctx.ip }, `config.json saved from the dashboard and applied${restart ? ' (port/host change needs a restart)' : ''}`);
    ctx.status = 303;
    ctx.redirect(restart ? '/config?saved=1&restart=1' : '/config?saved=1');
  };

  mountViews(router, {
    app,
    transport,
    currentSession,
    watchSession: (ctx, onEnd) => {
      const session = sessions.peek(ctx.cookies.get(SESSION_COOKIE, { signed: true }));
      return session ? sessions.watch(session.id, onEnd) : undefined;
    },
    authorisedForm,
    send,
    readConfig: async () => (await readConfigFile()).value,
  });

  const routes = router.routes();
  const methods = router.allowedMethods();
  const nothing = async () => undefined;
  return async (ctx, next) => {
    if (ctx.path !== '/config' && !ctx.path.startsWith('/config/')) return next();
    pageHeaders(ctx, PAGE_CSS_HASH);
    await routes(ctx as any, nothing);
    await methods(ctx as any, nothing);
    // Inside /config nothing else exists (and nothing falls through to plugin routes).
    if (ctx.status === 404 && !ctx.body) send(ctx, 404, messagePage('Not found', 'There is no such dashboard page.', { href: '/config', label: 'Dashboard' }));
  };
}

function hash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Top-level fields (and `plugins.<name>`) that differ, for the audit line in the log (names only, no values). */
function changedKeys(before: Record<string, any>, after: Record<string, any>): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  const changed: string[] = [];
  for (const key of keys) {
    if (key === 'plugins') {
      const names = new Set([...Object.keys(before.plugins ?? {}), ...Object.keys(after.plugins ?? {})]);
      for (const name of names) if (JSON.stringify(before.plugins?.[name]) !== JSON.stringify(after.plugins?.[name])) changed.push(`plugins.${name}`);
    } else if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) changed.push(key);
  }
  return changed;
}
