import type { IncomingMessage, MediaKind } from '../port/message.js';

/**
 * One plugin as another plugin may see it (`host.plugins()`), e.g. to list commands as `.help` does.
 *
 * @example
 * for (const p of host.plugins()) if (p.active && p.mayUse(ctx.message)) lines.push(...p.triggers.map((t) => t.help ?? p.description));
 */
export interface PluginListing {
  readonly name: string;
  readonly description: string;
  /** Switched on in config.json (or by default); false for one the owner turned off, or one refused at registration. */
  readonly enabled: boolean;
  /** Enabled and started: its handlers are matched and its tools offered. */
  readonly active: boolean;
  /** One of the core's own plugins (core/kernel/core-plugins). */
  readonly core: boolean;
  /** Its handlers in routing order (empty for one that did not start). */
  readonly triggers: readonly TriggerListing[];
  /** It declares that it answers free text no other plugin claims (`answersFreeText`). */
  readonly answersFreeText: boolean;
  /** The names of the tools it offers to the model, when it lists them up front (empty for one that did not start). */
  readonly tools: readonly string[];
  /** It chooses its tools per message (`tools` given as a function): `tools` cannot name them in advance. */
  readonly toolsPerMessage: boolean;
  /** True when this sender may use the plugin (its `access` in config.json). */
  mayUse(message: Pick<IncomingMessage, 'senderId' | 'senderAltId' | 'fromOperator'>): boolean;
}

/** One handler's trigger as `host.plugins()` shows it: the word or media it answers and its help, no code. */
export type TriggerListing = (
  | { kind: 'command'; command: string; help?: string; usage?: string }
  | { kind: 'literal'; literal: string; help?: string; usage?: string }
  | { kind: 'media'; media: MediaKind[]; help?: string }
  | { kind: 'predicate'; help?: string; usage?: string }
) & {
  /** The capabilities the handler needs (the plugin's and its own): `host.capabilities.missing(needs)` says what is off now. */
  needs: readonly string[];
};
