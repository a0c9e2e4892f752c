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
}
