import { MAX_PERSONA_CHARS } from '../../core/operator.js';
import type { Context } from 'koa';
import type Router from '@koa/router';
import type { Activation } from '../../core/operator.js';
import { userPart } from '../../core/operator.js';
import { accessView, type AccessViewData } from './access-view.js';
import type { ViewRouteDeps } from './view-route-deps.js';
import { shell, type Notice } from './views.js';

const MODES: Activation[] = ['mention', 'always', 'off'];
/** A chat id as the transports write them: `628…@s.whatsapp.net`, `…@lid`, `1203…@g.us` (console: `team@g.us`). */
const CHAT_ID = /^[\w.-]{1,64}@(s\.whatsapp\.net|g\.us|lid)$/;

/**
 * A chat id typed or sent by a form: a full chat id, or (private chats only) phone digits. Undefined when it is
 * neither, or when a group was asked for and it is not one.
 * @example chatIdOf('+62 811 111', false) // '62811111@s.whatsapp.net'
 */
export function chatIdOf(text: string | null, group: boolean): string | undefined {
  const typed = (text ?? '').trim();
  const digits = typed.replace(/[\s+()-]/g, '');
  if (!group && /^\d{3,30}$/.test(digits)) return `${digits}@s.whatsapp.net`;
  if (!CHAT_ID.test(typed)) return undefined;
  return !group || typed.endsWith('@g.us') ? typed : undefined;
}

/** The notice after a change (fixed texts; only digits are taken from the address). */
function noticeOf(query: Record<string, unknown>): Notice | undefined {
  const digits = (v: unknown) => (typeof v === 'string' && /^\d{1,30}$/.test(v) ? v : '');
  const who = digits(query.who);
  const n = Number(digits(query.n) || 0);
  switch (query.done) {
    case 'approved':
      return { kind: 'ok', text: `Approved: +${who} can talk to the bot now.${n ? ` Answering the ${n} message${n === 1 ? '' : 's'} they sent meanwhile.` : ''}` };
    case 'denied':
      return { kind: 'ok', text: `Denied: +${who} is not let in, and what they sent is dropped. They get no new code for an hour.` };
    case 'revoked':
      return { kind: 'ok', text: `+${who} is no longer on the allow list.` };
    case 'activation':
      return { kind: 'ok', text: 'Activation saved: it applies from the next message.' };
    case 'persona':
      return { kind: 'ok', text: 'Persona saved: that chat follows it from its next message.' };
    case 'persona-removed':
      return { kind: 'ok', text: 'Persona removed.' };
    case 'resumed':
      return { kind: 'ok', text: 'Handed back: the bot answers in that chat again.' };
    default:
      return undefined;
  }
}

/**
 * The access view of the dashboard (`/config/access`): pairing requests with approve/deny (the same core calls as
 * `.approve`/`.deny`, so the held messages are answered), the allow list, groups' activation, personas and paused
 * chats. Every POST goes through the dashboard's session + CSRF check (`authorisedForm`) behind the global Host and
 * cross-site guards; all text shown is escaped by `html`.
 */
