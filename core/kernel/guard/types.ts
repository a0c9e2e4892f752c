import type { Actor, EffectKind } from './policy.js';

/*
 * The effect guard as plugins see it (`host.effects`): they declare each effect they can cause, with its kind, and ask
 * for it through `act`; the core's guard answers allow (it runs now), hold (the owner is asked; it runs on their 👍)
 * or deny. Declared effects are the only way: `act` refuses a name the plugin did not declare.
 */

/** Where a declared effect runs: for whom, from which chat, and to which chat when it reaches another. */
export interface EffectRun {
  actor: Actor;
  chat: string;
  to?: string;
  /** True when the owner approved it after a hold (it runs later, outside the turn that asked). */
  approved: boolean;
}

/**
 * Does a declared effect. `data` is what `act` was given (kept through a hold, across restarts: plain JSON). Resolves
 * with a sentence saying what was done, or nothing.
 */
export type EffectRunner = (data: any, run: EffectRun) => Promise<string | void> | string | void;

/** One action a plugin asks for: a declared effect's name, the chat it reaches (if another), what it does in words, its data. */
export interface EffectRequest {
  effect: string;
  to?: string;
  summary: string;
  data?: unknown;
}

/** Who asks, as the core bound it to the message or tool call (never from the model's arguments). */
export interface EffectAsker {
  senderId: string;
  chatId: string;
  isOwner: boolean;
}

/** What became of an `act`: done now (with the runner's sentence), held for the owner (its id), or refused (why). */
export type ActOutcome = { status: 'done'; result?: string } | { status: 'held'; id: string; expiresAt: number } | { status: 'denied'; reason: string };

/** A held action as the owner is shown it. */
export interface HoldView {
  id: string;
  kind: EffectKind;
  summary: string;
  by: string;
  expiresAt: number;
}

/** `host.effects`: the one path by which a plugin acts beyond answering (see core/kernel/guard). */
export interface EffectsPort {
  /** Declares an effect the plugin can cause (in `setup`): its name, its kind, and what does it. */
  declare(name: string, kind: EffectKind, run: EffectRunner): void;
  /** Asks the guard for one action; runs it at once when allowed. Rejects for an effect the plugin did not declare. */
  act(request: EffectRequest, by: EffectAsker): Promise<ActOutcome>;
  /** The owner's 👍 (`approve`) or 👎 on held action `id`: resolves with the sentence to tell them. */
  answer(id: string, approve: boolean, by: EffectAsker): Promise<string>;
  /** The held actions still waiting (expired ones are gone). */
  pending(): Promise<HoldView[]>;
}
