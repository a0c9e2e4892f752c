/*
 * What the owner decides about each AI turn of a chat, asked by the core around every model turn (`ctx.ai.respond`):
 * the chat's profile (model, tools, answer length), its money caps, and the record of what the turn was (`.why`,
 * cost). Offered by a core plugin (`turnPolicy` in its offer; the core's `profiles` plugin); another plugin's offer
 * of it is ignored, so no installed plugin can change the model or the caps behind the owner's back. `TurnPolicy`
 * itself is in offer.ts, beside the offer it is part of (so this file imports nothing back).
 */

/** What the policy decides before a turn calls the model. */
export interface TurnPlan {
  /** Refuse the turn with this sentence (a money cap reached): the model is not called. */
  refuse?: string;
  /** The chat's model: each leg that offers it uses it; a leg that does not keeps its own (the record says so). */
  model?: string;
  /** Whether a tool may be offered and called in this turn (`plugin`: the plugin offering it, `core` for the core's). */
  allowTool?(tool: string, plugin: string): boolean;
  /** An instruction added to the chat's system prompt (an answer-length preference); keep it the same turn to turn. */
  system?: string;
}

/** One tool call of a turn, by name, and how it went. */
export interface TurnToolCall {
  name: string;
  outcome: 'ok' | 'error' | 'refused';
}

/** A remembered fact that was in the turn's prompt, and who asked for it (a person's id, `dashboard`, `console`). */
export interface TurnFact {
  text: string;
  by?: string;
}

/** What one answered turn was: where it was served, what it used, what it cost in tokens and time. */
export interface TurnRecord {
  /** The leg that gave the final answer, and the model it used there. */
  leg: string;
  model: string;
  /** The model the first leg would have used (the chat's profile model, the leg's own, or premium). */
  intendedLeg: string;
  intendedModel: string;
  /** Legs that failed before one answered (in order); empty when the first leg answered. */
  failedLegs: string[];
  /** The chat's profile model, when one was asked for but the answering leg does not offer it (it used its own). */
  profileModelMissing?: string;
  premium: boolean;
  tools: TurnToolCall[];
  facts: TurnFact[];
  /** The chat's summary of older turns was in the prompt (and whose words it holds). */
  summary?: { people: string[] };
  /** Tokens over every request of the turn: all input (cached included), its cached part, output. */
  tokens: { prompt: number; cached: number; completion: number };
  /** Model requests the turn made (tool rounds count one each), and each request's model with its tokens. */
  requests: Array<{ leg: string; model: string; prompt: number; cached: number; completion: number }>;
  /** Wall time of the turn, in ms. */
  ms: number;
  /** When it was answered (epoch ms). */
  at: number;
  /** The answer as sent (WhatsApp formatting); empty when the model chose silence. */
  answer: string;
}
