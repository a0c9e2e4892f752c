import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { definePlugin, type CommandContext } from '../../core/index.js';

/** How long a `.mydata delete` waits for its confirmation. */
export const CONFIRM_WINDOW_MS = 5 * 60 * 1000;

/** The person's ids (phone jid and LID when both are known), device suffixes dropped. */
function personOf(ctx: CommandContext): string[] {
  const canonical = (id: string) => `${id.split('@')[0].split(':')[0]}@${id.split('@')[1] ?? 's.whatsapp.net'}`;
  return [...new Set([ctx.senderId, ctx.message.senderAltId].filter((id): id is string => Boolean(id)).map(canonical))];
}

/** Pending delete confirmations of one bot: sender → until when. */
type Pending = Map<string, number>;

/**
 * Privacy controls: `.mydata` sends the sender a file with everything the bot keeps about them (history of each chat
 * they share with the bot, remembered facts, voice notes and transcripts, reminders and time zone, workspace
 * listing); `.mydata delete` asks for a confirmation and `.mydata delete confirm` (within 5 minutes) deletes all of
 * it. Only in a private chat: the file and the question never land in a group.
 */
export default definePlugin({
  name: 'mydata',
  description: 'See everything I keep about you, or have it deleted',
  order: 25,
  setup: () => {
    // Per bot, in the factory's closure: two bots in one process never see each other's pending deletes.
    const pending: Pending = new Map();
    return {
      commands: [{ command: 'mydata', usage: '.mydata [delete]', help: 'get a file with everything I keep about you; .mydata delete removes it', run: (ctx) => mydata(ctx, pending) }],
    };
  },
});

async function mydata(ctx: CommandContext, pending: Pending): Promise<void> {
  {
    const prefix = ctx.host.config().prefix;
    if (ctx.message.isGroup) {
      await ctx.reply(`Your data is private: send ${prefix}mydata to me in a private chat.`);
      return;
    }
    const person = personOf(ctx);
    const args = ctx.args.trim().toLowerCase();
    if (args === 'delete') {
      pending.set(ctx.senderId, Date.now() + CONFIRM_WINDOW_MS);
      await ctx.reply(
        `This deletes everything I keep about you: your messages in my history (this chat whole, your own messages in groups), what I remember, your messages in the searchable log of past messages (.recall), your voice notes and their transcripts, your .voice choice and the seconds of audio you sent today, your reminders and time zone, your messages in chats the owner watches, your workspace, my recent messages to you (kept a few days so your other devices can ask for them again) and the link I keep between your phone number and your WhatsApp id. It cannot be undone.\nSend ${prefix}mydata delete confirm within 5 minutes to go ahead.`,
      );
      return;
    }
    if (args === 'delete confirm') {
      const until = pending.get(ctx.senderId);
      pending.delete(ctx.senderId);
      if (!until || until < Date.now()) {
        await ctx.reply(`There is no delete waiting for confirmation (it expires after 5 minutes). Send ${prefix}mydata delete first.`);
        return;
      }
      try {
        const counts = await ctx.host.personalData.deleteFor(person);
        ctx.log.info({ counts }, 'privacy delete done on the user\'s request');
        const summary = Object.entries(counts).map(([what, n]) => `${what}: ${n}`).join(', ');
        await ctx.reply(`Done: I deleted everything I kept about you (${summary}).`);
      } catch (err) {
        ctx.log.error({ err }, 'privacy delete failed');
        await ctx.reply(`I could not delete everything: ${(err as Error).message}. The owner has the details; please try again later.`);
      }
      return;
    }
    if (args) {
      await ctx.reply(`Usage: ${prefix}mydata (a file with everything I keep about you) or ${prefix}mydata delete.`);
      return;
    }
    const data = await ctx.host.personalData.exportFor(person);
    const folder = ctx.host.files.folder('generated');
    await mkdir(folder, { recursive: true });
    const file = path.join(folder, `mydata-${randomBytes(6).toString('hex')}.json`);
    try {
      await writeFile(file, JSON.stringify(data, null, 2), { mode: 0o600 });
      await ctx.sendMedia({ kind: 'document', path: file, fileName: 'my-data.json', mimetype: 'application/json', caption: 'Everything I keep about you.' });
    } finally {
      await rm(file, { force: true });
    }
  }
}
