import { definePlugin, Store, Type, type CommandContext } from '../../index.js';

const HOLD = Type.Object({
  id: Type.String(),
  plugin: Type.String(),
  effect: Type.String(),
  kind: Type.String(),
  to: Type.Optional(Type.String()),
  summary: Type.String(),
  data: Type.Unknown(),
  actorId: Type.String(),
  actorIsOwner: Type.Boolean(),
  chat: Type.String(),
  at: Type.Number(),
  expiresAt: Type.Number(),
  notices: Type.Array(Type.Object({ chatId: Type.String(), messageId: Type.String() })),
});

/**
 * What the guard keeps: the held actions waiting for the owner, and the recipients the owner approved (who the bot may
 * write to first, apart from who may write to it).
 */
export const GUARD_HOLDS = Store.doc(
  'holds',
  Type.Object({
    holds: Type.Array(HOLD),
    // Per chat: when it first wrote to the bot, and whether an owner approved it as a recipient (who the bot may write to first).
    chats: Type.Record(Type.String(), Type.Object({ wrote: Type.Optional(Type.Number()), approvedBy: Type.Optional(Type.String()), approvedAt: Type.Optional(Type.Number()) })),
  }),
  () => ({ holds: [], chats: {} }),
  { title: 'held actions and recipients', people: { byId: (doc) => doc.chats } },
);

/** `.yes <id>` / `.no <id>`: the owner's answer to a held action (👍/👎 on its message does the same). */
async function answer(ctx: CommandContext, approve: boolean): Promise<void> {
  const { prefix } = ctx.host.config();
  if (!ctx.isOwner) {
    await ctx.reply(`Sorry, only the owner answers held actions.`);
    return;
  }
  let id = ctx.args.trim().split(/\s+/)[0] ?? '';
  if (!id) {
    const waiting = await ctx.host.effects.pending();
    if (waiting.length !== 1) {
      await ctx.reply(waiting.length ? `Which one? ${waiting.map((h) => `${h.id}: ${h.summary}`).join('\n')}\n\nAnswer ${prefix}${approve ? 'yes' : 'no'} <id>.` : 'Nothing is waiting for your answer.');
      return;
    }
    id = waiting[0]!.id;
  }
  await ctx.reply(await ctx.host.effects.answer(id, approve, ctx));
}

/**
 * The `guard` core plugin: the store of held actions and `.yes`/`.no`. The guard itself and its policy (config.json
 * `guard`) are the kernel's (core/kernel/guard); this is how the owner talks to it.
 */
export default definePlugin({
  name: 'guard',
  description: 'Owners: approve (.yes <id>) or refuse (.no <id>) an action held for your OK',
  order: 15,
  stores: [GUARD_HOLDS],
  setup: () => ({
    commands: [
      { command: 'yes', usage: '.yes <id>', help: 'owners: do the held action <id> (or 👍 on its message)', run: (ctx) => answer(ctx, true) },
      { command: 'no', usage: '.no <id>', help: 'owners: drop the held action <id> (or 👎 on its message)', run: (ctx) => answer(ctx, false) },
    ],
  }),
});
