import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { definePlugin, defineTool, Type, type HistoryEntry, type IncomingMessage, type StoredSearchLog } from '../../core/index.js';
import { atFirstUse, queryTerms, writeFileAtomic } from '../../core/builtin.js';
import { RECALL_LOG, type LoggedMessage } from './entry.js';

/** Putting search results into words (format.ts) loads with the first `.recall` or recall tool call, not at start. */
const loadFormat = atFirstUse(() => import('./format.js'));

const DAY_MS = 24 * 60 * 60 * 1000;
/**
 * Per chat, how many recent message ids are remembered to log a message once when both the observer and history see
 * it (they see it while it is handled, one right after the other), and for how many chats.
 */
const SEEN_IDS_PER_CHAT = 64;
const SEEN_CHATS = 5000;
/** In `data/recall/` while the plugin runs: found at start, the last run did not stop cleanly. */
const RUNNING_MARKER = '.running';

const options = Type.Object({
  retentionDays: Type.Integer({ title: 'Days kept', minimum: 1, maximum: 36500, default: 365, description: 'days a message is kept in the recall log (older ones are dropped at start and daily)' }),
  maxResults: Type.Integer({ title: 'Most results', minimum: 1, maximum: 10, default: 5, description: 'matches shown by .recall and given to the model' }),
  maxQueryChars: Type.Integer({ title: 'Longest query (characters)', minimum: 10, maximum: 1000, default: 200, description: 'longest search accepted' }),
  maxLoadedMessages: Type.Integer({ title: 'Messages kept in memory', minimum: 1000, maximum: 10_000_000, default: 200_000, description: 'no longer used: the recall log is searched in the store database, nothing of it is kept in memory (accepted so existing settings still load)' }),
});

/** The log entry of a message as it came in, with `text` as the bot read it (mentions of the bot taken out). */
function loggedFrom(m: IncomingMessage, text: string): LoggedMessage {
  return { id: m.id, role: 'user', senderId: m.senderId, ...(m.senderName ? { senderName: m.senderName } : {}), text, at: m.timestamp || Date.now(), ...(m.media ? { media: m.media.kind } : {}) };
}

/**
 * Search of past conversations: every chat keeps a log of its messages beyond the prompt history — what people said
 * (also in groups when the bot was not addressed) and what the bot answered — searchable per chat with `.recall` and
 * by the model with the `recall` tool. `.reset` clears the prompt history only; the log has its own retention.
 */
