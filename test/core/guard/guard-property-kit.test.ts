import { expect } from 'chai';
import fc from 'fast-check';
import { definePlugin } from '../../../core/index.js';
import { startTestBot, type TestBot, type TestClock } from '../../../app/testing/index.js';
import type { BotAction } from '../../../core/adapters/memory/memory-transport.js';
import access from '../../../plugins/access/index.js';
import errands from '../../../plugins/errands/index.js';
import remind from '../../../plugins/remind/index.js';

/*
 * Who may receive a message the bot starts, proven through a real bot of the kit (the access, errands and remind
 * plugins, and a probe that asks for sends and effects the way any plugin can): random sequences of strangers writing
 * privately and in groups, pairing approvals and refusals, errands by the owner and by others, answers to holds
 * (.yes/.no and 👍/👎, by the owner and by others, in time and late), holds lapsing, reminders, and plugins sending to
 * any chat. After each step, every message the bot sent went to an owner, in answer to the person who just wrote in
 * that chat, or — started by the bot — to a chat that wrote and is let in, or one the owner approved in time.
 *
 * One bot serves every sequence (each in chats of its own), on a faked clock.
 */

/**
 * Sequences per run. Each step is a real message through the bot (its stores, outbox and plugins: about 1–5 ms), so
 * `npm test` runs 500 (about 6 s of CPU); `GUARD_PROPERTY_RUNS=10000` runs the full 10,000 (minutes). The
 * kernel's own property test (guard-property.test.ts) runs 10,000 through the guard alone in every `npm test`.
 */
const RUNS = Number(process.env.GUARD_PROPERTY_RUNS ?? 500);
const OWNER_DIGITS = '10000000001';
const OWNER = `${OWNER_DIGITS}@s.whatsapp.net`;
const BOT_ID = '10000000000@s.whatsapp.net';
const HOLD_MINUTES = 5;
const STRANGERS = 3;
const GROUPS = 2;

/** A probe plugin: `.tell <chat>` starts a message there (host.send); `.do <chat>` asks the guard for a message effect to it. */
const probe = definePlugin({
  name: 'probe',
  description: 'sends and effects on request',
  setup(host) {
    host.effects.declare('note', 'message', async (data: { to: string }) => void (await host.send(data.to, 'a note')));
    return {
      commands: [
        {
          command: 'tell',
          run: async (ctx) => {
            const told = await ctx.host.send(ctx.args.trim(), 'hello from the bot').then(() => 'sent', (err: { code?: string }) => `refused: ${err.code}`);
            await ctx.reply(told);
          },
        },
        {
          command: 'do',
          run: async (ctx) => {
            const to = ctx.args.trim();
            const outcome = await ctx.host.effects.act({ effect: 'note', summary: `a note to ${to}`, to, data: { to } }, ctx);
            await ctx.reply(outcome.status);
          },
        },
      ],
    };
  },
});

/** Who acts: the owner, or stranger n of the sequence. */
type Who = 'owner' | number;
/** A chat of the sequence: the owner's, stranger n's private chat, or group n. */
type Target = { owner: true } | { stranger: number } | { group: number };
type Step =
  | { t: 'write'; who: number }
  | { t: 'groupWrite'; who: Who; group: number; addressed: boolean }
  | { t: 'approve'; who: number }
  | { t: 'deny'; who: number }
  | { t: 'errand'; by: Who; to: Target }
  | { t: 'answer'; which: number; by: Who; yes: boolean }
  | { t: 'react'; which: number; by: Who; yes: boolean }
  | { t: 'tell'; by: Who; in: Target; to: Target }
  | { t: 'act'; by: Who; in: Target; to: Target }
  | { t: 'remind'; by: Who; in: Target }
  | { t: 'time'; minutes: number };

const who: fc.Arbitrary<Who> = fc.oneof(fc.constant('owner' as const), fc.nat(STRANGERS - 1));
const stranger = fc.nat(STRANGERS - 1);
const target: fc.Arbitrary<Target> = fc.oneof(fc.constant({ owner: true as const }), fc.record({ stranger }), fc.record({ group: fc.nat(GROUPS - 1) }));
const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ t: fc.constant('write' as const), who: stranger }), weight: 3 },
  { arbitrary: fc.record({ t: fc.constant('groupWrite' as const), who, group: fc.nat(GROUPS - 1), addressed: fc.boolean() }), weight: 2 },
  { arbitrary: fc.record({ t: fc.constant('approve' as const), who: stranger }), weight: 2 },
  fc.record({ t: fc.constant('deny' as const), who: stranger }),
  { arbitrary: fc.record({ t: fc.constant('errand' as const), by: who, to: target }), weight: 2 },
  { arbitrary: fc.record({ t: fc.constant('answer' as const), which: fc.nat(3), by: who, yes: fc.boolean() }), weight: 2 },
  { arbitrary: fc.record({ t: fc.constant('react' as const), which: fc.nat(3), by: who, yes: fc.boolean() }), weight: 2 },
  { arbitrary: fc.record({ t: fc.constant('tell' as const), by: who, in: target, to: target }), weight: 3 },
  { arbitrary: fc.record({ t: fc.constant('act' as const), by: who, in: target, to: target }), weight: 2 },
  fc.record({ t: fc.constant('remind' as const), by: who, in: target }),
  fc.record({ t: fc.constant('time' as const), minutes: fc.integer({ min: 1, max: 2 * HOLD_MINUTES }) }),
);

