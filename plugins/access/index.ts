import { definePlugin, MAX_PERSONA_CHARS, userPart, type CommandContext } from '../../core/index.js';

type Ctx = CommandContext;

const ownersOnly = (what: string) => `Sorry, only the owners of this bot can ${what}.`;

async function approve(ctx: Ctx): Promise<void> {
  const prefix = ctx.host.config().prefix;
  if (!ctx.isOwner) return void (await ctx.reply(ownersOnly('approve pairing codes')));
  if (!ctx.args) return void (await ctx.reply(`Send ${prefix}approve <code> with the code from the pairing request.`));
  const result = await ctx.host.access.approve(ctx.args, ctx.senderId);
  if (!result.ok) return void (await ctx.reply(result.reason));
  const { request, answered } = result;
  await ctx.reply(
    `Approved: ${request.senderName ? `${request.senderName} ` : ''}(+${userPart(request.sender)}) can talk to me now.${answered ? ` I am answering the ${answered} message${answered === 1 ? '' : 's'} they sent meanwhile.` : ''}`,
  );
}

async function deny(ctx: Ctx): Promise<void> {
  const prefix = ctx.host.config().prefix;
  if (!ctx.isOwner) return void (await ctx.reply(ownersOnly('deny pairing codes')));
  if (!ctx.args) return void (await ctx.reply(`Send ${prefix}deny <code> with the code from the pairing request.`));
  const result = await ctx.host.access.deny(ctx.args, ctx.senderId);
  if (!result.ok) return void (await ctx.reply(result.reason));
  await ctx.reply(`Denied: (+${userPart(result.request.sender)}) is not let in, and what they sent is dropped. They get no new code for an hour.`);
}

const ACTIVATION_WORDS: Record<string, string> = {
  mention: 'I answer here when someone mentions me or replies to me',
  always: 'I read every message here and answer when I have something to say',
  off: 'I stay quiet here (I still keep the conversation as context)',
};

async function activation(ctx: Ctx): Promise<void> {
  const prefix = ctx.host.config().prefix;
  if (!ctx.message.isGroup) {
    return void (await ctx.reply(`${prefix}activation is for groups. Who may write to me privately is set by access.mode in config.json.`));
  }
  const wanted = ctx.args.toLowerCase();
  if (!wanted) {
    const set = ctx.host.access.activation(ctx.chatId);
    const mode = set ?? (ctx.host.config().groups.policy === 'open' ? 'mention' : 'off');
    return void (await ctx.reply(`Activation here: ${mode}${set ? '' : ' (no owner has set it)'}: ${ACTIVATION_WORDS[mode]}. Owners change it with ${prefix}activation mention|always|off.`));
  }
  if (!ctx.isOwner) return void (await ctx.reply(ownersOnly(`open or close a group (${prefix}activation)`)));
  if (!(wanted in ACTIVATION_WORDS)) return void (await ctx.reply(`Send ${prefix}activation mention, ${prefix}activation always or ${prefix}activation off.`));
  await ctx.host.access.setActivation(ctx.chatId, wanted as 'mention' | 'always' | 'off', ctx.senderId);
  await ctx.reply(`Done: ${ACTIVATION_WORDS[wanted]}.`);
}

async function persona(ctx: Ctx): Promise<void> {
  const prefix = ctx.host.config().prefix;
  const current = ctx.host.access.persona(ctx.chatId);
  if (!ctx.args) {
    return void (await ctx.reply(
      current ? `This chat's persona:\n${current}\n\n${prefix}persona off removes it.` : `This chat has no persona. ${prefix}persona <instructions> gives it one (at most ${MAX_PERSONA_CHARS} characters).`,
    ));
  }
  // In a private chat the chat is the sender's own; in a group only owners shape how the bot speaks to everyone.
  if (ctx.message.isGroup && !ctx.isOwner) return void (await ctx.reply(ownersOnly(`set a group's persona (${prefix}persona)`)));
  if (ctx.args.toLowerCase() === 'off') {
    await ctx.host.access.setPersona(ctx.chatId, undefined, ctx.senderId);
    return void (await ctx.reply(current ? 'Done: this chat has no persona any more.' : 'This chat had no persona.'));
  }
  if (ctx.args.length > MAX_PERSONA_CHARS) {
    return void (await ctx.reply(`That persona is too long (${ctx.args.length} characters; the limit is ${MAX_PERSONA_CHARS}). Nothing was changed.`));
  }
  // The person at the console is an owner without an owner's id in config.json: their persona is stamped `console`.
  await ctx.host.access.setPersona(ctx.chatId, ctx.args, ctx.message.fromOperator ? 'console' : ctx.senderId);
  await ctx.reply(`Done: in this chat I follow these instructions from now on (other chats are not affected). ${prefix}persona shows them, ${prefix}persona off removes them.`);
}

async function bot(ctx: Ctx): Promise<void> {
  const prefix = ctx.host.config().prefix;
  const wanted = ctx.args.toLowerCase();
  if (!ctx.isOwner) return void (await ctx.reply(ownersOnly(`pause me in a chat (${prefix}bot)`)));
  if (wanted === 'on') {
    const was = await ctx.host.access.resume(ctx.chatId);
    return void (await ctx.reply(was ? 'I am back: I answer in this chat again.' : 'I am already answering in this chat.'));
  }
  if (wanted === 'off') {
    await ctx.host.access.pause(ctx.chatId, null, ctx.senderId);
    return void (await ctx.reply(`Paused: I stay quiet in this chat until an owner sends ${prefix}bot on (other chats are not affected).`));
  }
  const until = ctx.host.access.pausedUntil(ctx.chatId);
  const state = until === undefined ? 'I answer in this chat' : until === null ? 'I am paused in this chat' : `I am paused in this chat until ${new Date(until).toISOString().slice(11, 16)} UTC`;
  await ctx.reply(`${state}. Owners: ${prefix}bot on / ${prefix}bot off.`);
}

/**
 * Who the bot answers and how, as chat commands for the owners: approving strangers' pairing codes, opening groups,
 * a persona per chat, pausing the bot in a chat. The rules themselves are the core's (core/access): turning this
 * plugin off leaves them in force, and the dashboard's access view still works.
 */
export default definePlugin({
  name: 'access',
  description: 'Owners: let strangers in, open groups, give a chat its own persona, pause me in a chat',
  order: 10,
  setup: () => ({
    commands: [
      { command: 'approve', usage: '.approve <code>', help: 'owners: let in the sender of a pairing code (and answer what they sent)', run: approve },
      { command: 'deny', usage: '.deny <code>', help: 'owners: refuse a pairing code', run: deny },
      { command: 'activation', usage: '.activation [mention|always|off]', help: 'groups: show, or (owners) set, when I take part here', run: activation },
      { command: 'persona', usage: '.persona [<instructions>|off]', help: "show or set this chat's own instructions for me (groups: owners)", run: persona },
      { command: 'bot', usage: '.bot [on|off]', help: 'owners: pause me in this chat, or hand it back to me', run: bot },
    ],
  }),
});
