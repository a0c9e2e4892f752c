import { randomInt } from 'node:crypto';
import type { Logger } from '../../services/log/logger.js';
import type { StoredDoc } from '../../services/store/store-api.js';
import { decide, EFFECT_KINDS, type Actor, type Decision, type Effect, type EffectKind, type GuardPolicy } from './policy.js';
import type { ActOutcome, EffectAsker, EffectRequest, EffectRunner, HoldView } from './types.js';

/** A held action as kept (config-free plain JSON: it outlives a restart). */
export interface StoredHold {
  id: string;
  plugin: string;
  effect: string;
  kind: string;
  to?: string;
  summary: string;
  data: unknown;
  actorId: string;
  actorIsOwner: boolean;
  chat: string;
  at: number;
  expiresAt: number;
  /** The messages that asked the owners (a 👍/👎 on one of them answers). */
  notices: Array<{ chatId: string; messageId: string }>;
}

export interface HoldsDoc {
  holds: StoredHold[];
  /** Per chat id: when it first wrote to the bot; whether an owner approved it as a recipient (the bot may write to it first). */
  chats: Record<string, { wrote?: number; approvedBy?: string; approvedAt?: number }>;
}

/** A reaction someone put on a message (👍 on a hold's message answers it). */
export interface Reaction {
  chatId: string;
  messageId: string;
  senderId: string;
  senderAltId?: string;
  emoji: string;
  fromOperator?: boolean;
}

export interface EffectGuardDeps {
  policy(): GuardPolicy;
  holds(): StoredDoc<HoldsDoc>;
  /** True for an owner's own private chat with the bot (the console's too). */
  ownerChat(chatId: string): boolean;
  /** True when one of the ids is an owner's (or the person at the console). */
  isOwner(ids: string[], fromOperator?: boolean): boolean;
  /** Asks every owner in their private chat; resolves with the messages sent (a reaction on one answers). */
  askOwners(text: string): Promise<Array<{ chatId: string; messageId: string }>>;
  /** Tells someone the outcome in a chat (through the bot-started send path). */
  tell(chatId: string, text: string): Promise<void>;
  prefix(): string;
  log: Logger;
  now?: () => number;
  /** Told of each action held for the owners, once they were asked (the outbound event webhooks). Must not throw. */
  held?: (hold: { id: string; kind: string; summary: string; by: string; chat: string; to?: string; expiresAt: number }) => void;
}

const APPROVE = new Set(['👍', '👍🏻', '👍🏼', '👍🏽', '👍🏾', '👍🏿']);
const REFUSE = new Set(['👎', '👎🏻', '👎🏼', '👎🏽', '👎🏾', '👎🏿']);
const ID_LETTERS = 'abcdefghjkmnpqrstuvwxyz23456789';

/**
 * The one guard every effect passes: `guard(effect, actor, chat)` answers allow | hold | deny by config.json's
 * `guard` policy (policy.ts). `act` is the only way to cause a declared effect: allowed, it runs now; held, the owners
 * get one message saying what would happen and it runs on a 👍 (or `.yes <id>`), re-checked at that moment; a 👎,
 * `.no <id>` or the expiry drops it without doing anything. Holds and approved recipients live in the `guard` core
 * plugin's declared store, so they survive a restart.
 */
export class EffectGuard {
  private readonly runners = new Map<string, { kind: EffectKind; run: EffectRunner }>();
  private readonly now: () => number;
  /** The chats seen writing in this run (the store has every run's). */
  private wrote: Set<string> | undefined;
  /** Per waiting hold, the timer that tells the owners when it lapses. */
  private readonly lapses = new Map<string, NodeJS.Timeout>();
  private stopped = false;

  constructor(private readonly deps: EffectGuardDeps) {
    // Read at each use: a test's fake clock installed later is seen.
    this.now = deps.now ?? (() => Date.now());
  }

  /** The guard's verdict (see `decide`); `approved` re-checks an action the owner said 👍 to. */
  guard(effect: Effect, actor: Actor, chat: string, approved = false): Decision {
    return decide(effect, actor, chat, this.deps.policy(), (id) => this.deps.ownerChat(id), approved);
  }

