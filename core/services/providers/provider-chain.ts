import type OpenAI from 'openai';
import { openaiSdk } from './openai-sdk.js';
import { boundedFetch, MAX_PROVIDER_ANSWER_BYTES } from '../http/bounded-fetch.js';
import type { Settings } from '../config/settings.js';
import type { Logger } from '../log/logger.js';
import { classifyFailure, type Failure } from './failure.js';
import { normalizeBaseUrl } from './normalize.js';
import { requestJson } from './request-json.js';
import { chatPost, MOVED, type ChatPost } from './chat-post.js';
import type { LegCondition, LegHealth, LegStartCheck, ProviderLeg } from './types.js';
import type { ChatMessage, CompleteOptions, CompletionResult } from './chat-types.js';
import { listModels } from './leg-check.js';
import { tokenCount, type ReportedUsage, type UsageLedger } from './usage.js';
import type { OwnerNotifier } from '../notices/owner-notifier.js';
import type { KeyPool } from './key-pool.js';
import { AllProvidersFailedError, CodedError, type PluginErrorCode, BadAnswerError } from '../../api/errors.js';

/** Builds the legs from the settings, in chain order; a leg whose key is empty is skipped. */
export function legsFromSettings(settings: Settings): ProviderLeg[] {
  const legs: ProviderLeg[] = [];
  const gateway = (name: string, g: Settings['primary']) => {
    if (!g.apiKey) return;
    const { v1, root } = normalizeBaseUrl(g.baseUrl);
    legs.push({ name, kind: 'gateway', baseUrl: v1, rootUrl: root, apiKey: g.apiKey, model: g.model, premiumModel: g.premiumModel });
  };
  gateway('primary', settings.primary);
  gateway('second', settings.second);
  const audio = normalizeBaseUrl(settings.audio.baseUrl);
  settings.audio.keys.forEach((apiKey, i) =>
    legs.push({ name: `audio-${i + 1}`, kind: 'audio', baseUrl: audio.v1, rootUrl: audio.root, apiKey, model: settings.audio.chatModel, premiumModel: '' }),
  );
  return legs;
}

interface LegState {
  leg: ProviderLeg;
  /** Made at the leg's first request (the SDK loads then, not at start). */
  client?: OpenAI;
  /** The leg's chat-completion request, made at its first chat request (no SDK: chat-post.ts). */
  post?: ChatPost;
  until: number;
  lastFailure?: Failure;
  requests: number;
  failures: number;
  startCheck?: LegStartCheck;
}

/**
 * Start-check problems that no retry can cure (a wrong key, a model the gateway does not know): the leg starts
 * resting until restart (or a successful "Test now"), as after the same failure of a user's request.
 */
const HOPELESS_AT_START = new Set(['rejected-key', 'unknown-model']);

function legState(s: LegState, now: number): LegCondition {
  if (s.until <= now) return 'healthy';
  if (s.lastFailure?.kind === 'auth') return 'rejected';
  if (s.lastFailure?.kind === 'quota') return 'exhausted';
  return 'cooling-down';
}

/** What became of one request to a leg: `ok` or the failure class, and the rest it then got (0: none). */
export interface LegOutcome {
  leg: string;
  outcome: 'ok' | Failure['kind'];
  cooldownMs: number;
}

/** A failure in words an owner understands (never a key). */
export function failureInWords(failure: Failure): string {
  const status = failure.summary;
  switch (failure.kind) {
    case 'auth':
      return `the key was rejected (${status}): check it in .env`;
    case 'quota':
      return `the quota is used up (${status})`;
    case 'rate-limit':
      return `rate-limited (${status})`;
    case 'server':
      return `the provider had a server error (${status})`;
    case 'timeout':
      return 'no answer in time';
    case 'network':
      return `could not connect (${status})`;
    case 'bad-answer':
      return `an unusable answer (${status})`;
    default:
      return `the request was refused (${status})`;
  }
}

/** A body given to the SDK as text goes out as it is only with its content type said. */
const JSON_BODY = { 'content-type': 'application/json' };

/**
 * The provider chain: legs in order (primary gateway, second gateway, each audio key). A request goes to the first
 * leg not cooling down; on a failure it moves on at once, and the failing leg rests for a time fitted to the failure
 * (retry-after; long for exhausted quota; until restart for a rejected key), so later requests skip it without a
 * wasted call. SDK retries are off: the chain decides.
 *
 * @example
 * const chain = new ProviderChain(settings, log);
 * const { text } = await chain.complete([{ role: 'user', content: 'hi' }]);
 */
