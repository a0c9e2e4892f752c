import { definePlugin, defineTool, isSelfChat, Type, type IncomingMessage, type MessageContext, type PluginHost, type WatchedMedia } from '../../core/index.js';
import { atFirstUse } from '../../core/builtin.js';
import { WATCHED_CHATS, WATCHED_MESSAGES } from './store.js';
import type { CatchUpQuery } from './catch-up.js';

/** Reading the watched chats' logs for an answer (catch-up.ts) loads with the first catch_up call, not at start. */
const loadCatchUp = atFirstUse(() => import('./catch-up.js'));

const options = Type.Object({
  retentionDays: Type.Integer({ title: 'Days kept', minimum: 1, maximum: 3650, default: 30, description: "days a watched chat's messages are kept (older ones are dropped at start and daily)" }),
  maxResults: Type.Integer({ title: 'Most messages per answer', minimum: 5, maximum: 500, default: 80, description: 'messages of the watched chats one catch-up hands the model at most (the newest)' }),
  voiceNotes: Type.Union([Type.Literal('length'), Type.Literal('transcript')], { title: 'Voice notes', default: 'length', description: 'how a watched chat\'s voice notes are kept: "length" ([voice note, 12 s], no download) or "transcript" (their words too: each note is downloaded and sent to the audio provider, at your cost)' }),
  maxWatched: Type.Integer({ title: 'Most watched chats', minimum: 1, maximum: 200, default: 30, description: 'chats that may be watched at once' }),
});

type Host = PluginHost<typeof options.static>;

/**
 * What a media message was, in words. Its bytes are never fetched (a watched chat costs no download), except a voice
 * note's or audio file's when the owner chose transcripts (`voiceNotes: "transcript"`): then its words follow.
 */
async function mediaWords(message: IncomingMessage, media: WatchedMedia, voiceNotes: 'length' | 'transcript'): Promise<string> {
  const kind = message.media?.kind;
  if (!kind) return '';
  if (kind === 'document') return `[document: ${message.media!.fileName ?? 'unnamed'}]`;
  if (kind !== 'voice' && kind !== 'audio') return `[${kind === 'image' ? 'photo' : kind}]`;
  const what = kind === 'voice' ? 'voice note' : 'audio file';
  const length = message.media!.seconds ? `, ${message.media!.seconds} s` : '';
  if (voiceNotes !== 'transcript') return `[${what}${length}]`;
  const words = await media.words();
  return words ? `[${what}${length}, transcript:] ${words}` : `[${what}${length}, not transcribed]`;
}

/** The chat an owner names: a phone number (`+49…`), an id (`…@g.us`), or a name the transport knows (a group's subject). */
async function resolveChats(host: Host, name: string): Promise<Array<{ id: string; name: string }>> {
  const phone = /^\+?\d[\d\s-]{4,}$/.test(name) ? name.replace(/\D/g, '') : '';
  if (phone) return [{ id: `${phone}@s.whatsapp.net`, name: `+${phone}` }];
  if (/^[^\s@]+@(g\.us|s\.whatsapp\.net|lid)$/.test(name)) return [{ id: name, name }];
  return host.findChats(name);
}

/** True for an owner writing in the account's own "Message yourself" chat: the only place watched chats are spoken of. */
function inSelfChat(ctx: MessageContext, host: Host): boolean {
  return ctx.isOwner && isSelfChat(ctx.message, host.ownIds());
}

/**
 * Watched chats, read-only, and catch-me-up: the owner chooses chats the bot may read (`.watch <chat name>`); their
 * messages are kept as a searchable log (never answered, never downloaded); in "Message yourself" the owner asks what
 * they missed and the model answers from that log with its sources, through a tool offered there only.
 */