export default definePlugin({
  name: 'recall',
  description: "Searches this chat's past messages (.recall <words>)",
  options,
  stores: [RECALL_LOG],
  setup: async (host) => {
    const root = host.files.folder('recall');
    // Lines are written once per data.flushIntervalMs (not per message); a crash can catch the last ones unwritten.
    // The marker says a run is under way: found at start, the last run crashed, and each chat's log catches up on
    // what its history holds after the log's last line the first time this run uses it.
    const marker = path.join(root, RUNNING_MARKER);
    const crashedRun = await readFile(marker, 'utf8').then((text) => (JSON.parse(text) as { startedAt?: number }).startedAt ?? 0, () => undefined);
    await mkdir(root, { recursive: true });
    await writeFileAtomic(marker, `${JSON.stringify({ pid: process.pid, startedAt: Date.now() })}\n`);
    const commandLike = (text: string) => text.startsWith(host.config().prefix) || /^\/\w/.test(text);
    const catchUp = (log: StoredSearchLog<LoggedMessage>) => {
      if (crashedRun === undefined) return;
      log
        .catchUp(async () => {
          // A chat the crashed run never wrote to has nothing to catch up on: its history is not even loaded.
          if (!(await host.histories.changedSince(log.chatId, crashedRun))) return [];
          return (await host.histories.recent(log.chatId)).filter((e) => !(e.role === 'user' && commandLike(e.text)));
        }, crashedRun)
        .then((added) => added && host.log.info({ chat: log.chatId, added }, `recall log: ${added} message(s) the last run stopped before writing were added from the chat's history`))
        .catch((err) => host.log.error({ err, chat: log.chatId }, 'recall log: could not catch up after the last run stopped unexpectedly'));
    };
    // The core's search log does the rest: files, index snapshots, data health, backups, `.mydata`, deletes for
    // everyone, edits, chat moves and retention (from RECALL_LOG and these run-time settings).
    const logOf = (chatId: string) => host.store.chat(chatId).searchLog(RECALL_LOG);
    const cutoff = () => Date.now() - host.options().retentionDays * DAY_MS;
    const enabled = () => host.config().plugins?.recall?.enabled ?? true;

    // Commands (".recall address" itself) are not conversation: logging them would make every search find itself
    // (commandLike, above).

    // A message is logged once even though both the observer and the history hook may see it.
    // A small set per chat: no key string built per message, and a lookup touches one hash bucket, not every id kept.
    const seen = new Map<string, Set<string>>();
    const firstTime = (chatId: string, id: string | undefined) => {
      if (!id) return true;
      let ids = seen.get(chatId);
      if (!ids) {
        seen.set(chatId, (ids = new Set()));
        if (seen.size > SEEN_CHATS) seen.delete(seen.keys().next().value as string);
      }
      if (ids.has(id)) return false;
      ids.add(id);
      if (ids.size > SEEN_IDS_PER_CHAT) ids.delete(ids.values().next().value as string);
      return true;
    };
    const record = (chatId: string, entry: LoggedMessage) => {
      if (!firstTime(chatId, entry.id)) return;
      // Failures to write are the store's to report (data health) and retry; nothing here waits for the disk.
      logOf(chatId).addSoon(entry, host.config().data.flushIntervalMs);
    };
    // The observer and the history hook only note a message; it is logged once the I/O this turn started is out
    // (a message's upstream request goes first, logging runs while it is answered). Whatever reads or changes the log
    // — a search, the privacy controls, a flush, the stop — takes the noted messages in first.
    let noted: Array<{ chatId: string; entry: LoggedMessage | IncomingMessage; text?: string }> = [];
    const takeNoted = () => {
      if (!noted.length) return;
      const batch = noted;
      noted = [];
      for (const { chatId, entry, text } of batch) record(chatId, 'role' in entry ? entry : loggedFrom(entry, text ?? entry.text));
    };
    const note = (chatId: string, entry: LoggedMessage | IncomingMessage, text?: string) => {
      if (!noted.length) setImmediate(takeNoted);
      noted.push({ chatId, entry, text });
    };

    // The bot's own answers (and transcripts, captions) reach the chat's history, not the observers: the log follows
    // history appends too, so "what did you tell me about X" finds what the bot said. `.reset` clears the history
    // file, which is no append, so it never touches the log.
    // A group's messages for others join the history as context, commands among them: those stay out here too.
    const stopFollowing = host.histories.onAppend((chatId, entry: HistoryEntry) => {
      if (enabled() && !(entry.role === 'user' && commandLike(entry.text))) note(chatId, entry);
    });

    // Retention (now and daily), the memory bound and the crash catch-up; before the core reads or changes the log
    // (privacy, a flush, a backup), the noted messages go in.
    await host.store.tune(RECALL_LOG, {
      keepDays: () => host.options().retentionDays,
      onFirstUse: catchUp,
      settle: () => takeNoted(),
    });

    return {
      observers: [
        (ctx) => {
          const text = ctx.text;
          if (!text || commandLike(text)) return;
          note(ctx.chatId, ctx.message, text);
        },
      ],
      commands: [
        {
          command: 'recall',
          usage: '.recall <words>',
          help: "search this chat's past messages, e.g. .recall address",
          run: async (ctx) => {
            const prefix = ctx.host.config().prefix;
            const query = ctx.args;
            const usage = `Usage: ${prefix}recall <words> — searches what was said in this chat (the last ${host.options().retentionDays} days), e.g. ${prefix}recall address`;
            if (!query) return ctx.reply(usage);
            const { maxQueryChars, maxResults } = host.options();
            if (query.length > maxQueryChars) return ctx.reply(`That search is too long (${query.length} characters; at most ${maxQueryChars}). Use a few words.`);
            const terms = queryTerms(query);
            if (!terms.length) return ctx.reply(`Search with words or numbers. ${usage}`);
            takeNoted();
            const hits = await logOf(ctx.chatId).search(query, { limit: maxResults, notBefore: cutoff() });
            return ctx.reply((await loadFormat()).formatForChat(hits, query, terms));
          },
        },
      ],
      tools: [
        defineTool({
          name: 'recall',
          progress: 'looking through this chat…',
          // Past messages of the chat, other members' included: outside text.
          effects: { outsideText: true, acts: 'nothing' },
          description:
            "Search this chat's past messages (beyond the recent conversation), including what you answered before, e.g. when the user asks \"what was the address we talked about last month?\". Only this chat is searched. Returns the best matches with time, sender and the message before and after.",
          parameters: Type.Object({ query: Type.String({ description: 'a few words to look for' }) }, { additionalProperties: false }),
          // The chat is the core's binding (call.chatId), never an argument: a "chatId" the model adds is ignored.
          run: async (args, call) => {
            const { maxQueryChars, maxResults } = host.options();
            const query = args.query.trim();
            if (!query) return { error: 'give the words to search for in "query"' };
            if (query.length > maxQueryChars) return { error: `the query is too long (${query.length} characters; at most ${maxQueryChars}): use a few words` };
            takeNoted();
            const hits = await logOf(call.chatId).search(query, { limit: maxResults, excludeId: call.ctx.message.id, notBefore: cutoff() });
            return (await loadFormat()).formatForModel(hits);
          },
        }),
      ],
      async stop() {
        stopFollowing();
        takeNoted();
        try {
          await host.store.flush();
          // Everything is on disk: the next start has nothing to catch up on (with lines unsaved, the marker stays).
          await rm(marker, { force: true });
        } catch (err) {
          host.log.error({ err }, `recall log: ${(err as Error).message} before the stop`);
        }
      },
    };
  },
});
