import type OpenAI from 'openai';
import { CodedError, type PluginErrorCode } from '../coded-error.js';

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
  /** What the one tiny request at start found (absent when none was sent: STARTUP_PROBE=off, or not done yet). */
  startCheck?: LegStartCheck;
}

/** The start check's outcome for one leg, as owners see it (never a key). */
export interface LegStartCheck {
  ok: boolean;
  /** Usable but not fully (rate-limited at start). */
  degraded?: boolean;
  /** `rejected-key`, `unknown-model`, `unreachable`, … (see LegCheck). */
  problem?: string;
  /** What was found, in words. */
  detail: string;
  /** The setting to correct, in words, when it failed. */
  fix?: string;
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
  /** The response's tokens as the provider reported them (input, its cached part, output); zeros when it did not. */
  tokens?: { prompt: number; cached: number; completion: number };
}


/** Thrown when every leg failed; `message` is safe to show a user. */
export class AllProvidersFailedError extends CodedError {
  constructor(message = 'I cannot reach any AI provider right now. Please try again in a few minutes.', readonly causes: string[] = []) {
    super(message);
  }
  get code(): PluginErrorCode {
    return 'PLUGIN_ALL_PROVIDERS_FAILED';
  }
}

