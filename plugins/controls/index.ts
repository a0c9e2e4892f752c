import { definePlugin, defineTool, Type, type CommandContext, type MessageContext, type PluginHost } from '../../core/index.js';

type Ctx = CommandContext;

/** The sender's ids (phone jid and LID when both are known). */
const idsOf = (ctx: MessageContext) => [ctx.senderId, ctx.message.senderAltId].filter((id): id is string => Boolean(id));

/** In a private chat anyone may reset or forget their own chat; in a group only owners and the group's admins. */
async function mayChangeChat(ctx: MessageContext): Promise<boolean> {
  if (!ctx.message.isGroup || ctx.isOwner) return true;
  return ctx.host.isGroupAdmin(ctx.chatId, idsOf(ctx));
}

const GROUP_ONLY_ADMINS = 'In a group only the group admins and the bot owners can do that.';

/**
 * Something was forgotten: the chat's summary of older turns goes too (it may repeat what was forgotten, and cannot
 * be edited line by line). Returns the sentence that says so, or '' when the chat had none.
 */
async function forgetSummary(host: PluginHost, chatId: string): Promise<string> {
  const removed = await host.histories.removeSummaryWhere(chatId, () => true);
  return removed ? ' The summary of our older conversation is cleared too (it could repeat it).' : '';
}

async function reset(ctx: Ctx): Promise<void> {
  if (!(await mayChangeChat(ctx))) {
    await ctx.reply(`${GROUP_ONLY_ADMINS} (.reset clears this chat's conversation for everyone here.)`);
    return;
  }
  const removed = await ctx.host.histories.clear(ctx.chatId);
  ctx.log.info({ removed }, 'conversation reset by the chat');
  await ctx.reply(
    `Done: this chat's conversation starts fresh (${removed} earlier message${removed === 1 ? '' : 's'} and the summary of older ones no longer go to the AI). What I was asked to remember stays; send ${ctx.host.config().prefix}forget to see or remove it.`,
  );
}

async function forget(ctx: Ctx): Promise<void> {
  const prefix = ctx.host.config().prefix;
  const arg = ctx.args.toLowerCase();
  const facts = await ctx.memory.facts();
  if (!arg) {
    if (!facts.length) {
      await ctx.reply('I remember nothing about this chat.');
      return;
    }
    const list = facts.map((f, i) => `${i + 1}. ${f.text}`).join('\n');
    await ctx.reply(`What I remember in this chat:\n${list}\n\nSend ${prefix}forget <number> to remove one, or ${prefix}forget all.`);
    return;
  }
  if (!(await mayChangeChat(ctx))) {
    await ctx.reply(GROUP_ONLY_ADMINS);
    return;
  }
  if (arg === 'all') {
    const removed = await ctx.host.memories.forget(ctx.chatId, 'all');
    const summary = await forgetSummary(ctx.host, ctx.chatId);
    await ctx.reply(removed.length ? `Forgotten: all ${removed.length} thing${removed.length === 1 ? '' : 's'} I remembered in this chat.${summary}` : `I remembered nothing here, so there was nothing to forget.${summary}`);
    return;
  }
  const number = /^\d{1,4}$/.test(arg) ? Number(arg) : NaN;
  if (!Number.isInteger(number)) {
    await ctx.reply(`Send ${prefix}forget to see the numbered list, then ${prefix}forget <number> or ${prefix}forget all.`);
    return;
  }
  const removed = await ctx.host.memories.forget(ctx.chatId, number);
  if (!removed.length) {
    await ctx.reply(`There is no number ${number}: I remember ${facts.length} thing${facts.length === 1 ? '' : 's'} here. Send ${prefix}forget to see the list.`);
    return;
  }
  await ctx.reply(`Forgotten: "${removed[0].text}".${await forgetSummary(ctx.host, ctx.chatId)}`);
}

/** The `forget` tool: "forget that I like tea" removes the facts that contain the words. */
function forgetTool(host: PluginHost) {
  return defineTool({
    name: 'forget',
    // It changes the chat's memory.
    effects: { outsideText: false, acts: 'chats' },
    description:
      'Remove facts from this chat\'s memory when the user asks you to forget something. Pass words that appear in the stored fact (e.g. "likes tea").',
    parameters: Type.Object({ about: Type.String({ description: 'words of the fact to forget' }) }),
    async run(args, call) {
      const about = args.about.trim();
      if (!about) return 'Nothing forgotten: say what to forget.';
      if (call.ctx.message.isGroup && !call.isOwner && !(await host.isGroupAdmin(call.chatId, [call.senderId, call.senderAltId].filter((id): id is string => Boolean(id))))) {
        return `Not forgotten: ${GROUP_ONLY_ADMINS}`;
      }
      const removed = await host.memories.forget(call.chatId, { containing: about });
      // The summary may say it too, whether or not a stored fact did.
      const summary = await forgetSummary(host, call.chatId);
      return removed.length ? `Forgotten: ${removed.map((f) => `"${f.text}"`).join(', ')}.${summary}` : `Nothing in memory mentions "${about}".${summary}`;
    },
  });
}

/**
 * In-chat controls: `.reset` (fresh conversation, memory kept) and `.forget` (see and withdraw what the bot remembers).
 * (`.status` is the core's `status` plugin, core/kernel/core-plugins/status.ts.)
 */
export default definePlugin({
  name: 'controls',
  description: 'Start a conversation fresh, and see or withdraw what I remember',
  order: 20,
  setup: (host) => ({
    commands: [
      { command: 'reset', help: "start this chat's conversation fresh (what I remember stays)", run: reset },
      { command: 'forget', usage: '.forget [<number>|all]', help: 'list what I remember here; remove one item or everything', run: forget },
    ],
    tools: [forgetTool(host)],
  }),
});