export class ProviderChain {
  private readonly states: LegState[];
  private keyPool: KeyPool | undefined;
  private readonly outcomeListeners: Array<(event: LegOutcome) => void> = [];
  private notices: OwnerNotifier | undefined;
  private outageMinutes: () => number = () => 5;
  /** When every chat leg started failing (0 while some leg answers); owners hear of it after `outageMinutes`. */
  private outageSince = 0;
  private outageTold = false;
  private outageTimer: NodeJS.Timeout | undefined;
  constructor(
    private readonly settings: Settings,
    private readonly log: Logger,
    private readonly usage?: UsageLedger,
    // Read at each call, not captured: a test's fake clock (the kit's useClock) moves cooldowns too.
    private readonly now: () => number = () => Date.now(),
  ) {
    this.states = legsFromSettings(settings).map((leg) => ({
      leg,
      until: 0,
      requests: 0,
      failures: 0,
    }));
  }

  /** The leg's client, made at its first request (`state.client ?? await this.clientOf(state)` keeps later ones sync). */
  private async clientOf(state: LegState): Promise<OpenAI> {
    const { default: OpenAI } = await openaiSdk();
    const { leg } = state;
    state.client ??= new OpenAI({ apiKey: leg.apiKey, baseURL: leg.baseUrl, maxRetries: 0, timeout: this.settings.upstreamTimeoutMs, fetch: boundedFetch(MAX_PROVIDER_ANSWER_BYTES, `the answer of ${leg.name}`) });
    return state.client;
  }

  /**
   * Shares the audio keys' health with the core's key pool: an audio leg whose key the pool has parked or rejected
   * is skipped, and a limit or rejection seen here parks or rejects the key for every other user of the pool.
   */
  useKeyPool(pool: KeyPool): void {
    this.keyPool = pool;
  }

  private resting(state: LegState): boolean {
    return state.until > this.now() || (state.leg.kind === 'audio' && this.keyPool !== undefined && !this.keyPool.isUsable(state.leg.apiKey));
  }

  /** Tells the owners about rejected keys and a lasting outage of every chat leg (and its end). */
  useNotices(notices: OwnerNotifier, outageMinutes: () => number): void {
    this.notices = notices;
    this.outageMinutes = outageMinutes;
  }

  /** Stops the outage timer (service stop). */
  stop(): void {
    if (this.outageTimer) clearTimeout(this.outageTimer);
    this.outageTimer = undefined;
  }

  private chatFailed(): void {
    const now = this.now();
    if (!this.outageSince) this.outageSince = now;
    const limitMs = Math.max(1, this.outageMinutes()) * 60_000;
    if (now - this.outageSince >= limitMs) this.tellOutage();
    else if (!this.outageTimer && this.notices) {
      // Told even when no one writes again: the timer fires once the outage has lasted long enough.
      this.outageTimer = setTimeout(() => {
        this.outageTimer = undefined;
        if (this.outageSince && !this.available()) this.tellOutage();
      }, limitMs - (now - this.outageSince));
      this.outageTimer.unref();
    }
  }

  private tellOutage(): void {
    if (this.outageTold) return;
    this.outageTold = true;
    const minutes = Math.round((this.now() - this.outageSince) / 60_000);
    const why = this.health().map((h) => `${h.name}: ${h.lastError ?? h.state}`).join('; ');
    this.notices?.raise('chat-down', `Every AI chat provider has been failing for ${minutes} min, so the bot cannot answer chats (${why || 'no provider configured'}).`);
  }

  private chatAnswered(): void {
    if (this.outageTold) this.notices?.recover('chat-down', 'AI chat answers again: a provider is back.');
    this.outageSince = 0;
    this.outageTold = false;
    if (this.outageTimer) clearTimeout(this.outageTimer);
    this.outageTimer = undefined;
  }

  legs(): ProviderLeg[] {
    return this.states.map((s) => s.leg);
  }

  /** True when some leg is usable now. */
  available(filter?: (leg: ProviderLeg) => boolean): boolean {
    const now = this.now();
    return this.states.some((s) => s.until <= now && !this.resting(s) && (!filter || filter(s.leg)));
  }

  /** True when a leg (of those `serves` picks) is healthy now: what `health()` would call `healthy`, without the list. */
  anyHealthy(serves?: (leg: ProviderLeg) => boolean): boolean {
    const now = this.now();
    return this.states.some((s) => legState(s, now) === 'healthy' && (!serves || serves(s.leg)));
  }

