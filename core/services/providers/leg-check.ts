import { DownloadRefused, UpstreamFailure } from '../../api/errors.js';
import { readBodyUpTo, readJsonUpTo } from '../http/bounded-body.js';
import { classifyFailure } from './failure.js';
import { normalizeBaseUrl } from './normalize.js';

/**
 * What one tiny real request says about a provider leg, in the words an owner needs: which of key, URL and model is
 * wrong. `detail` never holds the key (the gateway's own error text is not repeated for a rejected key, and the key
 * is cut out of any other text it sends back).
 */
export interface LegCheck {
  ok: boolean;
  /** Usable but not fully (rate-limited now, a test request the gateway refused for another reason). */
  degraded?: boolean;
  problem?: 'unreachable' | 'timeout' | 'wrong-url' | 'rejected-key' | 'unknown-model' | 'quota' | 'rate-limited' | 'server-error' | 'refused';
  detail: string;
  /** HTTP status of the answer, when there was one. */
  status?: number;
}

export interface LegCheckTarget {
  /** Base URL as configured (with or without `/v1`). */
  baseUrl: string;
  apiKey: string;
  model: string;
  timeoutMs: number;
  /** Most tokens the answer may take (default 5; the start probe asks for 1). */
  maxTokens?: number;
  /** Extra request headers (the start probe marks its requests with `x-wa-bot-probe: startup`). */
  headers?: Record<string, string>;
}

/** `…1a2b` for a key of 12+ characters (enough to tell two keys apart), `••••` for a shorter one. Never the key. */
export function maskKey(key: string): string {
  const trimmed = key.trim();
  if (!trimmed) return '(none)';
  return trimmed.length >= 12 ? `…${trimmed.slice(-4)}` : '••••';
}

function withoutKey(text: string, key: string): string {
  let out = text.replace(/\s+/g, ' ').trim().slice(0, 200);
  if (key.length >= 4) out = out.split(key).join('[key]');
  return out;
}

function networkProblem(err: unknown, url: string, timeoutMs: number): LegCheck {
  const name = (err as Error)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') return { ok: false, problem: 'timeout', detail: `no answer from ${url} within ${Math.round(timeoutMs / 1000)} s: is the base URL right, and the gateway up?` };
  const code = (err as { cause?: { code?: string } })?.cause?.code ?? (err as Error)?.message ?? 'connection failed';
  return { ok: false, problem: 'unreachable', detail: `cannot reach ${url} (${code}): wrong base URL, or the gateway is down` };
}

function errorText(body: unknown): string {
  const b = body as { error?: unknown; message?: unknown; detail?: unknown } | undefined;
  const inner = (b && typeof b.error === 'object' && b.error ? b.error : b) as { message?: unknown; code?: unknown; type?: unknown } | undefined;
  if (typeof b?.error === 'string') return b.error;
  return [inner?.code, inner?.type, inner?.message, typeof b?.detail === 'string' ? b.detail : undefined].filter((x) => typeof x === 'string').join(' ');
}

/** What `GET <base>/v1/models` says: the models listed, or a problem that already rules the gateway out. */
export interface ModelsProbe {
  /** The models listed (sorted), when the gateway lists any. */
  models?: string[];
  /** The key rejected (401/403) or nothing answering: no model question can help, the key or address is wrong. */
  problem?: LegCheck;
}

/**
 * Asks `GET <base>/v1/models` (OpenAI format `{ data: [{ id }] }`): the models, sorted, when it lists some; a problem
 * when the answer already names what is wrong (401/403: the key; no connection or no answer: the address). Any other
 * answer (404: the gateway does not list models) is neither. Never throws.
 *
 * @example const { models, problem } = await probeModels({ baseUrl: 'https://api.groq.com/openai/v1', apiKey, timeoutMs: 8000 });
 */
export async function probeModels(target: Omit<LegCheckTarget, 'model'>): Promise<ModelsProbe> {
  const url = `${normalizeBaseUrl(target.baseUrl).v1}/models`;
  let res: Response;
  try {
    res = await fetch(url, { headers: { authorization: `Bearer ${target.apiKey}` }, signal: AbortSignal.timeout(target.timeoutMs) });
  } catch (err) {
    return { problem: networkProblem(err, url, target.timeoutMs) };
  }
  if (res.status === 401 || res.status === 403) {
    await res.body?.cancel().catch(() => undefined);
    return { problem: { ok: false, status: res.status, problem: 'rejected-key', detail: `the gateway rejected the key (HTTP ${res.status}): wrong key` } };
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    return {};
  }
  try {
    // Read up to a bound, as every upstream answer (a gateway's list of hundreds of models is well under it).
    const body = (await readJsonUpTo(res, 8 * 1024 * 1024, 'the list of models')) as { data?: Array<{ id?: unknown }> };
    const ids = (Array.isArray(body?.data) ? body.data : []).map((m) => m?.id).filter((id): id is string => typeof id === 'string' && id.length > 0 && id.length < 200);
    return ids.length ? { models: [...new Set(ids)].sort() } : {};
  } catch {
    return {};
  }
}

