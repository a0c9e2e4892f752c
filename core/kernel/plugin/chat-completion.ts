import type { ProviderLeg } from '../../services/providers/types.js';

/*
 * A chat-completion request and its answer as a plugin writes and reads them (`host.ai.complete`): the OpenAI wire
 * shape, described here without the openai SDK so the plugin API package needs no dependency on it. The provider
 * chain works with the SDK's own, wider types; these are what every one of them fits.
 */

/** A part of a message's content: `{ type: 'text', text }`, `{ type: 'image_url', image_url: { url } }`, … */
export interface ChatContentPart {
  type: string;
}

/** A function call the model asked for, as it comes back in an assistant message. */
export interface ChatToolCallRequest {
  id: string;
  type: string;
}

/** One message of a chat-completion request. */
export type ChatMessage =
  | { role: 'system' | 'developer'; content: string | ChatContentPart[]; name?: string }
  | { role: 'user'; content: string | ChatContentPart[]; name?: string }
  | { role: 'assistant'; content?: string | ChatContentPart[] | null; name?: string; tool_calls?: ChatToolCallRequest[] }
  | { role: 'tool'; content: string | ChatContentPart[]; tool_call_id: string };

/** A function the model may call: its name, what it does, and its parameters as JSON Schema. */
export interface ChatToolDefinition {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean | null };
}

export interface CompleteOptions {
  /** Use the premium model of the leg that serves the request (legs without one are skipped). */
  premium?: boolean;
  tools?: ChatToolDefinition[];
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

/** The answer: the assistant's message, its text, and which leg and model gave it. */
export interface CompletionResult {
  message: { role: 'assistant'; content: string | null; tool_calls?: ChatToolCallRequest[] };
  text: string;
  leg: string;
  model: string;
  /** The response's tokens as the provider reported them (input, its cached part, output); zeros when it did not. */
  tokens?: { prompt: number; cached: number; completion: number };
}