  /** Declares `plugin`'s effect `name` of `kind`, done by `run`. */
  declare(plugin: string, name: string, kind: EffectKind, run: EffectRunner): void {
    if (!EFFECT_KINDS.includes(kind)) throw new TypeError(`effect ${name} of plugin ${plugin}: kind must be one of ${EFFECT_KINDS.join(', ')}`);
    this.runners.set(`${plugin}/${name}`, { kind, run });
  }

  /** True when `plugin` declared effect `name`. */
  declared(plugin: string, name: string): boolean {
    return this.runners.has(`${plugin}/${name}`);
  }

  /** Asks for one declared effect (see the class). */
  async act(plugin: string, request: EffectRequest, by: EffectAsker): Promise<ActOutcome> {
    const runner = this.runners.get(`${plugin}/${request.effect}`);
    if (!runner) throw new TypeError(`plugin ${plugin} did not declare the effect ${request.effect} (host.effects.declare in setup)`);
    const actor: Actor = { id: by.senderId, isOwner: by.isOwner };
    const effect: Effect = { kind: runner.kind, summary: request.summary, ...(request.to ? { to: request.to } : {}) };
    const decision = this.guard(effect, actor, by.chatId);
    this.deps.log.info({ plugin, effect: request.effect, kind: runner.kind, to: request.to, chat: by.chatId, verdict: decision.verdict }, `guard: ${decision.reason}`);
    if (decision.verdict === 'deny') return { status: 'denied', reason: decision.reason };
    if (decision.verdict === 'allow') {
      // The owner's own choice of recipient (the policy lets them act without asking): the bot may write to it first.
      if (request.to && actor.isOwner) await this.approveRecipient(request.to, actor.id);
      const result = await runner.run(request.data ?? null, { actor, chat: by.chatId, ...(request.to ? { to: request.to } : {}), approved: false });
      return { status: 'done', ...(typeof result === 'string' ? { result } : {}) };
    }
    return this.hold(plugin, request, by);
  }

  /**
   * Holds a declared effect for the owners without asking the policy (the caller did: a guarded tool call). Kept
   * first, then the owners are asked; resolves with its id.
   */
  async hold(plugin: string, request: EffectRequest, by: EffectAsker): Promise<{ status: 'held'; id: string; expiresAt: number }> {
    const runner = this.runners.get(`${plugin}/${request.effect}`);
    if (!runner) throw new TypeError(`plugin ${plugin} did not declare the effect ${request.effect} (host.effects.declare in setup)`);
    const kind = runner.kind;
    const actor: Actor = { id: by.senderId, isOwner: by.isOwner };
    const chat = by.chatId;
    const doc = this.deps.holds();
    const now = this.now();
    const expiresAt = now + this.deps.policy().holdMinutes * 60_000;
    const { holds } = await doc.get();
    const id = this.newId(new Set(holds.map((h) => h.id)));
    const hold: StoredHold = { id, plugin, effect: request.effect, kind, summary: request.summary, data: request.data ?? null, actorId: actor.id, actorIsOwner: actor.isOwner, chat, at: now, expiresAt, notices: [], ...(request.to ? { to: request.to } : {}) };
    // Kept before the owners are asked: a 👍 that comes back at once finds it.
    await doc.save((d) => void d.holds.push(hold));
    const p = this.deps.prefix();
    const minutes = this.deps.policy().holdMinutes;
    const text = `⏳ Waiting for your OK (${id}): ${request.summary}\nReact 👍 to do it once or 👎 to drop it, or answer ${p}yes ${id} / ${p}no ${id}. It lapses in ${minutes} min.`;
    const notices = await this.deps.askOwners(text);
    await doc.save((d) => {
      const kept = d.holds.find((h) => h.id === id);
      if (kept) kept.notices = notices;
    });
    this.deps.held?.({ id, kind, summary: request.summary, by: actor.id, chat, expiresAt, ...(request.to ? { to: request.to } : {}) });
    this.armLapse(id, expiresAt);
    return { status: 'held', id, expiresAt };
  }

