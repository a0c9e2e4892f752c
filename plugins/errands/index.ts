import { definePlugin, defineTool, quotedContent, Store, Type, type MessageContext, type PluginHost } from '../../core/index.js';

/*
 * Errands: the owner asks, in their own chat with the bot, to message someone the bot knows ("tell Mum I'll be
 * late", or `.send Mum I'll be late`); the bot drafts it and the effect guard holds it for the owner's 👍; once sent,
 * that person's answers within the window are relayed back ("Mum answered: …") and the thread can go on.
 */

const OPTIONS = Type.Object({
  replyWindowMinutes: Type.Integer({ title: 'Relay answers for (minutes)', minimum: 1, maximum: 7 * 24 * 60, default: 240, description: 'how long after an errand the answers of its recipient are relayed to the owner' }),
});

/** People who wrote to the bot in a private chat, by chat id, with the name they go by (WhatsApp's push name). */
const CONTACTS = Store.doc('contacts', Type.Object({ byId: Type.Record(Type.String(), Type.Object({ name: Type.String(), at: Type.Number() })) }), () => ({ byId: {} }), {
  title: 'errand contacts',
  people: { byId: (doc) => doc.byId },
});

/** Open errand threads, by the recipient's chat id: whose answers go back to which owner chat, until when. */
const THREADS = Store.doc('threads', Type.Object({ byChat: Type.Record(Type.String(), Type.Object({ ownerChat: Type.String(), name: Type.String(), until: Type.Number() })) }), () => ({ byChat: {} }), {
  title: 'errand threads',
  people: { byId: (doc) => doc.byChat },
});

type Host = PluginHost<{ replyWindowMinutes: number }>;
interface Errand {
  to: string;
  name: string;
  text: string;
  ownerChat: string;
}

/** The chat `who` names: a number, a contact's name (exact, then the start of one), or a group's name. */
async function recipientOf(host: Host, who: string, groups = true): Promise<{ id: string; name: string } | undefined> {
  const digits = who.replace(/[\s+()-]/g, '');
  if (/^\d{6,15}$/.test(digits)) return { id: `${digits}@s.whatsapp.net`, name: `+${digits}` };
  const wanted = who.trim().toLowerCase();
  const { byId } = await host.store.doc(CONTACTS).get();
  const people = Object.entries(byId);
  const hit = people.find(([, c]) => c.name.toLowerCase() === wanted) ?? people.find(([, c]) => c.name.toLowerCase().startsWith(wanted));
  if (hit || !groups) return hit ? { id: hit[0], name: hit[1].name } : undefined;
  const found = await host.findChats(who);
  return found[0] ? { id: found[0].id, name: found[0].name } : undefined;
}

/** `.send Mum I'll be late`: the recipient is the longest leading words that name one. */
async function splitRecipient(host: Host, args: string): Promise<{ to: { id: string; name: string }; text: string } | undefined> {
  const words = args.trim().split(/\s+/);
  // People and numbers first, then groups (a group's name may be any words).
  for (const groups of [false, true]) {
    for (let n = Math.min(3, words.length - 1); n >= 1; n--) {
      const to = await recipientOf(host, words.slice(0, n).join(' '), groups);
      if (to) return { to, text: words.slice(n).join(' ') };
    }
  }
  return undefined;
}

/** Drafts the errand and asks the guard: held for the owner's 👍 (by default), sent at once where the policy allows. */
async function runErrand(ctx: MessageContext, host: Host, to: { id: string; name: string }, text: string): Promise<string> {
  const errand: Errand = { to: to.id, name: to.name, text, ownerChat: ctx.chatId };
  const outcome = await host.effects.act({ effect: 'errand', to: to.id, summary: `send to ${to.name} (${to.id.split('@')[0]}): “${text}”`, data: errand }, ctx);
  if (outcome.status === 'held') return `Drafted for ${to.name}: “${text}”. It waits for your 👍 (${outcome.id}).`;
  if (outcome.status === 'denied') return `Not sent: ${outcome.reason}.`;
  return outcome.result ?? `Sent to ${to.name}.`;
}

const ownerOnly = (ctx: MessageContext) => ctx.isOwner && !ctx.message.isGroup;