export default definePlugin({
  name: 'catchup',
  description: 'Watched chats (read-only) and "what did I miss?" in your Message yourself chat (.watch <chat>)',
  options,
  stores: [WATCHED_CHATS, WATCHED_MESSAGES],
  setup: async (host) => {
    await host.store.tune(WATCHED_MESSAGES, { keepDays: () => host.options().retentionDays });
    const watched = host.store.doc(WATCHED_CHATS);
    // The list is read for every message of every chat: kept in memory, saved through the store.
    let chats: Record<string, { name: string; by: string; at: number }> = (await watched.get()).chats;
    const stopFollowing = host.store.onChange(WATCHED_CHATS, () => {
      void watched.get().then((doc) => (chats = doc.chats));
    });
    const logOf = (chatId: string) => host.store.chat(chatId).searchLog(WATCHED_MESSAGES);

    const keep = async (message: IncomingMessage, media: WatchedMedia) => {
      const words = [await mediaWords(message, media, host.options().voiceNotes), message.text.trim()].filter(Boolean).join(' ');
      if (!words) return;
      await logOf(message.chatId).add({
        ...(message.id ? { id: message.id } : {}),
        senderId: message.senderId,
        ...(message.senderName ? { senderName: message.senderName.slice(0, 80) } : {}),
        text: words,
        at: message.timestamp || Date.now(),
        ...(message.media ? { media: message.media.kind } : {}),
        ...(message.fromMe ? { own: true } : {}),
      });
    };

    /** Watches the chat `name` names, for `by` (an owner's id, or `dashboard`): the sentence to answer. */
    const watchChat = async (name: string, by: string): Promise<string> => {
      if (!name) return list();
      const found = (await resolveChats(host, name)).filter((c) => !isSelfChat({ chatId: c.id, senderId: c.id, isGroup: c.id.endsWith('@g.us') }, host.ownIds()));
      if (!found.length) return `I know no chat named "${name}". Give a group's name as WhatsApp shows it, or a phone number (+49…).`;
      if (found.length > 1) return `Several chats are named "${name}":\n${found.map((c) => `• ${c.name} (${c.id})`).join('\n')}\nName one by its id: ${host.config().prefix}watch <id>.`;
      const chat = found[0];
      if (Object.hasOwn(chats, chat.id)) return `I am watching ${chats[chat.id].name} already.`;
      if (Object.keys(chats).length >= host.options().maxWatched) return `${host.options().maxWatched} chats are watched already, the most allowed. ${host.config().prefix}unwatch one first.`;
      const doc = await watched.save((d) => void (d.chats[chat.id] = { name: chat.name, by, at: Date.now() }));
      chats = doc.chats;
      return `👀 Watching ${chat.name} from now on: I keep its messages for ${host.options().retentionDays} days to catch you up, and never write there. ${host.config().prefix}unwatch ${chat.name} stops it.`;
    };

    /** Stops watching the chat `name` names and drops what was kept of it: the sentence to answer. */
    const unwatchChat = async (given: string): Promise<string> => {
      const name = given.trim().toLowerCase();
      const entry = Object.entries(chats).find(([id, c]) => c.name.toLowerCase() === name || id.toLowerCase() === name);
      if (!entry) return `No watched chat is named "${given.trim()}". ${list()}`;
      const [id, chat] = entry;
      const doc = await watched.save((d) => void delete d.chats[id]);
      chats = doc.chats;
      const dropped = await logOf(id).removeWhere(() => true);
      return `Stopped watching ${chat.name}; the ${dropped} message(s) I kept of it are deleted.`;
    };

    const refuseOutside = 'Watched chats are yours alone: use this in your "Message yourself" chat.';
    const list = () => {
      const entries = Object.entries(chats);
      if (!entries.length) return `No chat is watched. ${host.config().prefix}watch <chat name> lets me read one (I never write there).`;
      return `Watched chats (read-only; I never write there):\n${entries.map(([, c]) => `• ${c.name}`).join('\n')}`;
    };

    return {
      watch: {
        isWatched: (chatId) => Object.hasOwn(chats, chatId),
        keep,
      },
      commands: [
        {
          command: 'watch',
          usage: '.watch <chat name>',
          help: 'let me read a chat (read-only, for catching you up); .watch alone lists them',
          run: async (ctx) => (inSelfChat(ctx, host) ? ctx.reply(await watchChat(ctx.args.trim(), ctx.senderId)) : ctx.reply(refuseOutside)),
        },
        {
          command: 'unwatch',
          usage: '.unwatch <chat name>',
          help: 'stop reading a watched chat and drop what I kept of it',
          run: async (ctx) => (inSelfChat(ctx, host) ? ctx.reply(await unwatchChat(ctx.args)) : ctx.reply(refuseOutside)),
        },
      ],
      // The dashboard (owners only, behind its login): the watched chats, and watching or unwatching one.
      panel: {
        read: () => [
          {
            caption: 'Watched chats (read-only)',
            columns: ['Chat', 'Id', 'Watched since (UTC)'],
            rows: Object.entries(chats).map(([id, c]) => [c.name, id, new Date(c.at).toISOString().slice(0, 16).replace('T', ' ')]),
            empty: 'no chat is watched',
          },
        ],
        actions: [
          { name: 'watch', label: 'Watch', field: "a group's name, a phone number or a chat id", run: (name) => watchChat(name, 'dashboard') },
          { name: 'unwatch', label: 'Stop watching', field: 'a watched chat (its name or id); what was kept of it is deleted', run: (name) => unwatchChat(name) },
        ],
      },
      // Offered to an owner in "Message yourself" only: what the watched chats said never reaches another chat.
      tools: (ctx) =>
        inSelfChat(ctx, host)
          ? [
              defineTool({
                name: 'catch_up',
                progress: 'reading your watched chats…',
                // Other people's words from other chats: content, never instructions.
                effects: { outsideText: true, acts: 'nothing' },
                description:
                  "Read the owner's watched chats (read-only logs of chats the owner chose) to catch them up: \"what did I miss in Family since yesterday?\", \"anything about the invoice this week?\", \"who asked me something I did not answer?\". Returns the matching messages with chat, sender and time (UTC); quote those as your sources. Only the watched chats are read.",
                parameters: Type.Object(
                  {
                    chat: Type.Optional(Type.String({ description: 'one watched chat by its name; leave out for all of them' })),
                    sinceHours: Type.Optional(Type.Number({ minimum: 0.1, maximum: 24 * 3650, description: 'how far back, in hours (default 24; "since yesterday" ≈ 36, "this week" = 168)' })),
                    query: Type.Optional(Type.String({ maxLength: 200, description: 'words to look for ("invoice"); leave out for everything in that time' })),
                    unanswered: Type.Optional(Type.Boolean({ description: 'only questions others asked the owner that the owner has not answered since' })),
                  },
                  { additionalProperties: false },
                ),
                run: async (args, call) => {
                  const query: CatchUpQuery = { ...args, now: Date.now(), maxResults: host.options().maxResults };
                  const answer = await (await loadCatchUp()).catchUp(chats, logOf, query, host.ownIds());
                  if ('error' in answer) return answer;
                  call.cite(answer.sources);
                  return answer.text;
                },
              }),
            ]
          : [],
      stop() {
        stopFollowing();
      },
    };
  },
});

