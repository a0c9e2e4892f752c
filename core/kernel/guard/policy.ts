import type { GuardConfig } from '../../services/config/schema.js';
import { sameChat } from '../port/ids.js';

/*
 * The guard's policy: one pure decision per effect, so what is allowed can be read (and tested) apart from how a hold
 * is asked for and kept. config.json's `guard` key holds it (services/config/schema.ts); `.yes`/`.no` are the `guard` core plugin's.
 */

/** Every kind of action that leaves the chat it was asked in or changes the world. */
export const EFFECT_KINDS = ['message', 'publish', 'deleteFiles', 'schedule', 'mcpTool', 'sendFile'] as const;
export type EffectKind = (typeof EFFECT_KINDS)[number];

export type Verdict = 'allow' | 'hold' | 'deny';

/** What config.json's `guard` says (defaults in `DEFAULT_GUARD_POLICY`). */
export interface GuardPolicy {
  /** How long a held action waits for the owner's 👍/👎 (or `.yes`/`.no`) before it lapses, doing nothing. */
  holdMinutes: number;
  /** Effects an owner starts: `here` in the chat they asked in (or their own chat with the bot), `elsewhere` reaching any other chat. */
  owner: { here: Verdict; elsewhere: Verdict };
  /** Effects anyone else starts. */
  others: { here: Verdict; elsewhere: Verdict };
  /** Per kind, a verdict that can only make the one above stricter (`deleteFiles: "hold"` asks the owner before every delete). */
  kinds: Partial<Record<EffectKind, Verdict>>;
}

export const DEFAULT_GUARD_POLICY: GuardPolicy = {
  holdMinutes: 60,
  owner: { here: 'allow', elsewhere: 'hold' },
  others: { here: 'allow', elsewhere: 'deny' },
  kinds: {},
};

/** One action asked for: its kind, the chat it reaches when that is not the chat it was asked in, and what it does in words. */
export interface Effect {
  kind: EffectKind;
  /** The chat the effect reaches (a message to Mum), when it is not the chat it was asked in. */
  to?: string;
  /** What would happen, for the owner who is asked ("send to Mum: “I'll be late”"). */
  summary: string;
}

/** Who asked for it: the person whose turn (command, tool call, schedule) it is, as the core bound it. */
export interface Actor {
  id: string;
  isOwner: boolean;
}

export interface Decision {
  verdict: Verdict;
  /** Why, in words (for the log, and for the person when it is refused). */
  reason: string;
}

const STRICTNESS: Record<Verdict, number> = { allow: 0, hold: 1, deny: 2 };

/**
 * The guard's answer for `effect`, asked by `actor` in `chat`. `ownerChat` tells an owner's own private chat with the
 * bot. `approved`: the owner already said 👍 to this very action (it is re-checked when it runs): a hold then allows,
 * a deny stays a deny (the policy may have changed meanwhile).
 */
export function decide(effect: Effect, actor: Actor, chat: string, policy: GuardPolicy, ownerChat: (chatId: string) => boolean, approved = false): Decision {
  const here = !effect.to || sameChat(effect.to, chat) || (actor.isOwner && ownerChat(effect.to));
  const side = actor.isOwner ? policy.owner : policy.others;
  let verdict = here ? side.here : side.elsewhere;
  const kindRule = policy.kinds[effect.kind];
  if (kindRule && STRICTNESS[kindRule] > STRICTNESS[verdict]) verdict = kindRule;
  const who = actor.isOwner ? 'an owner' : 'someone who is not an owner';
  const where = here ? 'in their own chat' : 'reaching another chat';
  if (verdict === 'hold' && approved) return { verdict: 'allow', reason: `the owner approved this ${effect.kind}` };
  const reason = verdict === 'deny' ? `the owner's rules do not let ${who} do this (${effect.kind} ${where})` : `${effect.kind} by ${who} ${where}: ${verdict === 'hold' ? 'the owner confirms first' : 'allowed'}`;
  return { verdict, reason };
}

/** Two ids of one chat (the port's rule, here for the guard's callers). */
export { sameChat };

/** The policy config.json's `guard` section gives (checked by its schema), each part it leaves out at its default. */
export function policyOf(section: GuardConfig | undefined): GuardPolicy {
  const given = section ?? {};
  const d = DEFAULT_GUARD_POLICY;
  return {
    holdMinutes: given.holdMinutes ?? d.holdMinutes,
    owner: { ...d.owner, ...given.owner },
    others: { ...d.others, ...given.others },
    kinds: { ...given.kinds },
  };
}
