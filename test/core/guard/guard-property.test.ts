import { expect } from 'chai';
import fc from 'fast-check';
import { EffectGuard, type HoldsDoc } from '../../../core/kernel/guard/effect-guard.js';
import { EFFECT_KINDS, type EffectKind, type GuardPolicy } from '../../../core/kernel/guard/policy.js';
import { refusalFor } from '../../../core/kernel/guard/recipients.js';
import { createLogger } from '../../../core/services/log/logger.js';
import { PassThrough } from 'node:stream';
import { install as installFakeTimers, type Clock as InstalledClock } from '@sinonjs/fake-timers';

/*
 * Random sequences of strangers and groups writing, pairing approvals, schedules, polls, tool calls, errands, answers
 * to holds (by owners and by others, in time and late) and restarts, through the kernel's guard and its recipient
 * rule (in-process, a store kept in memory across "restarts"): no message ever reaches a chat the rule does not
 * permit, and no effect runs without an allow (at once, or an owner's 👍 in time, re-checked then).
 */

const OWNER = '100@s.whatsapp.net';
const PEOPLE = ['201@s.whatsapp.net', '202@s.whatsapp.net', '203@s.whatsapp.net', '204@s.whatsapp.net'];
const GROUPS = ['g1@g.us', 'g2@g.us'];
const CHATS = [OWNER, ...PEOPLE, ...GROUPS];
const log = createLogger({ level: 'silent', stream: new PassThrough() } as never);

type Step =
  | { t: 'write'; chat: string }
  | { t: 'pair'; chat: string }
  | { t: 'unpair'; chat: string }
  | { t: 'act'; by: string; where: string; kind: EffectKind; to?: string }
  | { t: 'answer'; which: number; by: string; approve: boolean }
  | { t: 'react'; which: number; by: string; approve: boolean }
  | { t: 'send'; to: string }
  | { t: 'time'; minutes: number }
  | { t: 'restart' };

const chat = fc.constantFrom(...CHATS);
const person = fc.constantFrom(OWNER, ...PEOPLE);
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ t: fc.constant('write' as const), chat }),
  fc.record({ t: fc.constant('pair' as const), chat }),
  fc.record({ t: fc.constant('unpair' as const), chat }),
  fc.record({ t: fc.constant('act' as const), by: person, where: chat, kind: fc.constantFrom(...EFFECT_KINDS), to: fc.option(chat, { nil: undefined }) }),
  fc.record({ t: fc.constant('answer' as const), which: fc.nat(5), by: person, approve: fc.boolean() }),
  fc.record({ t: fc.constant('react' as const), which: fc.nat(5), by: person, approve: fc.boolean() }),
  fc.record({ t: fc.constant('send' as const), to: chat }),
  fc.record({ t: fc.constant('time' as const), minutes: fc.integer({ min: 1, max: 90 }) }),
  fc.constant({ t: 'restart' as const }),
);
const verdict = fc.constantFrom('allow' as const, 'hold' as const, 'deny' as const);
const policy: fc.Arbitrary<GuardPolicy> = fc.record({
  holdMinutes: fc.integer({ min: 1, max: 120 }),
  owner: fc.record({ here: verdict, elsewhere: verdict }),
  others: fc.record({ here: verdict, elsewhere: verdict }),
  kinds: fc.dictionary(fc.constantFrom(...EFFECT_KINDS), verdict, { maxKeys: 3 }) as fc.Arbitrary<GuardPolicy['kinds']>,
});