export function mountAccessRoutes(router: Router, deps: ViewRouteDeps): void {
  const { app } = deps;
  const access = () => app.bot.access;

  const data = (csrf: string, drafts: Pick<AccessViewData, 'personaDraft' | 'groupDraft'> = {}): AccessViewData => {
    const config = app.bot.config;
    return {
      mode: config.access.mode,
      groupsPolicy: config.groups.policy,
      takeoverMinutes: config.takeover.minutes,
      owners: config.owners,
      configAllow: config.access.allow,
      pending: access().pending(),
      approved: access().approved(),
      groups: Object.entries(access().groups()).map(([chatId, g]) => ({ chatId, ...g })),
      personas: Object.entries(access().personas()).map(([chatId, p]) => ({ chatId, ...p })),
      paused: access().paused(),
      maxPersonaChars: MAX_PERSONA_CHARS,
      csrf,
      ...drafts,
    };
  };

  const render = (ctx: Context, status: number, notice?: Notice, drafts?: Pick<AccessViewData, 'personaDraft' | 'groupDraft'>) => {
    const session = deps.currentSession(ctx);
    if (!session) {
      ctx.status = 303;
      ctx.redirect('/config/login');
      return;
    }
    deps.send(ctx, status, shell({ botName: app.config.botName, csrf: session.csrf, active: 'access', title: 'Access', body: accessView(data(session.csrf, drafts)), notice }));
  };

  const done = (ctx: Context, query: Record<string, string>) => {
    ctx.status = 303;
    ctx.redirect(`/config/access?${new URLSearchParams(query).toString()}`);
  };

  router.get('/config/access', (ctx) => render(ctx, 200, noticeOf(ctx.query)));

  router.post('/config/access/approve', async (ctx) => {
    const ok = await deps.authorisedForm(ctx);
    if (!ok) return;
    const result = await access().approve(ok.form.get('code') ?? '', 'dashboard');
    if (!result.ok) return render(ctx, 404, { kind: 'error', text: result.reason });
    app.log.info({ ip: ctx.ip }, 'a pairing request was approved from the dashboard');
    done(ctx, { done: 'approved', who: userPart(result.request.sender), n: String(result.answered) });
  });

  router.post('/config/access/deny', async (ctx) => {
    const ok = await deps.authorisedForm(ctx);
    if (!ok) return;
    const result = await access().deny(ok.form.get('code') ?? '', 'dashboard');
    if (!result.ok) return render(ctx, 404, { kind: 'error', text: result.reason });
    done(ctx, { done: 'denied', who: userPart(result.request.sender) });
  });

  router.post('/config/access/revoke', async (ctx) => {
    const ok = await deps.authorisedForm(ctx);
    if (!ok) return;
    const id = (ok.form.get('id') ?? '').replace(/\D/g, '');
    if (!id || !(await access().revokeApproval(id))) return render(ctx, 404, { kind: 'error', text: 'That sender is not on the approved list. Nothing was changed.' });
    app.log.info({ ip: ctx.ip }, 'an approved sender was removed from the allow list from the dashboard');
    done(ctx, { done: 'revoked', who: id });
  });

  router.post('/config/access/activation', async (ctx) => {
    const ok = await deps.authorisedForm(ctx);
    if (!ok) return;
    const typed = ok.form.get('chat') ?? '';
    const chatId = chatIdOf(typed, true);
    const mode = ok.form.get('mode') as Activation;
    if (!chatId) return render(ctx, 422, { kind: 'error', text: 'Not saved: give a group id (ending in @g.us).' }, { groupDraft: { chat: typed.slice(0, 100), problem: 'A group id ends in @g.us, e.g. 120363000000000000@g.us.' } });
    if (!MODES.includes(mode)) return render(ctx, 422, { kind: 'error', text: 'Not saved: the activation is mention, always or off.' });
    await access().setActivation(chatId, mode, 'dashboard');
    app.log.info({ chat: chatId, mode, ip: ctx.ip }, 'a group activation was set from the dashboard');
    done(ctx, { done: 'activation' });
  });

  router.post('/config/access/persona', async (ctx) => {
    const ok = await deps.authorisedForm(ctx);
    if (!ok) return;
    const typed = ok.form.get('chat') ?? '';
    const chatId = chatIdOf(typed, false);
    const existing = chatId !== undefined && access().persona(chatId) !== undefined;
    // Browsers send a textarea's line breaks as CRLF; the limit counts characters as `.persona` sees them.
    const text = (ok.form.get('text') ?? '').replace(/\r\n?/g, '\n');
    const problem = (message: string) =>
      render(ctx, 422, { kind: 'error', text: `Not saved: ${message}` }, { personaDraft: { chatId: existing ? chatId : undefined, chat: typed.slice(0, 100), text: text.slice(0, MAX_PERSONA_CHARS * 2), problem: message } });
    if (!chatId) return problem('give a chat id (…@s.whatsapp.net, …@lid, …@g.us) or the phone digits of a private chat.');
    if (ok.form.get('action') === 'remove') {
      await access().setPersona(chatId, undefined, 'dashboard');
      app.log.info({ chat: chatId, ip: ctx.ip }, 'a persona was removed from the dashboard');
      return done(ctx, { done: 'persona-removed' });
    }
    if (!text.trim()) return problem('the persona is empty. Use Remove to take a persona away.');
    if (text.length > MAX_PERSONA_CHARS) return problem(`a persona is at most ${MAX_PERSONA_CHARS} characters (this one has ${text.length}).`);
    await access().setPersona(chatId, text, 'dashboard');
    app.log.info({ chat: chatId, ip: ctx.ip }, 'a persona was set from the dashboard');
    done(ctx, { done: 'persona' });
  });

  router.post('/config/access/resume', async (ctx) => {
    const ok = await deps.authorisedForm(ctx);
    if (!ok) return;
    const chatId = (ok.form.get('chat') ?? '').trim();
    if (!(await access().resume(chatId))) return render(ctx, 404, { kind: 'error', text: 'The bot is not paused in that chat. Nothing was changed.' });
    app.log.info({ chat: chatId, ip: ctx.ip }, 'a chat was handed back to the bot from the dashboard');
    done(ctx, { done: 'resumed' });
  });
}