/** The chats, people and oracle state of one sequence. */
class Sequence {
  readonly strangers: string[];
  readonly groups: string[];
  /** Chats someone (other than the bot) wrote in, this sequence. */
  readonly wrote = new Set<string>();
  /** Strangers an owner let in (their `.approve` was answered "Approved"). */
  readonly letIn = new Set<string>();
  /** Recipients the owner approved: a 👍 or `.yes` on a hold to them while it waited. */
  readonly approved = new Set<string>();
  /** Pairing codes by stranger chat, as the owner was told them. */
  readonly codes = new Map<string, string>();
  /** Holds the owner was asked about, in order: id, recipient, the message that asked, when it lapses. */
  readonly holds: Array<{ id: string; to: string | undefined; notice: string; expiresAt: number }> = [];

  constructor(n: number) {
    this.strangers = Array.from({ length: STRANGERS }, (_, i) => `${20_000_000_000 + n * 10 + i}@s.whatsapp.net`);
    this.groups = Array.from({ length: GROUPS }, (_, i) => `1203630${String(n * 10 + i).padStart(11, '0')}@g.us`);
  }

  person(w: Who): string {
    return w === 'owner' ? OWNER : this.strangers[w]!;
  }

  chat(t: Target): string {
    return 'owner' in t ? OWNER : 'stranger' in t ? this.strangers[t.stranger]! : this.groups[t.group]!;
  }

  /** The bot may start a message here: the owner, a chat that wrote and is let in (groups are open), or one the owner approved. */
  mayStart(chat: string): boolean {
    if (chat === OWNER || this.approved.has(chat)) return true;
    const letIn = chat.endsWith('@g.us') || this.letIn.has(chat);
    return letIn && this.wrote.has(chat);
  }
}

