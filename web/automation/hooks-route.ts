import type { Context, Next } from 'koa';
import { readBoundedBody } from '../bounded-body.js';
import {
  HOOK_ERROR_STATUS,
  quotedContent,
  renderTemplate,
  ReplayCache,
  SIGNATURE_HEADER,
  SIGNATURE_WINDOW_MS,
  signatureMatches,
  TemplateError,
  TIMESTAMP_HEADER,
  timestampProblem,
  type HookConfig,
  type HookErrorCode,
  type OperatorPort,
} from '../../core/operator.js';

/** Largest hook body read (bytes actually received); a larger one is refused with HOOK_TOO_LARGE. */
export const MAX_HOOK_BODY_BYTES = 64 * 1024;

const HOOK_PATH = /^\/hooks\/([^/]+)\/?$/;

/**
 * The .env variable that holds hook `name`'s secret: `HOOK_SECRET_` and the name in capitals, dashes as underscores.
 * @example hookSecretVariable('washing-machine') // 'HOOK_SECRET_WASHING_MACHINE'
 */
export function hookSecretVariable(name: string): string {
  return `HOOK_SECRET_${name.toUpperCase().replace(/-/g, '_')}`;
}

class HookFailure extends Error {
  constructor(readonly code: HookErrorCode, message: string) {
    super(message);
  }
}

function answerError(ctx: Context, failure: HookFailure): void {
  ctx.status = HOOK_ERROR_STATUS[failure.code];
  ctx.body = { error: { code: failure.code, message: failure.message } };
}

function readBody(ctx: Context): Promise<Buffer> {
  return readBoundedBody(ctx, MAX_HOOK_BODY_BYTES, () => new HookFailure('HOOK_TOO_LARGE', `the body is larger than ${MAX_HOOK_BODY_BYTES} bytes`));
}

function parsePayload(body: Buffer): Record<string, unknown> {
  let payload: unknown;
  try {
    payload = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    throw new HookFailure('HOOK_BAD_PAYLOAD', 'the body is not JSON (send a JSON object as application/json)');
  }
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) throw new HookFailure('HOOK_BAD_PAYLOAD', 'the body is not a JSON object');
  return payload as Record<string, unknown>;
}