  health(): LegHealth[] {
    const now = this.now();
    return this.states.map((s) => ({
      name: s.leg.name,
      kind: s.leg.kind,
      model: s.leg.model,
      premiumModel: s.leg.premiumModel,
      state: legState(s, now),
      coolingDownUntil: s.until > now && s.until !== Infinity ? s.until : undefined,
      lastFailure: s.lastFailure?.summary,
      lastError: s.lastFailure ? failureInWords(s.lastFailure) : undefined,
      requests: s.requests,
      failures: s.failures,
      ...(s.startCheck ? { startCheck: s.startCheck } : {}),
    }));
  }

  /**
   * Takes in what the start check found for one leg. A rejected key or an unknown model rests the leg until restart
   * at once, so the first user's request goes straight to the next leg instead of failing on this one first (as the
   * chain does after such a failure); any other outcome only becomes part of the leg's health (`.status`, dashboard).
   * The start log already said it; owners are also told of a rejected key as after a user's request (the reply to
   * users says "the owner has been told").
   */
  recordStartCheck(name: string, check: LegStartCheck & { status?: number }): void {
    const state = this.states.find((s) => s.leg.name === name);
    if (!state) return;
    const { status } = check;
    state.startCheck = { ok: check.ok, ...(check.degraded ? { degraded: true } : {}), ...(check.problem ? { problem: check.problem } : {}), detail: check.detail, ...(check.fix ? { fix: check.fix } : {}) };
    if (check.ok || !check.problem || !HOPELESS_AT_START.has(check.problem)) return;
    const rejected = check.problem === 'rejected-key';
    // The same rest, key-pool mark and owners' notice as after a user's request failed so (the start log said it).
    this.applyFailure(state, { kind: rejected ? 'auth' : 'bad-request', ...(status ? { status } : {}), cooldownMs: Infinity, summary: `${status ? `HTTP ${status}` : check.problem} at the start check` }, check.fix);
  }

  /** Calls `listener` after every request to a leg (metrics); a throwing listener is ignored. */
  onOutcome(listener: (event: LegOutcome) => void): void {
    this.outcomeListeners.push(listener);
  }

  private report(event: LegOutcome): void {
    for (const listener of this.outcomeListeners) {
      try {
        listener(event);
      } catch {
        /* metrics must never break a request */
      }
    }
  }

  private markFailed(state: LegState, failure: Failure, purpose: string): void {
    state.failures++;
    this.applyFailure(state, failure);
    const fields = { leg: state.leg.name, purpose, failure: failure.kind, status: failure.status, detail: failure.summary, cooldownMs: failure.cooldownMs === Infinity ? 'until restart' : failure.cooldownMs };
    if (failure.kind === 'auth') this.log.error(fields, `provider ${state.leg.name} rejected its key: skipped until restart; check the key in .env`);
    else this.log.warn(fields, `provider ${state.leg.name} failed; trying the next one`);
  }

  /** What a failure does to its leg: its rest, the audio key pool's mark, and for a rejected key the owners' notice (`fix`: the setting to correct). */
  private applyFailure(state: LegState, failure: Failure, fix = 'check the key in .env'): void {
    state.lastFailure = failure;
    if (failure.cooldownMs > 0) state.until = failure.cooldownMs === Infinity ? Infinity : this.now() + failure.cooldownMs;
    if (state.leg.kind === 'audio' && (failure.kind === 'auth' || failure.kind === 'quota' || failure.kind === 'rate-limit')) {
      this.keyPool?.markFailed(state.leg.apiKey, state.until, failure.kind === 'quota' ? 'daily limit' : 'rate limit');
    }
    if (failure.kind === 'auth') this.notices?.raise(`key-rejected:${state.leg.name}`, `The AI provider "${state.leg.name}" rejected its key (${failure.summary}). It is skipped until the bot restarts: ${fix}.`);
  }

  /**
   * Runs `call` on each eligible leg in order until one succeeds. Context-length errors are not the leg's fault:
   * they are thrown to the caller (which trims and retries) instead of being replayed on every leg.
   */
  failover<T>(purpose: string, call: (leg: ProviderLeg, client: OpenAI) => Promise<T>, filter?: (leg: ProviderLeg) => boolean): Promise<T> {
    return this.eachLeg(purpose, async (state) => call(state.leg, state.client ?? (await this.clientOf(state))), filter);
  }