  /** The owner's answer to hold `id` (👍 / `.yes`: `approve`): the sentence to tell them. */
  async answer(id: string, approve: boolean, by: { senderId: string; senderAltId?: string; fromOperator?: boolean; isOwner?: boolean }): Promise<string> {
    const ids = by.senderAltId ? [by.senderId, by.senderAltId] : [by.senderId];
    if (!(by.isOwner || this.deps.isOwner(ids, by.fromOperator))) return 'Only the owner answers held actions.';
    const doc = this.deps.holds();
    let hold: StoredHold | undefined;
    // Taken out first, in one save: a second 👍 (or a 👍 and a .yes) never runs it twice.
    await doc.save((d) => {
      const at = d.holds.findIndex((h) => h.id === id.toLowerCase());
      if (at >= 0) hold = d.holds.splice(at, 1)[0];
    });
    if (!hold) return `Nothing is waiting under ${id}.`;
    this.disarmLapse(hold.id);
    if (hold.expiresAt <= this.now()) return `${hold.id} lapsed before your answer: nothing was done (${hold.summary}).`;
    if (!approve) {
      this.deps.log.info({ hold: hold.id, plugin: hold.plugin, effect: hold.effect }, 'guard: the owner refused a held action');
      return `👎 Dropped (${hold.id}): ${hold.summary}`;
    }
    return this.runApproved(hold, ids[0]!);
  }

  private async runApproved(hold: StoredHold, owner: string): Promise<string> {
    const runner = this.runners.get(`${hold.plugin}/${hold.effect}`);
    if (!runner) return `Not done (${hold.id}): the plugin ${hold.plugin} is not running now.`;
    const actor: Actor = { id: hold.actorId, isOwner: hold.actorIsOwner };
    const effect: Effect = { kind: runner.kind, summary: hold.summary, ...(hold.to ? { to: hold.to } : {}) };
    // Re-checked now: the policy may have changed since it was held.
    const decision = this.guard(effect, actor, hold.chat, true);
    this.deps.log.info({ hold: hold.id, plugin: hold.plugin, effect: hold.effect, verdict: decision.verdict }, `guard (approved): ${decision.reason}`);
    if (decision.verdict !== 'allow') return `Not done (${hold.id}): ${decision.reason}.`;
    if (hold.to) await this.approveRecipient(hold.to, owner);
    try {
      const result = await runner.run(hold.data, { actor, chat: hold.chat, ...(hold.to ? { to: hold.to } : {}), approved: true });
      return typeof result === 'string' && result ? result : `✅ Done (${hold.id}): ${hold.summary}`;
    } catch (err) {
      this.deps.log.warn({ err, hold: hold.id }, 'guard: an approved action failed');
      return `Not done (${hold.id}): ${(err as Error).message}`;
    }
  }

  /** A reaction: 👍/👎 by an owner on a hold's message answers it (told in that chat). Resolves true when it did. */
  async onReaction(reaction: Reaction): Promise<boolean> {
    const approve = APPROVE.has(reaction.emoji);
    if (!approve && !REFUSE.has(reaction.emoji)) return false;
    const { holds } = await this.deps.holds().get();
    const hold = holds.find((h) => h.notices.some((n) => n.messageId === reaction.messageId && n.chatId === reaction.chatId));
    if (!hold) return false;
    const told = await this.answer(hold.id, approve, reaction);
    await this.deps.tell(reaction.chatId, told);
    return true;
  }

  /**
   * Arms the lapse of every kept hold (at start: they outlive a restart); one that lapsed while the bot was down is
   * told now. Resolves once those are told.
   */
  async resumeLapses(): Promise<void> {
    const { holds } = await this.deps.holds().get();
    const now = this.now();
    await Promise.all(holds.map((h) => (h.expiresAt <= now ? this.lapse(h.id) : this.armLapse(h.id, h.expiresAt))));
  }

  /** No lapse is told from now on (the bot stops; the holds stay kept, and are resumed at the next start). */
  stop(): void {
    this.stopped = true;
    for (const timer of this.lapses.values()) clearTimeout(timer);
    this.lapses.clear();
  }

