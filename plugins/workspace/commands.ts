import { AllProvidersFailedError, type CommandContext, type MessageContext, type Static } from '../../core/index.js';
import { displayName } from './file-names.js';
import { kb } from './files.js';
import { RESET_EFFECT, type workspaceOptions } from './options.js';
import type { WorkspaceService } from './service.js';
import type { WorkspaceMeta } from './store.js';
import { asTurnTools, workspacePrompt, workspaceTools } from './tools.js';

type Options = Static<typeof workspaceOptions>;

/** How long `/ws reset` waits for its confirmation. */
const RESET_CONFIRM_MS = 2 * 60_000;

const USAGE = [
  '/ws: open your workspace',
  '/ws files: list your files',
  '/ws show <file>: show a file',
  '/ws run <file.py>: run a python script',
  '/ws name <username>: claim your site name',
  '/ws reset: delete all files (asks first)',
  '/ws exit: leave the workspace',
].join('\n');

/**
 * The `reset` effect (declared at start, index.ts): deletes every file of a workspace, run when the guard allows it
 * (at once by default, or on the owner's 👍 when its policy holds `deleteFiles`).
 */
export async function resetWorkspace(service: WorkspaceService, data: { owner: string }): Promise<string> {
  const meta = service.store.byOwner(data.owner);
  if (!meta) throw new Error('that workspace is gone');
  await service.locks.exclusive(meta.id, () => service.store.wipeFiles(meta));
  return `🗑 All files of the workspace were deleted.${meta.username ? ` The site name ${meta.username} stays its owner's.` : ''}`;
}

/** Pending reset confirmations: workspace id → time asked. */
const resets = new Map<string, number>();

async function fileList(service: WorkspaceService, meta: WorkspaceMeta): Promise<string> {
  return service.fileOp(meta, async (files) => {
    const list = await files.list();
    if (!list.length) return 'No files yet.';
    const usage = await files.usage();
    const shown = list.slice(0, 40).map((f) => `• ${displayName(f.name)} (${kb(f.size)})`);
    if (list.length > 40) shown.push(`… and ${list.length - 40} more`);
    return `Files (${list.length}, ${kb(usage.bytes)} of ${service.options().quotaMb} MB):\n${shown.join('\n')}`;
  });
}

/**
 * `/ws …`: opens, lists, runs, names, resets or leaves the sender's workspace.
 *
 * @example await handleCommand(service, ctx); // ctx.args = 'run main.py'
 */