export default definePlugin({
  name: 'errands',
  description: 'Owners: message someone the bot knows, after your 👍 (.send <contact or group> <text>, or ask in words); their answers come back to you',
  options: OPTIONS,
  stores: [CONTACTS, THREADS],
  order: 30,
  async setup(host) {
    // Chats with an errand thread open, kept in memory too: `when` is asked at every message and must not read a file.
    const openThreads = new Set(Object.keys((await host.store.doc(THREADS).get()).byChat));
    const sendMessage = defineTool({
      name: 'send_message',
      description: `Send a message as the owner to someone the bot knows (a person by name or number, or a group by name), when the owner asks you to tell or ask someone something. Write the message itself in \`text\`. The owner confirms before it goes.`,
      parameters: Type.Object({ to: Type.String({ description: 'the person or group: a name, or a phone number' }), text: Type.String({ description: 'the message to send, as it should read' }) }),
      effects: { outsideText: false, acts: 'chats' },
      progress: 'drafting the message…',
      run: async ({ to, text }, call) => {
        const found = await recipientOf(host, to);
        if (!found) return `There is nobody called ${to} among the people who wrote to me. Ask the owner for their number.`;
        return runErrand(call.ctx, host, found, text);
      },
    });
    host.effects.declare('errand', 'message', async (errand: Errand) => {
      await host.send(errand.to, errand.text);
      openThreads.add(errand.to);
      const until = Date.now() + host.options().replyWindowMinutes * 60_000;
      await host.store.doc(THREADS).save((d) => void (d.byChat[errand.to] = { ownerChat: errand.ownerChat, name: errand.name, until }));
      const told = `✅ Sent to ${errand.name}: “${errand.text}”. I will pass their answer on to you.`;
      // In the owner's history, so the thread can go on in words ("tell her yes"): the model knows who "her" is.
      await host.histories.append(errand.ownerChat, { role: 'assistant', text: `${told} (${errand.name}'s chat: ${errand.to.split('@')[0]})`, at: Date.now() });
      return told;
    });
    return {
      commands: [
        {
          command: 'send',
          usage: '.send <contact or group> <text>',
          help: 'owners: message someone the bot knows (after your 👍); their answer comes back to you',
          run: async (ctx) => {
            if (!ownerOnly(ctx)) return ctx.reply(ctx.isOwner ? 'Errands are run from your own chat with me.' : 'Sorry, only the owner can send messages through me.');
            const found = await splitRecipient(host, ctx.args);
            if (!found || !found.text) return ctx.reply(`Whom to? ${host.config().prefix}send <name, number or group> <text> — I know people who wrote to me, by their name.`);
            const told = await runErrand(ctx, host, found.to, found.text);
            // Held: the guard's message just asked the owner here, and a 👍 on it (the chat's last) sends it.
            return told.startsWith('Drafted for ') ? undefined : ctx.reply(told);
          },
        },
      ],
      predicates: [
        {
          // An answer from someone an errand went to, within the window: relayed to the owner, not answered here.
          when: (ctx) => !ctx.isOwner && openThreads.has(ctx.chatId),
          run: async (ctx) => {
            const doc = host.store.doc(THREADS);
            const thread = (await doc.get()).byChat[ctx.chatId];
            if (!thread || thread.until <= Date.now()) {
              // The window closed: the chat is answered as any other from now on.
              openThreads.delete(ctx.chatId);
              return ctx.ai.respond(ctx).then((answer) => ctx.reply(answer));
            }
            const words = ctx.text || `(${ctx.message.media?.kind ?? 'a message'})`;
            await host.send(thread.ownerChat, `${thread.name} answered: ${words}`);
            // In the owner's history as what the bot told them, so the thread can go on in words ("tell her yes"). The
            // words are the other person's: framed as content (never instructions), and the entry is marked as carrying
            // others' words, so a later tool call that repeats them does not act (the core's rule for such answers).
            const framed = quotedContent({ source: 'an answer to the owner\'s errand, relayed to them', author: `${thread.name} (${ctx.chatId.split('@')[0]})`, text: words });
            await host.histories.append(thread.ownerChat, { role: 'assistant', text: `${thread.name} answered:\n${framed}`, at: ctx.message.timestamp, carried: true });
            return undefined;
          },
        },
      ],
      observers: [
        (ctx) => {
          if (ctx.message.isGroup || ctx.isOwner || !ctx.message.senderName) return undefined;
          const name = ctx.message.senderName;
          return host.store.doc(CONTACTS).update((d) => void (d.byId[ctx.chatId] = { name, at: Date.now() }));
        },
      ],
      // One tool object for every message (the prompt makes its JSON once), offered to owners only.
      tools: (ctx) => (ownerOnly(ctx) ? [sendMessage] : []),
    };
  },
});
