import type { ChatMessage, CompleteOptions, CompletionResult, LegHealth, ProviderLeg } from '../providers/types.js';
import type { BotContext, ToolDefinition } from './types.js';

/*
 * What plugins see of the AI, declared next to the plugin types: the core's chat service (core/chat/) implements it
 * over the provider chain (core/providers/), which knows nothing of plugins.
 */

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