export async function handleCommand(service: WorkspaceService, ctx: CommandContext<Options>): Promise<void> {
  const args = ctx.args;
  const space = args.search(/\s/);
  const sub = (space === -1 ? args : args.slice(0, space)).toLowerCase();
  const rest = space === -1 ? '' : args.slice(space).trim();
  const owner = service.ownerOf(ctx.senderId, ctx.message.senderAltId);
  if (!owner) {
    await ctx.reply('I cannot tell who you are, so I cannot open a workspace for you.');
    return;
  }
  const existing = service.store.byOwner(owner);

  switch (sub) {
    case '':
    case 'open': {
      const meta = existing ?? (await service.store.create(owner));
      await service.store.setOpen(meta, ctx.chatId, true);
      const runtime = service.runtime();
      const lines = [
        existing ? '🧑‍💻 Your workspace is open.' : '🧑‍💻 Your new workspace is open.',
        await fileList(service, meta),
        service.siteLine(meta),
        runtime.ok ? `Python: ready${runtime.sandboxed ? ' (sandboxed: no network, time and memory limits)' : ' (WITHOUT sandbox: the owner allowed unsafe runs)'}.` : `Python: ${runtime.reason}`,
        '',
        ctx.message.isGroup
          ? 'While it is open, what you write here while mentioning me (or replying to me) goes to the assistant, which can write, read, run and publish your files. It answers to you only: in workspace mode it sees only your messages here, never what other members write, so nobody else can make it touch your files. Your files and their output are posted in this group when you ask, so keep private things for a private chat.'
          : 'While it is open, what you write here goes to the assistant, which can write, read, run and publish your files. Try: "write a python script that prints the first 10 primes and run it".',
        USAGE,
      ];
      await ctx.reply(lines.join('\n'));
      return;
    }
    case 'exit':
    case 'close':
    case 'quit': {
      if (!existing || existing.open[ctx.chatId] === undefined) {
        await ctx.reply('Your workspace is not open here. Open it with /ws');
        return;
      }
      await service.store.setOpen(existing, ctx.chatId, false);
      await ctx.reply('👋 Left the workspace. Your files are kept; /ws opens it again.');
      return;
    }
    case 'help':
      await ctx.reply(USAGE);
      return;
  }

  if (!existing) {
    await ctx.reply('You have no workspace yet. Send /ws to create it.');
    return;
  }
  const meta = existing;
  service.store.touch(meta, ctx.chatId);
  switch (sub) {
    case 'files':
    case 'ls':
      await ctx.reply(await fileList(service, meta));
      return;
    case 'show':
    case 'cat': {
      const text = await service.fileOp(meta, async (files) => {
        const read = await files.read(rest, 3500);
        return `${rest}:\n\`\`\`\n${read.text}\n\`\`\`${read.truncated ? `\n(first 3500 bytes of ${kb(read.size)})` : ''}`;
      });
      await ctx.reply(text);
      return;
    }
    case 'run': {
      if (!rest) {
        await ctx.reply('Which file? /ws run <file.py>');
        return;
      }
      await ctx.react('⏳').catch(() => undefined);
      await ctx.reply(await service.run(meta, rest));
      return;
    }
    case 'name':
      await ctx.reply(await service.claimUsername(meta, rest));
      return;
    case 'reset': {
      const asked = resets.get(meta.id);
      if (rest.toLowerCase() === 'confirm' && asked && Date.now() - asked < RESET_CONFIRM_MS) {
        resets.delete(meta.id);
        // Deleting files is an effect: the guard's policy may hold it for the owner's 👍 or refuse it.
        const outcome = await ctx.host.effects.act({ effect: RESET_EFFECT, summary: `delete every file of the workspace of ${ctx.message.senderName ?? owner.split('@')[0]}`, data: { owner } }, ctx);
        if (outcome.status === 'done') await ctx.reply(outcome.result ?? '🗑 All files of your workspace were deleted.');
        else if (outcome.status === 'denied') await ctx.reply(`Nothing was deleted: ${outcome.reason}.`);
        else if (!(ctx.isOwner && !ctx.message.isGroup)) await ctx.reply(`Nothing is deleted yet: the owner is asked first (${outcome.id}).`);
        return;
      }
      resets.set(meta.id, Date.now());
      await ctx.reply('⚠ This deletes ALL files in your workspace and cannot be undone. To go ahead, send /ws reset confirm within 2 minutes.');
      return;
    }
    default:
      await ctx.reply(`Unknown workspace command "${sub.slice(0, 30)}".\n${USAGE}`);
  }
}

/**
 * A message of a user whose workspace is open in this chat: the main model answers it with the workspace tools.
 *
 * @example await handleWorkspaceChat(service, ctx);
 */
export async function handleWorkspaceChat(service: WorkspaceService, ctx: MessageContext<Options>): Promise<void> {
  const meta = service.openWorkspace(ctx.senderId, ctx.message.senderAltId, ctx.chatId);
  if (!meta) return;
  service.store.touch(meta, ctx.chatId);
  if (!ctx.host.capabilities.has('chat') || !ctx.ai.available()) {
    await ctx.reply(`${new AllProvidersFailedError().message} Your workspace commands still work: /ws files, /ws run <file.py>.`);
    return;
  }
  try {
    // Workspace tools act for the owner only: the model sees the owner's turns (and its answers to them), never
    // what other group members wrote, so nobody else's text can steer the tools.
    const onlyTurnsOf = [...new Set([...meta.ids, meta.owner, ctx.senderId, ...(ctx.message.senderAltId ? [ctx.message.senderAltId] : [])])];
    const answer = await ctx.ai.respond(ctx, { system: workspacePrompt(service, meta), extraTools: asTurnTools(workspaceTools(service), ctx), onlyTurnsOf });
    if (answer.trim()) await ctx.reply(answer);
  } catch (err) {
    if (err instanceof AllProvidersFailedError) {
      await ctx.reply(err.message);
      return;
    }
    throw err;
  }
}