const short = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}…` : text);

/**
 * `POST /hooks/<name>`: a named hook of config.json `hooks`, signed with its secret from .env (`HOOK_SECRET_<NAME>`,
 * core/services/webhooks/signature.ts). Checked in this order, each refusal a JSON error with a `HOOK_…` code and
 * nothing delivered: the hook exists and has a secret (404), the timestamp is within 5 minutes (401), the body is at
 * most 64 KB (413), the signature matches (401), the same signature was not accepted before (409), the body is a
 * JSON object that fills the template (400). Then the text goes to the hook's chat through the effect guard and the
 * outbox (`bot.automation.deliver`): 200 delivered, 202 held for the owner's 👍 (or a prompt started), 403 refused.
 * `now` is the clock (tests own it).
 *
 * @example koa.use(hooksRoute(app));
 */
export function hooksRoute(app: OperatorPort, options: { now?: () => number } = {}) {
  const now = options.now ?? (() => Date.now());
  const replays = new ReplayCache(SIGNATURE_WINDOW_MS, now);
  const log = app.log.child({ part: 'hooks' });
  return async (ctx: Context, next: Next): Promise<void> => {
    const match = HOOK_PATH.exec(ctx.path);
    if (!match || ctx.method !== 'POST') return next();
    ctx.set('Cache-Control', 'no-store');
    let name = '';
    try {
      name = decodeURIComponent(match[1]!);
      await handle(ctx, name);
    } catch (err) {
      if (!(err instanceof HookFailure)) throw err;
      log.warn({ hook: name.slice(0, 60), code: err.code }, `hook request refused: ${err.message}`);
      answerError(ctx, err);
    }
  };

  async function handle(ctx: Context, name: string): Promise<void> {
    const hooks = app.config.hooks ?? {};
    const hook: HookConfig | undefined = Object.prototype.hasOwnProperty.call(hooks, name) ? hooks[name] : undefined;
    const secret = hook ? app.settings.env[hookSecretVariable(name)] : undefined;
    if (!hook) throw new HookFailure('HOOK_UNKNOWN', 'there is no hook of that name');
    if (!secret) {
      // Fail closed: a hook without its secret takes nothing, and says so only to the owner (the log).
      log.warn({ hook: name }, `hook ${name} has no ${hookSecretVariable(name)} in .env: it refuses every request`);
      throw new HookFailure('HOOK_UNKNOWN', 'there is no hook of that name');
    }
    const timestamp = ctx.get(TIMESTAMP_HEADER);
    const stale = timestampProblem(timestamp, now());
    if (stale) throw new HookFailure(timestamp ? 'HOOK_STALE' : 'HOOK_BAD_SIGNATURE', stale);
    const body = await readBody(ctx);
    const signature = ctx.get(SIGNATURE_HEADER);
    if (!signatureMatches(secret, timestamp, body, signature)) {
      throw new HookFailure('HOOK_BAD_SIGNATURE', signature ? 'the X-Hook-Signature does not match the body and timestamp' : 'the X-Hook-Signature header is missing');
    }
    if (!replays.take(`${name} ${signature.trim().toLowerCase()}`, Number(timestamp) * 1000)) throw new HookFailure('HOOK_REPLAYED', 'this signed request was already accepted');
    const payload = parsePayload(body);
    const mode = hook.mode ?? 'message';
    let text: string;
    try {
      text = mode === 'prompt' ? framedPrompt(name, hook.template, payload) : renderTemplate(hook.template, payload);
    } catch (err) {
      if (err instanceof TemplateError) throw new HookFailure('HOOK_BAD_PAYLOAD', err.message);
      throw err;
    }
    let outcome;
    try {
      outcome = await app.bot.automation.deliver({ to: hook.chat, text, mode, by: `hook:${name}`, summary: `hook ${name}: ${mode === 'prompt' ? 'answer' : 'send'} in ${hook.chat}: “${short(text)}”` });
    } catch (err) {
      if ((err as { code?: string }).code === 'PLUGIN_RECIPIENT_REFUSED') throw new HookFailure('HOOK_REFUSED', `the bot may not write first to ${hook.chat}: ${(err as { reason?: string }).reason ?? ''}`.trim());
      log.warn({ err, hook: name }, `hook ${name}: the message could not be delivered`);
      throw new HookFailure('HOOK_NOT_DELIVERED', 'the message could not be delivered now; try again later');
    }
    if (outcome.status === 'denied') throw new HookFailure('HOOK_REFUSED', outcome.reason);
    log.info({ hook: name, outcome: outcome.status }, `hook ${name}: ${outcome.status === 'held' ? 'held for the owner' : mode === 'prompt' ? 'prompt started' : 'delivered'}`);
    if (outcome.status === 'held') {
      ctx.status = 202;
      ctx.body = { status: 'held', id: outcome.id, expiresAt: new Date(outcome.expiresAt).toISOString() };
      return;
    }
    ctx.status = mode === 'prompt' ? 202 : 200;
    ctx.body = { status: mode === 'prompt' ? 'started' : 'delivered' };
  }
}

/**
 * A prompt-mode hook's turn: the owner's template is the request; each payload value (an outside system's words) is
 * not put into it but framed as content after it (provenance: never instructions, markers neutralised), the template
 * naming it where it stood.
 */
function framedPrompt(hook: string, template: string, payload: unknown): string {
  const values: string[] = [];
  const request = renderTemplate(template, payload, (field, value) => {
    values.push(quotedContent({ source: `the value "${field}" sent to the hook ${hook}`, author: 'an outside system', text: value }));
    return `[the value "${field}" quoted below]`;
  });
  return [request, ...values].join('\n\n');
}