/** One sequence through a guard over a store that outlives restarts; resolves with the violations found (none expected). */
async function run(rules: GuardPolicy, steps: Step[], timers: InstalledClock): Promise<string[]> {
  let now = 1_000_000;
  let doc: HoldsDoc = { holds: [], chats: {} };
  const stored = { get: async () => doc, update: async (c: (d: HoldsDoc) => HoldsDoc | void) => (doc = c(doc) ?? doc), save: async (c: (d: HoldsDoc) => HoldsDoc | void) => (doc = c(doc) ?? doc), remove: async () => void (doc = { holds: [], chats: {} }) };
  const letIn = new Set<string>([OWNER]);
  const wrote = new Set<string>();
  const delivered: string[] = [];
  const violations: string[] = [];
  const noticeIds: string[] = [];
  let guard!: EffectGuard;
  // What the model of the rules says: the owner approved this recipient (an allowed owner effect or a 👍 to one).
  const approvedByOwner = new Set<string>();
  const mayReceive = (to: string) => to === OWNER || approvedByOwner.has(to) || (letIn.has(to) && wrote.has(to));
  const send = async (to: string) => {
    const refusal = await refusalFor(to, { ownerChat: (c) => c === OWNER, letIn: (c) => letIn.has(c), wrote: (c) => guard.hasWritten(c), approved: (c) => guard.approvedRecipient(c) });
    if (refusal) return;
    if (!mayReceive(to)) violations.push(`a message reached ${to}, which may not receive one`);
    delivered.push(to);
  };
  const boot = () => {
    // The run before a restart tells no lapse from now on: its timers are cleared, none outlives it.
    if (guard) guard.stop();
    guard = new EffectGuard({
      policy: () => rules,
      holds: () => stored as never,
      ownerChat: (c) => c === OWNER,
      isOwner: (ids) => ids.includes(OWNER),
      askOwners: async () => {
        const id = `n${noticeIds.length}`;
        noticeIds.push(id);
        return [{ chatId: OWNER, messageId: id }];
      },
      tell: (to) => send(to),
      prefix: () => '.',
      log,
      now: () => now,
    });
    for (const kind of EFFECT_KINDS) {
      guard.declare('p', kind, kind, async (data: { to?: string; allowedAt: string }, how) => {
        // An effect runs only when the policy allows it for its asker now, or the owner approved it in time.
        const ok = how.approved ? data.allowedAt === 'held' : data.allowedAt === 'allow';
        if (!ok) violations.push(`a ${kind} ran without an allow`);
        if (how.approved && !pendingHold.has(JSON.stringify(data))) violations.push(`an approved ${kind} ran twice or after it lapsed`);
        pendingHold.delete(JSON.stringify(data));
        if (data.to) await send(data.to);
      });
    }
  };
  const pendingHold = new Map<string, number>();
  boot();
  let seq = 0;
  for (const s of steps) {
    if (s.t === 'write') {
      guard.noteWrote(s.chat);
      wrote.add(s.chat);
    } else if (s.t === 'pair') letIn.add(s.chat);
    else if (s.t === 'unpair') {
      if (s.chat !== OWNER) letIn.delete(s.chat);
    }
    else if (s.t === 'send') await send(s.to);
    else if (s.t === 'time') now += s.minutes * 60_000;
    else if (s.t === 'restart') boot();
    else if (s.t === 'act') {
      const actor = { id: s.by, isOwner: s.by === OWNER };
      const decision = guard.guard({ kind: s.kind, summary: 'x', ...(s.to ? { to: s.to } : {}) }, actor, s.where);
      const data = { seq: seq++, allowedAt: decision.verdict === 'hold' ? 'held' : decision.verdict, ...(s.to ? { to: s.to } : {}) };
      if (decision.verdict === 'allow' && s.to && actor.isOwner) approvedByOwner.add(s.to);
      if (decision.verdict === 'hold') pendingHold.set(JSON.stringify(data), now + rules.holdMinutes * 60_000);
      await guard.act('p', { effect: s.kind, summary: 'x', data, ...(s.to ? { to: s.to } : {}) }, { senderId: s.by, chatId: s.where, isOwner: actor.isOwner });
    } else {
      const hold = doc.holds[s.which % Math.max(1, doc.holds.length)];
      if (!hold) continue;
      const key = JSON.stringify(hold.data);
      const effect = { kind: hold.kind as EffectKind, summary: 'x', ...(hold.to ? { to: hold.to } : {}) };
      const allowedNow = guard.guard(effect, { id: hold.actorId, isOwner: hold.actorIsOwner }, hold.chat, true).verdict === 'allow';
      // Only an owner's 👍 in time, that the policy still allows, may run it.
      const runs = s.by === OWNER && s.approve && hold.expiresAt > now && allowedNow;
      if (runs && hold.to) approvedByOwner.add(hold.to);
      const saved = pendingHold.get(key);
      if (!runs) pendingHold.delete(key);
      if (s.t === 'answer') await guard.answer(hold.id, s.approve, { senderId: s.by });
      else await guard.onReaction({ chatId: OWNER, messageId: hold.notices[0]?.messageId ?? '', senderId: s.by, emoji: s.approve ? '👍' : '👎' });
      // Someone else's answer leaves it waiting.
      if (!runs && saved !== undefined && doc.holds.some((h) => h.id === hold.id)) pendingHold.set(key, saved);
    }
  }
  guard.stop();
  // Nothing of this sequence outlives it: every hold's lapse timer is cleared by stop().
  if (timers.countTimers()) violations.push(`${timers.countTimers()} lapse timer(s) left running after guard.stop()`);
  return violations;
}

describe('effect guard, property: nobody is messaged who may not be, and no effect runs without an allow', function () {
  this.timeout(120_000);
  it('holds over 10,000 random sequences (strangers, groups, pairing, schedules, tools, errands, approvals, restarts)', async () => {
    let sequences = 0;
    // The guard's lapse timers on a fake clock (its own time is the sequence's `now`): counted, never waited for.
    const timers = installFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      await fc.assert(
        fc.asyncProperty(policy, fc.array(step, { minLength: 1, maxLength: 25 }), async (rules, steps) => {
          sequences++;
          expect(await run(rules, steps, timers)).to.deep.equal([]);
        }),
        { numRuns: 10_000 },
      );
    } finally {
      timers.uninstall();
    }
    expect(sequences).to.be.at.least(10_000);
  });
});
