import type OpenAI from 'openai';
import type { BotContext, ToolDefinition } from '../plugin/types.js';

export type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** One leg of the provider chain, as other endpoints (vision) see it. */
export interface ProviderLeg {
  /** Stable, key-free name: `primary`, `second`, `audio-1`, … */
  readonly name: string;
  readonly kind: 'gateway' | 'audio';
  /** Base URL normalised to end in exactly one `/v1`. */
  readonly baseUrl: string;
  /** The root without `/v1` (the health probe; the Anthropic SDK adds `/v1` itself). */
  readonly rootUrl: string;
  readonly apiKey: string;
  readonly model: string;
  readonly premiumModel: string;
}

/** Health of one leg for the dashboard and the log (never the key). */
export interface LegHealth {
  name: string;
  kind: ProviderLeg['kind'];
  model: string;
  premiumModel: string;
  /** Live state: usable, resting after a failure, key rejected (until restart), quota used up. */
  state: LegCondition;
  coolingDownUntil?: number;
  lastFailure?: string;
  /** The last failure in plain words for owners ("the key was rejected (HTTP 401)"). */
  lastError?: string;
  requests: number;
  failures: number;
}

export type LegCondition = 'healthy' | 'cooling-down' | 'rejected' | 'exhausted';

export interface CompleteOptions {
  /** Use the premium model of the leg that serves the request (legs without one are skipped). */
  premium?: boolean;
  tools?: OpenAI.Chat.Completions.ChatCompletionTool[];
  maxTokens?: number;
  /** Only legs of this kind (e.g. 'gateway'). */
  kind?: ProviderLeg['kind'];
  /** Override the model on every leg (e.g. the audio provider's search model). */
  model?: string;
  /** Extra request body fields. */
  extra?: Record<string, unknown>;
  /** Who asked (for usage accounting). */
  userId?: string;
}

export interface CompletionResult {
  message: OpenAI.Chat.Completions.ChatCompletionMessage;
  text: string;
  leg: string;
  model: string;
}

export interface RespondOptions {
  /** The user's text (defaults to ctx.text). */
  text?: string;
  premium?: boolean;
  /** Extra system prompt lines for this turn (a plugin's instructions). */
  system?: string;
  /** Tools offered in addition to those of enabled plugins. */
  extraTools?: ToolDefinition[];
  /** Offer only these tools (plus extraTools), instead of every enabled plugin's. */
  onlyTools?: string[];
  /** Skip writing the user's text to history (the caller already did). */
  userAlreadyInHistory?: boolean;
  /**
   * Only these senders' turns (and the bot's answers to them) reach the model, and the chat's memory is left out:
   * for a turn whose tools act for one person (an open workspace in a group), so that other members' text —
   * addressed to the bot or not — cannot steer them. Ids are jids or bare numbers, phone or LID.
   */
  onlyTurnsOf?: string[];
}

/** Thrown when every leg failed; `message` is safe to show a user. */
export class AllProvidersFailedError extends Error {
  constructor(message = 'I cannot reach any AI provider right now. Please try again in a few minutes.', readonly causes: string[] = []) {
    super(message);
  }
}

/**
 * The AI services plugins use. Every call goes through the provider chain: failover, cooldowns, usage accounting.
 *
 * @example
 * const answer = await ctx.ai.respond(ctx, { text: transcript });
 * await ctx.reply(answer);
 */
export interface AiService {
  /** True when some chat leg is usable now (configured and not cooling down). */
  available(): boolean;
  /** One chat-completion request through the chain, with failover. */
  complete(messages: ChatMessage[], options?: CompleteOptions): Promise<CompletionResult>;
  /**
   * Answers a turn in the context's chat as the main model: system prompt (bot name, date), memory, history,
   * tools of enabled plugins and the tool-call loop. Records the user's text and the answer in the history.
   */
  respond(ctx: BotContext, options?: RespondOptions): Promise<string>;
  /**
   * Checks the sender's AI budget (requests per minute, tokens per day, premium budget) for a call that does not go
   * through `respond` (vision, say). Returns the sentence to tell the user when over a limit; owners are exempt.
   */
  budget(ctx: BotContext, premium?: boolean): Promise<string | undefined>;
  /** Records token usage of a call made through `failover`, for the usage ledger and the sender's budget. */
  recordUsage(leg: string, model: string, premium: boolean, usage: { prompt_tokens?: number; completion_tokens?: number } | undefined, userId?: string): void;
  /** The configured legs in chain order. */
  legs(): ProviderLeg[];
  /** Each leg's live state (healthy, cooling down until …, rejected, used up) and last error in words; never a key. */
  health(): LegHealth[];
  /**
   * Runs any upstream call over the legs in chain order with the chain's failover and cooldown rules
   * (vision uses it for `/v1/messages`). `filter` picks the eligible legs.
   */
  failover<T>(purpose: string, call: (leg: ProviderLeg) => Promise<T>, filter?: (leg: ProviderLeg) => boolean, userId?: string): Promise<T>;
}
