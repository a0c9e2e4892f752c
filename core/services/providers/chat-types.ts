import type OpenAI from 'openai';
import type { ProviderLeg } from './types.js';

/*
 * A chat-completion request and its answer as the provider chain speaks them: the openai SDK's wire types. The plugin
 * API describes the same shapes without the SDK (core/kernel/plugin/chat-completion.ts), so the API package needs no
 * openai dependency.
 */

export type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

export interface CompleteOptions {
  /** Use the premium model of the leg that serves the request (legs without one are skipped). */
  premium?: boolean;
  tools?: OpenAI.Chat.Completions.ChatCompletionTool[];
  maxTokens?: number;
  /** Only legs of this kind (e.g. 'gateway'). */
  kind?: ProviderLeg['kind'];
  /** Override the model on every leg (e.g. the audio provider's search model). */
  model?: string;
  /**
   * The chat's profile model: each leg that offers it (its `GET /v1/models` lists it, or it lists nothing) uses it; a
   * leg whose list lacks it keeps its own model, and the result says so (`chatModelMissing`).
   */
  chatModel?: string;
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
  /** The response's tokens as the provider reported them (input, its cached part, output); zeros when it did not. */
  tokens?: { prompt: number; cached: number; completion: number };
  /** Eligible legs before the one that answered (failed now, or resting after an earlier failure); empty: none. */
  passedLegs?: string[];
  /** The first eligible leg and the model it would have used: what served had nothing failed. */
  intended?: { leg: string; model: string };
  /** The chat's profile model was asked for, but the answering leg does not offer it: it used its own. */
  chatModelMissing?: boolean;
}
