import OpenAI from 'openai';
import type { Settings } from '../config/settings.js';
import type { Logger } from '../log/logger.js';
import { BadAnswerError, classifyFailure, type Failure } from './failure.js';
import { normalizeBaseUrl } from './normalize.js';
import { AllProvidersFailedError, type ChatMessage, type CompleteOptions, type CompletionResult, type ProviderLeg } from './types.js';
import type { UsageLedger } from './usage.js';

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
  client: OpenAI;
  until: number;
  lastFailure?: Failure;
  requests: number;
  failures: number;
}

/** Health of one leg for the dashboard and the log (never the key). */
export interface LegHealth {
  name: string;
  kind: ProviderLeg['kind'];
  model: string;
  premiumModel: string;
  coolingDownUntil?: number;
  lastFailure?: string;
  requests: number;
  failures: number;
}

/** What became of one request to a leg: `ok` or the failure class, and the rest it then got (0: none). */
export interface LegOutcome {
  leg: string;
  outcome: 'ok' | Failure['kind'];
  cooldownMs: number;
}

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
  private readonly outcomeListeners: Array<(event: LegOutcome) => void> = [];
  constructor(
    private readonly settings: Settings,
    private readonly log: Logger,
    private readonly usage?: UsageLedger,
    private readonly now: () => number = Date.now,
  ) {
    this.states = legsFromSettings(settings).map((leg) => ({
      leg,
      client: new OpenAI({ apiKey: leg.apiKey, baseURL: leg.baseUrl, maxRetries: 0, timeout: settings.upstreamTimeoutMs }),
      until: 0,
      requests: 0,
      failures: 0,
    }));
  }

  legs(): ProviderLeg[] {
    return this.states.map((s) => s.leg);
  }

  /** True when some leg is usable now. */
  available(filter?: (leg: ProviderLeg) => boolean): boolean {
    const now = this.now();
    return this.states.some((s) => s.until <= now && (!filter || filter(s.leg)));
  }

  health(): LegHealth[] {
    const now = this.now();
    return this.states.map((s) => ({
      name: s.leg.name,
      kind: s.leg.kind,
      model: s.leg.model,
      premiumModel: s.leg.premiumModel,
      coolingDownUntil: s.until > now ? s.until : undefined,
      lastFailure: s.lastFailure?.summary,
      requests: s.requests,
      failures: s.failures,
    }));
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
    state.lastFailure = failure;
    if (failure.cooldownMs > 0) state.until = failure.cooldownMs === Infinity ? Infinity : this.now() + failure.cooldownMs;
    const fields = { leg: state.leg.name, purpose, failure: failure.kind, status: failure.status, detail: failure.summary, cooldownMs: failure.cooldownMs === Infinity ? 'until restart' : failure.cooldownMs };
    if (failure.kind === 'auth') this.log.error(fields, `provider ${state.leg.name} rejected its key: skipped until restart; check the key in .env`);
    else this.log.warn(fields, `provider ${state.leg.name} failed; trying the next one`);
  }

  /**
   * Runs `call` on each eligible leg in order until one succeeds. Context-length errors are not the leg's fault:
   * they are thrown to the caller (which trims and retries) instead of being replayed on every leg.
   */
  async failover<T>(purpose: string, call: (leg: ProviderLeg, client: OpenAI) => Promise<T>, filter?: (leg: ProviderLeg) => boolean): Promise<T> {
    const causes: string[] = [];
    const eligible = this.states.filter((s) => !filter || filter(s.leg));
    for (const state of eligible) {
      if (state.until > this.now()) {
        causes.push(`${state.leg.name}: cooling down`);
        continue;
      }
      state.requests++;
      try {
        const result = await call(state.leg, state.client);
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
    throw new AllProvidersFailedError(undefined, causes.length ? causes : ['no provider configured for this']);
  }

  /** Records usage of a call made through `failover` (other endpoints than chat completions). */
  recordUsage(leg: string, model: string, premium: boolean, usage: { prompt_tokens?: number; completion_tokens?: number } | undefined, userId?: string): void {
    this.usage?.record(leg, model, premium ? 'premium' : 'main', usage, userId);
  }

  /** One chat completion with failover. */
  async complete(messages: ChatMessage[], options: CompleteOptions = {}): Promise<CompletionResult> {
    const filter = (leg: ProviderLeg) => (!options.kind || leg.kind === options.kind) && (!options.premium || Boolean(leg.premiumModel));
    return this.failover(
      options.premium ? 'premium chat' : 'chat',
      async (leg, client) => {
        const model = options.model ?? (options.premium ? leg.premiumModel : leg.model);
        const body: OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming = {
          model,
          messages,
          ...(options.tools?.length ? { tools: options.tools } : {}),
          ...(options.maxTokens ? { max_tokens: options.maxTokens } : {}),
          ...(options.extra ?? {}),
        } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;
        const completion = await client.chat.completions.create(body);
        const message = completion?.choices?.[0]?.message;
        if (!message || typeof message !== 'object') throw new BadAnswerError('answer without a message');
        const text = typeof message.content === 'string' ? message.content : '';
        if (!text.trim() && !message.tool_calls?.length) throw new BadAnswerError('answer without content');
        this.usage?.record(leg.name, model, options.premium ? 'premium' : 'main', completion.usage, options.userId);
        return { message, text, leg: leg.name, model };
      },
      filter,
    );
  }
}

/** The request's context is too long for the model; the caller should trim history and retry once. */
export class ContextTooLongError extends Error {
  constructor(readonly leg: string) {
    super(`context too long for ${leg}`);
  }
}