  /** `failover` over the legs' states: the chat path asks a leg without its SDK client. */
  private async eachLeg<T>(purpose: string, call: (state: LegState) => Promise<T>, filter?: (leg: ProviderLeg) => boolean): Promise<T> {
    const causes: string[] = [];
    const eligible = this.states.filter((s) => !filter || filter(s.leg));
    for (const state of eligible) {
      if (this.resting(state)) {
        causes.push(`${state.leg.name}: cooling down`);
        continue;
      }
      state.requests++;
      try {
        const result = await call(state);
        this.report({ leg: state.leg.name, outcome: 'ok', cooldownMs: 0 });
        return result;
      } catch (err) {
        const failure = classifyFailure(err);
        this.report({ leg: state.leg.name, outcome: failure.kind, cooldownMs: failure.cooldownMs });
        if (failure.kind === 'context-length') throw new ContextTooLongError(state.leg.name);
        this.markFailed(state, failure, purpose);
        causes.push(`${state.leg.name}: ${failure.summary}`);
      }
    }
    throw new AllProvidersFailedError(this.failedMessage(eligible), causes.length ? causes : ['no provider configured for this']);
  }

  /** What the user is told when every leg failed: a rejected key is not "try again later", a used-up quota is. */
  private failedMessage(eligible: LegState[]): string | undefined {
    const now = this.now();
    const kinds = eligible.map((s) => (s.until > now ? s.lastFailure?.kind : undefined));
    if (!kinds.length || kinds.some((k) => k !== 'auth' && k !== 'quota')) return undefined;
    if (kinds.every((k) => k === 'auth')) return 'My AI provider rejected my access key, so I cannot answer right now. The owner has been told and needs to fix the key.';
    if (kinds.every((k) => k === 'quota')) return 'My AI providers have used up their quota for now, so I cannot answer. Please try again later.';
    return 'My AI providers cannot answer right now (a key was rejected and the others have used up their quota). The owner has been told.';
  }

  /**
   * "Test now" from the dashboard: one tiny request to one leg, outside the chain order. Success clears the leg's
   * cooldown (it works again); a failure is recorded like any other. Returns the outcome in words (never a key).
   */
  async testLeg(name: string): Promise<{ ok: boolean; text: string }> {
    const state = this.states.find((s) => s.leg.name === name);
    if (!state) return { ok: false, text: `there is no provider leg named ${name}` };
    state.requests++;
    try {
      await (state.client ?? (await this.clientOf(state))).chat.completions.create({ model: state.leg.model, messages: [{ role: 'user', content: 'Reply with OK.' }], max_tokens: 5 });
      state.until = 0;
      state.lastFailure = undefined;
      // Answered now: what the start check found is history (the leg's card no longer shows its ✘).
      if (state.startCheck && !state.startCheck.ok) state.startCheck = undefined;
      this.notices?.recover(`key-rejected:${name}`, `The AI provider "${name}" answers again.`);
      return { ok: true, text: `${name} answered` };
    } catch (err) {
      const failure = classifyFailure(err);
      this.markFailed(state, failure, 'test');
      return { ok: false, text: `${name} failed: ${failureInWords(failure)}` };
    }
  }

  /** Records usage of a call made through `failover` (other endpoints than chat completions). */
  recordUsage(leg: string, model: string, premium: boolean, usage: ReportedUsage | undefined, userId?: string): void {
    this.usage?.record(leg, model, premium ? 'premium' : 'main', usage, userId);
  }

  /** One chat completion with failover. */
  async complete(messages: ChatMessage[], options: CompleteOptions = {}): Promise<CompletionResult> {
    // Only the ordinary chat path decides whether "the bot cannot answer chats" (premium/search have fewer legs).
    const mainChat = !options.kind && !options.model && !options.premium;
    try {
      const result = await this.chatFailover(messages, options);
      if (mainChat) this.chatAnswered();
      return result;
    } catch (err) {
      if (mainChat && err instanceof AllProvidersFailedError) this.chatFailed();
      throw err;
    }
  }

  /** Each leg's listed models (`GET /v1/models`), asked once and kept; a leg that lists none is asked again later. */
  private readonly legModelLists = new Map<string, { at: number; list: Promise<string[] | undefined> }>();

  /** The models `leg` lists, or undefined when it lists none (no such endpoint, no answer). */
  modelsOf(leg: ProviderLeg): Promise<string[] | undefined> {
    const kept = this.legModelLists.get(leg.name);
    // A list is kept for good; "lists nothing" is asked again after ten minutes (the gateway may have been down).
    if (kept && this.now() - kept.at < 600_000) return kept.list;
    const list = listModels({ baseUrl: leg.baseUrl, apiKey: leg.apiKey, timeoutMs: this.settings.upstreamTimeoutMs }).then((models) => {
      if (models) this.legModelLists.set(leg.name, { at: Infinity, list: Promise.resolve(models) });
      return models;
    });
    this.legModelLists.set(leg.name, { at: this.now(), list });
    return list;
  }