  private armLapse(id: string, expiresAt: number): void {
    if (this.stopped) return;
    this.disarmLapse(id);
    // Longer than a timer can wait: armed again when that one fires (still not due then).
    const timer = setTimeout(() => void this.lapse(id), Math.min(Math.max(0, expiresAt - this.now()), 2 ** 31 - 1));
    timer.unref?.();
    this.lapses.set(id, timer);
  }

  private disarmLapse(id: string): void {
    clearTimeout(this.lapses.get(id));
    this.lapses.delete(id);
  }

  /** Hold `id`'s time is up: it is dropped, undone, and the owners asked about it are told so (each where they were asked). */
  private async lapse(id: string): Promise<void> {
    this.lapses.delete(id);
    if (this.stopped) return;
    let hold: StoredHold | undefined;
    let waiting: StoredHold | undefined;
    const now = this.now();
    await this.deps.holds().save((d) => {
      const at = d.holds.findIndex((h) => h.id === id);
      if (at < 0) return;
      if (d.holds[at]!.expiresAt > now) waiting = d.holds[at];
      else hold = d.holds.splice(at, 1)[0];
    });
    // Still waiting (a timer cannot wait that long): armed again for the rest.
    if (waiting) return this.armLapse(id, waiting.expiresAt);
    if (!hold) return;
    this.deps.log.info({ hold: hold.id, plugin: hold.plugin, effect: hold.effect }, 'guard: a held action lapsed without an answer; nothing was done');
    const told = `⌛ ${hold.id} lapsed without your answer: nothing was done (${hold.summary}).`;
    for (const chatId of new Set(hold.notices.map((n) => n.chatId))) await this.deps.tell(chatId, told);
  }

  /** The held actions still waiting; expired ones are dropped (they never run). */
  async pending(): Promise<HoldView[]> {
    const now = this.now();
    const doc = this.deps.holds();
    const { holds } = await doc.get();
    // One whose timer has not fired yet lapses now (told, as at its time).
    for (const h of holds.filter((h) => h.expiresAt <= now)) await this.lapse(h.id);
    return holds.filter((h) => h.expiresAt > now).map((h) => ({ id: h.id, kind: h.kind as EffectKind, summary: h.summary, by: h.actorId, expiresAt: h.expiresAt }));
  }

  /** True when the owner approved `chatId` as a recipient (the bot may write to it first). */
  async approvedRecipient(chatId: string): Promise<boolean> {
    const { chats } = await this.deps.holds().get();
    return Object.prototype.hasOwnProperty.call(chats, chatId) && chats[chatId]!.approvedBy !== undefined;
  }

  private async approveRecipient(chatId: string, by: string): Promise<void> {
    await this.deps.holds().save((d) => {
      const chat = (d.chats[chatId] ??= {});
      chat.approvedBy ??= by;
      chat.approvedAt ??= this.now();
    });
  }

  /** Someone wrote in `chatId` (any inbound message): kept once per chat, so a later bot-started message may go there. */
  noteWrote(chatId: string): void {
    if (this.wrote?.has(chatId)) return;
    (this.wrote ??= new Set()).add(chatId);
    void this.deps
      .holds()
      .update((d) => {
        const chat = (d.chats[chatId] ??= {});
        chat.wrote ??= this.now();
      })
      .catch((err: unknown) => this.deps.log.warn({ err, chat: chatId }, 'could not note that a chat wrote to the bot'));
  }

  /** True when someone wrote in `chatId` (this run or an earlier one). */
  async hasWritten(chatId: string): Promise<boolean> {
    if (this.wrote?.has(chatId)) return true;
    const { chats } = await this.deps.holds().get();
    return Object.prototype.hasOwnProperty.call(chats, chatId) && chats[chatId]!.wrote !== undefined;
  }

  private newId(taken: Set<string>): string {
    for (;;) {
      let id = '';
      for (let i = 0; i < 4; i++) id += ID_LETTERS[randomInt(ID_LETTERS.length)];
      if (!taken.has(id)) return id;
    }
  }
}