/**
 * The models a gateway lists at `GET <base>/v1/models`, sorted; undefined when it lists none (no such endpoint, a
 * rejected key, no answer). Never throws.
 *
 * @example await listModels({ baseUrl: 'https://api.groq.com/openai/v1', apiKey, timeoutMs: 8000 }) // ['llama-3.3-70b-versatile', …]
 */
export async function listModels(target: Omit<LegCheckTarget, 'model'>): Promise<string[] | undefined> {
  return (await probeModels(target)).models;
}

/**
 * Checks a chat leg with one tiny real request (`POST <base>/v1/chat/completions`, a one-word prompt, at most a few
 * tokens back): reachable, key accepted, model known. Never throws.
 *
 * @example
 * const check = await checkChatLeg({ baseUrl, apiKey, model: 'gpt-4o-mini', timeoutMs: 8000 });
 * if (!check.ok) console.log(check.detail); // 'the gateway rejected the key (HTTP 401): wrong key'
 */
export async function checkChatLeg(target: LegCheckTarget): Promise<LegCheck> {
  const url = `${normalizeBaseUrl(target.baseUrl).v1}/chat/completions`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { ...(target.headers ?? {}), 'content-type': 'application/json', authorization: `Bearer ${target.apiKey}` },
      body: JSON.stringify({ model: target.model, messages: [{ role: 'user', content: 'Say OK.' }], max_tokens: target.maxTokens ?? 5, stream: false }),
      signal: AbortSignal.timeout(target.timeoutMs),
    });
  } catch (err) {
    return networkProblem(err, url, target.timeoutMs);
  }
  let text: string;
  try {
    text = (await readBodyUpTo(res, 1024 * 1024, 'the answer')).toString('utf8');
  } catch (err) {
    if (err instanceof DownloadRefused) return { ok: false, status: res.status, problem: 'wrong-url', detail: `${url} answered a one-word question with more than 1 MB: is the base URL that of an OpenAI-compatible gateway?` };
    return networkProblem(err, url, target.timeoutMs);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const status = res.status;
  if (res.ok) {
    const choices = (body as { choices?: unknown })?.choices;
    if (Array.isArray(choices)) return { ok: true, status, detail: `key accepted, model ${target.model} answered` };
    return { ok: false, status, problem: 'wrong-url', detail: `${url} answered HTTP ${status} but not in the OpenAI chat format: is the base URL that of an OpenAI-compatible gateway?` };
  }
  const said = withoutKey(errorText(body), target.apiKey);
  const failure = classifyFailure(new UpstreamFailure('http', { status, headers: res.headers, body }));
  const aboutModel = /model/i.test(said) && /not.?found|does not exist|unknown|invalid|no such|not exist|unsupported|not available|not allowed|decommission/i.test(said);
  if (failure.kind === 'auth' && !aboutModel) return { ok: false, status, problem: 'rejected-key', detail: `the gateway rejected the key (HTTP ${status}): wrong key, or a key of another provider` };
  if ((status === 404 || status === 400 || status === 403 || status === 422) && (aboutModel || /model_not_found|model_not_available/i.test(said))) {
    return { ok: false, status, problem: 'unknown-model', detail: `the key works, but the gateway does not know the model "${target.model}" (HTTP ${status}${said ? `: ${said}` : ''})` };
  }
  if (status === 404 || status === 405) return { ok: false, status, problem: 'wrong-url', detail: `${url} does not exist (HTTP ${status}): wrong base URL (it should be the gateway's OpenAI-compatible address, often ending in /v1)` };
  if (failure.kind === 'quota') return { ok: false, status, problem: 'quota', detail: `the key is accepted but its quota or credit is used up (HTTP ${status}): top it up, or use another key` };
  if (failure.kind === 'rate-limit') return { ok: true, degraded: true, status, problem: 'rate-limited', detail: `the key is accepted but rate-limited right now (HTTP ${status}); it will answer again shortly` };
  if (failure.kind === 'server') return { ok: false, status, problem: 'server-error', detail: `the gateway failed (HTTP ${status}${said ? `: ${said}` : ''}); try again later, or check its status page` };
  // The key passed (no 401/403) but this request was refused for another reason (a parameter the model does not take).
  return { ok: true, degraded: true, status, problem: 'refused', detail: `the key is accepted, but the test request was refused (HTTP ${status}${said ? `: ${said}` : ''})` };
}