describe('who may receive a message the bot starts, property, through a real bot of the kit', function () {
  this.timeout(60_000 + RUNS * 200);
  let bot: TestBot;
  let clock: TestClock;

  before(async () => {
    bot = await startTestBot([probe, access, errands, remind], {
      ownIds: [BOT_ID],
      config: {
        owners: [OWNER_DIGITS],
        access: { mode: 'pairing' },
        groups: { policy: 'open' },
        guard: { holdMinutes: HOLD_MINUTES },
        sending: { perChatPerMinute: 60, globalPerMinute: 600, jitterMs: 0 },
      },
      // What the bot starts goes out at once, still one at a time and in order, each through the recipient check: who
      // receives is the property, not the pace (safe-sending.test.ts's). Paced, every step waited out a second of
      // clock, and each second ran the stores' flushes and WAL checkpoints: most of this file's time.
      sendPacing: { perChatPerMinute: Infinity, globalPerMinute: Infinity, jitterMs: 0 },
    });
    clock = bot.useClock();
  });
  after(() => bot?.stop());

  /** Runs `work` to its end, moving the faked clock on while it waits for a timer (the outbox's pacing). */
  async function settle<T>(work: Promise<T>): Promise<T> {
    let done = false;
    const finished = work.finally(() => (done = true));
    // Awaited below; until then a failure is not an unhandled rejection.
    finished.catch(() => undefined);
    for (let spins = 0; !done; spins++) {
      await new Promise((resolve) => setImmediate(resolve));
      if (!done && spins >= 2) await clock.tick(100);
    }
    return finished;
  }

  /** A message as `from` in `chat` (a group message mentions the bot when `addressed`). */
  function push(s: Sequence, from: string, chat: string, text: string, addressed = true): Promise<BotAction[]> {
    const group = chat.endsWith('@g.us');
    const name = from === OWNER ? 'Owner' : `P${from.split('@')[0]}`;
    return settle(bot.push({ chatId: chat, senderId: from, senderName: name, text, ...(group && addressed ? { mentions: [BOT_ID] } : {}) }));
  }

  /** Runs one step; resolves with the chat whose own message (or reaction) it was, whose answers are replies. */
  async function run(s: Sequence, st: Step): Promise<string | undefined> {
    switch (st.t) {
      case 'write': {
        const chat = s.strangers[st.who]!;
        s.wrote.add(chat);
        await push(s, chat, chat, 'hello there');
        return chat;
      }
      case 'groupWrite': {
        const chat = s.groups[st.group]!;
        s.wrote.add(chat);
        await push(s, s.person(st.who), chat, 'hi all', st.addressed);
        return chat;
      }
      case 'approve':
      case 'deny': {
        const chat = s.strangers[st.who]!;
        const code = s.codes.get(chat);
        if (!code) return undefined;
        const answered = await push(s, OWNER, OWNER, `.${st.t} ${code}`);
        if (st.t === 'approve' && answered.some((a) => a.type === 'text' && a.chatId === OWNER && a.text.startsWith('Approved:'))) s.letIn.add(chat);
        return OWNER;
      }
      case 'errand': {
        const from = s.person(st.by);
        s.wrote.add(from);
        await push(s, from, from, `.send ${s.chat(st.to).split('@')[0]} see you at six`);
        return from;
      }
      case 'answer':
      case 'react': {
        const hold = s.holds[st.which % Math.max(1, s.holds.length)];
        if (!hold) return undefined;
        const from = s.person(st.by);
        // An owner's 👍 or .yes while it waits approves its recipient (the policy lets an owner's approved message go).
        if (st.by === 'owner' && st.yes && clock.now() < hold.expiresAt && hold.to) s.approved.add(hold.to);
        if (st.t === 'answer') {
          s.wrote.add(from);
          await push(s, from, from, `.${st.yes ? 'yes' : 'no'} ${hold.id}`);
          return from;
        }
        await settle(bot.transport.reactTo(st.yes ? '👍' : '👎', from, OWNER, hold.notice));
        return from === OWNER ? OWNER : undefined;
      }
      case 'tell':
      case 'act': {
        const from = s.person(st.by);
        // In a group of the sequence, or the asker's own private chat (nobody writes in another's).
        const where = 'group' in st.in ? s.chat(st.in) : from;
        const to = s.chat(st.to);
        s.wrote.add(where);
        // An owner's effect in the chat it reaches, or reaching the owner, needs no OK: its recipient is theirs to choose.
        if (st.t === 'act' && from === OWNER && (to === where || to === OWNER)) s.approved.add(to);
        await push(s, from, where, `.${st.t === 'tell' ? 'tell' : 'do'} ${to}`);
        return where;
      }
      case 'remind': {
        const from = s.person(st.by);
        const chat = s.chat(st.in);
        const where = chat.endsWith('@g.us') ? chat : from;
        s.wrote.add(where);
        await push(s, from, where, '.remind 2m stretch');
        return where;
      }
      case 'time':
        await settle(clock.tick(st.minutes * 60_000));
        return undefined;
    }
  }

  /** What the owner was told in this step: pairing codes and holds (with the message that asked). */
  function learn(s: Sequence, actions: BotAction[], at: number): void {
    for (const a of actions) {
      if (a.type !== 'text' || a.chatId !== OWNER) continue;
      const pairing = /^Pairing request: .*?(\d{6,15})\b[^]*Code: (\S+)/.exec(a.text);
      if (pairing && s.strangers.some((c) => c.startsWith(pairing[1]!))) s.codes.set(`${pairing[1]}@s.whatsapp.net`, pairing[2]!);
      const held = /^⏳ Waiting for your OK \(([a-z0-9]{4})\): (?:send to .*?\((\d+)\)|a note to (\S+))/.exec(a.text);
      if (held) {
        const to = held[2] ? `${held[2]}@s.whatsapp.net` : held[3];
        s.holds.push({ id: held[1]!, to: to && (to.includes('@') ? to : `${to}@s.whatsapp.net`), notice: a.id, expiresAt: at + HOLD_MINUTES * 60_000 });
      }
    }
  }

  it(`over ${RUNS.toLocaleString('en')} random sequences, nothing the bot starts reaches a chat that may not receive it`, async () => {
    let sequences = 0;
    const chatsOf = new Map<string, Sequence>([[OWNER, new Sequence(-1)]]);
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 8 }), async (list) => {
        const s = new Sequence(sequences++);
        for (const chat of [...s.strangers, ...s.groups]) chatsOf.set(chat, s);
        const violations: string[] = [];
        for (const st of list) {
          const before = bot.transport.actions.length;
          const at = clock.now();
          const own = await run(s, st);
          const actions = bot.transport.actions.slice(before);
          learn(s, actions, at);
          for (const a of actions) {
            if (a.type === 'typing' || a.chatId === own) continue;
            // A chat of an earlier sequence is judged by what happened in that one (its reminder may fire now).
            const of = chatsOf.get(a.chatId);
            if (!of) violations.push(`a ${a.type} reached ${a.chatId}, a chat no sequence made`);
            else if (!of.mayStart(a.chatId)) violations.push(`after ${JSON.stringify(st)}: a ${a.type} the bot started reached ${a.chatId}`);
          }
          if (violations.length) break;
        }
        expect(violations, violations.join("; ")).to.deep.equal([]);
      }),
      // One bot serves every sequence: a failing one is reported as it ran (shrinking would replay it in new chats).
      { numRuns: RUNS, endOnFailure: true },
    );
    expect(sequences).to.be.at.least(RUNS);
  });
});