  /** The models the gateway legs list (the union), or undefined when none lists any. */
  async models(): Promise<string[] | undefined> {
    const lists = await Promise.all(this.states.filter((s) => s.leg.kind === 'gateway').map((s) => this.modelsOf(s.leg)));
    const found = lists.filter((l): l is string[] => Array.isArray(l));
    return found.length ? [...new Set(found.flat())].sort() : undefined;
  }

  /** The model `leg` uses for a request: the profile's when the leg offers it (or lists nothing), else its own. */
  private async modelFor(leg: ProviderLeg, options: CompleteOptions): Promise<{ model: string; missing: boolean }> {
    if (options.model) return { model: options.model, missing: false };
    if (options.premium) return { model: leg.premiumModel, missing: false };
    if (!options.chatModel || options.chatModel === leg.model) return { model: leg.model, missing: false };
    const listed = await this.modelsOf(leg);
    return !listed || listed.includes(options.chatModel) ? { model: options.chatModel, missing: false } : { model: leg.model, missing: true };
  }

  /**
   * The leg's `POST /chat/completions` as one request of our own (chat-post.ts: the SDK's per-request machinery was a
   * third of a message's CPU); a gateway that answers with a redirect is asked again through the SDK, which follows it.
   */
  private async postChat(state: LegState, bodyText: string): Promise<unknown> {
    state.post ??= chatPost({ baseUrl: state.leg.baseUrl, apiKey: state.leg.apiKey, timeoutMs: this.settings.upstreamTimeoutMs, maxBytes: MAX_PROVIDER_ANSWER_BYTES, what: `the answer of ${state.leg.name}` });
    const answer = await state.post(bodyText);
    if (answer !== MOVED) return answer;
    const client = state.client ?? (await this.clientOf(state));
    return client.post('/chat/completions', { body: bodyText, headers: JSON_BODY });
  }

  private async chatFailover(messages: ChatMessage[], options: CompleteOptions): Promise<CompletionResult> {
    const filter = (leg: ProviderLeg) => (!options.kind || leg.kind === options.kind) && (!options.premium || Boolean(leg.premiumModel));
    const eligible = this.states.filter((s) => filter(s.leg)).map((s) => s.leg.name);
    const first = this.states.find((s) => filter(s.leg));
    const intended = first ? { leg: first.leg.name, model: (await this.modelFor(first.leg, options)).model } : undefined;
    return this.eachLeg(
      options.premium ? 'premium chat' : 'chat',
      async (state) => {
        const { leg } = state;
        const { model, missing } = await this.modelFor(leg, options);
        // The messages last: what changes from one request of a chat to the next is at the end of the JSON text, and
        // everything before it (model, tools, system prompt, summary, earlier turns) is the same bytes as before.
        const body: OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming = {
          model,
          ...(options.tools?.length ? { tools: options.tools } : {}),
          ...(options.maxTokens ? { max_tokens: options.maxTokens } : {}),
          ...(options.extra ?? {}),
          messages,
        } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;
        // Sent as JSON text made from the prompt's frozen parts (each serialized once), not stringified whole per message.
        const completion = (await this.postChat(state, requestJson(body))) as OpenAI.Chat.Completions.ChatCompletion | undefined;
        const message = completion?.choices?.[0]?.message;
        if (!message || typeof message !== 'object') throw new BadAnswerError('answer without a message');
        const text = typeof message.content === 'string' ? message.content : '';
        if (!text.trim() && !message.tool_calls?.length) throw new BadAnswerError('answer without content');
        this.usage?.record(leg.name, model, options.premium ? 'premium' : 'main', completion.usage, options.userId);
        const passedLegs = eligible.slice(0, Math.max(0, eligible.indexOf(leg.name)));
        return { message, text, leg: leg.name, model, tokens: tokenCount(completion.usage), passedLegs, ...(intended ? { intended } : {}), ...(missing ? { chatModelMissing: true } : {}) };
      },
      filter,
    );
  }
}

/** The request's context is too long for the model; the caller should trim history and retry once. */
export class ContextTooLongError extends CodedError {
  constructor(readonly leg: string) {
    super(`context too long for ${leg}`);
  }
  get code(): PluginErrorCode {
    return 'PLUGIN_CONTEXT_TOO_LONG';
  }
}
