import { randomUUID } from 'node:crypto';
import { AllProvidersFailedError, definePlugin, defineTool, PromptRefused, Type, type CommandContext } from '../../core/index.js';
import { REMINDERS, ReminderStore, SaveError, TIME_ZONES, type Reminder } from './store.js';
import { atFirstUse } from '../../core/builtin.js';
import { canonicalZone, formatDuration, formatLocal, machineZone } from './zone.js';

const options = Type.Object({
  timeZone: Type.String({ title: 'Time zone', default: '', description: "time zone reminders are read and shown in (an IANA name such as Asia/Jakarta); empty: config.json's top-level timeZone, else the machine's TZ. Users may pick their own with .timezone" }),
  maxPerUser: Type.Integer({ title: 'Reminders per person', minimum: 1, maximum: 10_000, default: 25, description: 'most pending reminders one user may have (over all chats)' }),
  minRepeatSeconds: Type.Integer({ title: 'Shortest repeat (seconds)', minimum: 1, default: 3600, description: 'shortest time between two runs of a repeating reminder, in seconds' }),
  lateWithinHours: Type.Number({ title: 'Send late within (hours)', minimum: 0, default: 24, description: 'after a restart, reminders missed by at most this many hours are still sent (marked late); older ones are listed once' }),
  maxTextLength: Type.Integer({ title: 'Longest reminder text', minimum: 1, maximum: 4000, default: 1000, description: 'longest reminder text (and scheduled prompt)' }),
  maxTasksPerUser: Type.Integer({ title: 'Scheduled tasks per person', minimum: 0, maximum: 1000, default: 10, description: 'most pending scheduled tasks (.schedule: prompts the model runs at their time) one user may have over all chats; 0 turns .schedule off' }),
  minTaskRepeatSeconds: Type.Integer({ title: 'Shortest task repeat (seconds)', minimum: 1, default: 3600, description: 'shortest time between two runs of a repeating scheduled task, in seconds (each run is a model call on the user\'s budget)' }),
});
type Options = typeof options.static;

/**
 * Reading times and stepping repeats (when.ts, with croner, and chrono-node behind it) loads with the first reminder
 * set or repeat stepped, not at start.
 */
const loadWhen = atFirstUse(() => import('./when.js'));

/** setTimeout's longest delay (about 24.8 days); a later reminder re-arms when it ends. */
const MAX_DELAY_MS = 2 ** 31 - 1;
/** A send that failed while the bot is running is tried again this often, then given up with a log line. */
const RETRY_MS = 60_000;
const MAX_ATTEMPTS = 3;

/** The line a user gets when their change is not on disk: "⚠️ I could not save that: the server's disk is full. …" */
const unsaved = (reason: string, consequence: string) => `⚠️ I could not save that: ${reason}. ${consequence}`;
const ZONE_KEPT = 'It holds while the bot runs and I keep trying to save it; if the bot stops before that is fixed, it is lost.';

/** Why a reminder goes out late: the bot was not running, or the owner had switched reminders off. */
type LateBecause = 'offline' | 'switched off';
const lateWhy = (because: LateBecause) => (because === 'offline' ? 'I was offline' : 'reminders were switched off');

const TASK_PARAMETERS = Type.Object(
  {
    when: Type.String({ description: "when, in the user's time: '10m', '18:30', 'tomorrow 9am', 'next monday 09:00'; repeating: 'every day 07:00', 'every monday 09:00', 'every weekday 08:30'" }),
    prompt: Type.String({ description: 'what to do then, written as the user would ask it, e.g. "give me the weather in Jakarta today"' }),
  },
  // Not `additionalProperties: false`: the core would drop a "chatId" silently and the model would tell the user it
  // scheduled into that chat; the tool sees it and refuses in words instead.
);

/** A tool's `when` and text as one `.remind` line: quoted unless it repeats, so the time ends where it should. */
/**
 * Scheduled prompts by name: `.schedule <when> <name>` schedules the template's prompt. `digest`: the owner's
 * catch-up over their watched chats (the catchup plugin's `catch_up` tool, offered in "Message yourself" only).
 */
export const TASK_TEMPLATES: Readonly<Record<string, string>> = {
  digest:
    'Digest: catch me up on my watched chats over the last 24 hours. Group it by chat, say who said what and when, and list the questions someone asked me that I have not answered. If nothing happened, say so in one line.',
};

const toolLine = (when: string, text: string) => (/^every\s/i.test(when) ? `${when} ${text}` : `"${when.replace(/["'“”‘’]/g, '')}" ${text}`);

/** A task's prompt, shortened for a one-line mention. */
/** The guard's name for creating a scheduled task (`.schedule`; the schedule_task tool passes it as a tool of kind `schedule`). */
const TASK_EFFECT = 'task';
/** A task asked for by `.schedule`, kept as it was asked while it waits for the owner's 👍 (plain JSON). */
interface HeldTask {
  chatId: string;
  senderId: string;
  messageId: string;
  args: string;
}

const short = (text: string) => (text.length > 80 ? `${text.slice(0, 79)}…` : text);

export default definePlugin({
  name: 'remind',
  description: 'Reminders, scheduled messages and scheduled tasks: .remind, .schedule, .reminders, .cancel, .timezone and the schedule_message and schedule_task tools',
  options,
  // config.json → "timeZone" at the top, where owners look for it; plugins.remind.timeZone, when set, wins over it.
  configSection: {
    key: 'timeZone',
    schema: Type.String({ default: '', maxLength: 64, description: "The bot's time zone, an IANA name such as Asia/Jakarta (empty: the machine's TZ); reminders are read and shown in it." }),
    check: (zone) => (!zone.trim() || canonicalZone(zone) ? undefined : 'is not a time zone (use an IANA name such as Asia/Jakarta)'),
  },
  // Kept by the core: backups, .mydata, deletes, messages deleted for everyone and chat moves follow from these.
  stores: [REMINDERS, TIME_ZONES],
  async setup(host) {
    const store = new ReminderStore(host.store);
    await store.load();
    const startedAt = Date.now();
    const timers = new Map<string, NodeJS.Timeout>();
    const attempts = new Map<string, number>();
    /** Reminders being sent right now, with how many sends (a catch-up must not send them a second time). */
    const sending = new Map<string, number>();
    let stopping = false;
    let warnedZone = '';

    const key = (chatId: string, id: string) => `${chatId}\n${id}`;

    /**
     * The plugin's zone: its option when set and valid, else config.json's top-level timeZone, else the machine's (a
     * bad option is logged once, never a crash; a bad top-level value is refused at load and in the dashboard).
     */
    const defaultZone = (): string => {
      // The top-level value is checked by the core (an invalid one arrives as the default, '').
      const fallback = canonicalZone(host.section()) ?? machineZone();
      const wanted = host.options().timeZone.trim();
      if (!wanted) return fallback;
      const zone = canonicalZone(wanted);
      if (zone) return zone;
      if (warnedZone !== wanted) {
        warnedZone = wanted;
        host.log.error({ timeZone: wanted }, `remind: option timeZone "${wanted}" is not a time zone (use an IANA name such as Asia/Jakarta); using ${fallback}`);
      }
      return fallback;
    };
    const zoneOf = (userId: string) => store.zoneOf(userId) ?? defaultZone();

    const arm = (chatId: string, r: Reminder, delay = r.due - Date.now(), lateBecause?: LateBecause) => {
      clearTimeout(timers.get(key(chatId, r.id)));
      // Unref'd: a pending reminder never keeps the process alive (`npm run chat` ends at end of input; it fires at
      // the next start, late if need be).
      const timer = setTimeout(() => void fire(chatId, r.id, lateBecause).catch(fireFailed(chatId)), Math.min(Math.max(0, delay), MAX_DELAY_MS));
      timer.unref();
      timers.set(key(chatId, r.id), timer);
    };
    const disarm = (chatId: string, id: string) => {
      clearTimeout(timers.get(key(chatId, id)));
      timers.delete(key(chatId, id));
    };

    /**
     * Waits for a change to be on disk: undefined when it is, else why not, as a sentence for the user (the change
     * stays in memory and the store keeps retrying; the data health has logged it and names it at stop).
     */
    const save = async (work: Promise<unknown>): Promise<string | undefined> => {
      try {
        await work;
        return undefined;
      } catch (err) {
        if (err instanceof SaveError) return err.reason;
        host.log.error({ err }, 'remind: a change could not be saved');
        return 'the server could not write its data';
      }
    };

    /** What a reminder's timer says when firing it failed outright (its module could not load): logged, never thrown. */
    const fireFailed = (chatId: string) => (err: unknown) => host.log.error({ err, chat: chatId }, 'remind: a reminder that fell due could not be handled');

    /** Sends a reminder that is due (through host.send: the safe-sending limiter), then removes or advances it. */
    async function fire(chatId: string, id: string, lateBecause?: LateBecause): Promise<void> {
      timers.delete(key(chatId, id));
      const r = store.get(chatId, id);
      if (!r || stopping) return;
      const now = Date.now();
      if (r.due > now + 20) return arm(chatId, r); // a far reminder whose longest timer ran out
      // Switched off by the owner: a disabled plugin sends nothing. The reminder stays as it is and goes out, marked
      // late, when reminders are switched on again (see catchUp).
      if (!host.enabled()) return;
      const k = key(chatId, id);
      sending.set(k, (sending.get(k) ?? 0) + 1);
      try {
        await send(chatId, r, now, lateBecause);
      } finally {
        const left = (sending.get(k) ?? 1) - 1;
        if (left > 0) sending.set(k, left);
        else sending.delete(k);
      }
    }

    /** A repeating one's next run, saved and armed before this run goes out (none left: it is removed). */
    async function advance(chatId: string, r: Reminder, now: number): Promise<void> {
      // Before sending: a crash while sending never repeats it, and missed runs are not sent in a burst.
      const next = (await loadWhen()).nextRun(r.cron!, r.zone, Math.max(now, r.due));
      if (next === undefined) await save(store.remove(chatId, [r.id]));
      else {
        await save(store.update(chatId, r.id, (x) => (x.due = next)));
        arm(chatId, r);
      }
    }

    async function send(chatId: string, r: Reminder, now: number, lateBecause: LateBecause | undefined): Promise<void> {
      const id = r.id;
      const late = lateBecause ? `, ${formatDuration(now - r.due)} late (${lateWhy(lateBecause)} when it was due, ${formatLocal(r.due, r.zone)})` : '';
      if (r.task) return runTask(chatId, r, now, late);
      const text = `${r.cron ? '🔁' : '⏰'} Reminder${late}: ${r.text}`;
      if (r.cron) await advance(chatId, r, now);
      try {
        await host.send(chatId, text);
        attempts.delete(key(chatId, id));
        if (!r.cron) await save(store.remove(chatId, [id]));
      } catch (err) {
        if (stopping || r.cron) return; // kept on disk: sent (late) at the next start
        const tries = (attempts.get(key(chatId, id)) ?? 0) + 1;
        attempts.set(key(chatId, id), tries);
        if (tries < MAX_ATTEMPTS) {
          host.log.warn({ err, chat: chatId, tries }, 'remind: a reminder could not be sent; trying again in a minute');
          arm(chatId, r, RETRY_MS);
        } else {
          host.log.error({ err, chat: chatId }, `remind: a reminder could not be sent after ${tries} tries and was dropped: ${r.text.slice(0, 80)}`);
          attempts.delete(key(chatId, id));
          await save(store.remove(chatId, [id]));
        }
      }
    }

    /**
     * A scheduled task at its time: the prompt goes through the model as its creator (their access, tools and budget,
     * `host.promptAs`) and the answer is sent, marked as scheduled. A run that fails is told once: a repeating task
     * then stays quiet about later failures until a run works again (`failing`, kept across restarts).
     */
    async function runTask(chatId: string, r: Reminder, now: number, late: string): Promise<void> {
      if (r.cron) await advance(chatId, r, now);
      let answer: string;
      try {
        answer = await host.promptAs(chatId, r.creator, r.text);
      } catch (err) {
        if (stopping) return;
        // Not linked to WhatsApp for now: its answer could not be delivered, and nothing was spent. A one-time task stays
        // and runs (marked late) once the bot is linked again; a repeating one already has its next run.
        if (err instanceof PromptRefused && err.transient && !r.cron) {
          host.log.warn({ chat: chatId, reason: err.reason }, 'remind: a scheduled task waits until the bot is connected again');
          arm(chatId, r, RETRY_MS, 'offline');
          return;
        }
        const reason = err instanceof PromptRefused ? err.reason.replace(/\.$/, '') : err instanceof AllProvidersFailedError ? 'no AI provider answered' : 'something went wrong while it ran';
        host.log.warn({ err, chat: chatId, reason }, 'remind: a scheduled task could not run');
        const told = store.get(chatId, r.id)?.failing ?? r.failing;
        if (!r.cron) await save(store.remove(chatId, [r.id]));
        else if (!told) await save(store.update(chatId, r.id, (x) => (x.failing = true)));
        if (told) return;
        const after = r.cron ? `\nIt stays scheduled (${r.label}); I will not tell you again until a run works.` : '';
        await host.send(chatId, `⚠️ A scheduled task could not run: ${reason}. The task: ${short(r.text)}${after}`).catch((e: unknown) => host.log.warn({ err: e, chat: chatId }, 'remind: could not tell that a scheduled task failed'));
        return;
      }
      if (r.cron) {
        if (store.get(chatId, r.id)?.failing) await save(store.update(chatId, r.id, (x) => void delete x.failing));
      } else await save(store.remove(chatId, [r.id]));
      if (!answer.trim()) return; // the model chose to say nothing
      await host.send(chatId, `🗓️ Scheduled${late}: ${short(r.text)}\n\n${answer}`).catch((err: unknown) => host.log.warn({ err, chat: chatId }, 'remind: the answer of a scheduled task could not be sent'));
    }

    /**
     * Reminders that fell due while the bot was not running (at start) or while the owner had reminders switched off
     * (when switched on again): sent late within the window, older ones listed once.
     */
    const catchUp = async (occasion: LateBecause) => {
      if (stopping || !host.enabled()) return;
      const now = Date.now();
      const window = host.options().lateWithinHours * 3_600_000;
      for (const [chatId, list] of store.all()) {
        const missed: Reminder[] = [];
        for (const r of [...list].sort((a, b) => a.due - b.due)) {
          // Already on its way: armed for a retry, or being sent.
          if (r.due <= now && (timers.has(key(chatId, r.id)) || sending.has(key(chatId, r.id)))) continue;
          const because: LateBecause = r.due < startedAt ? 'offline' : occasion;
          if (r.due > now) arm(chatId, r);
          else if (now - r.due <= window) void fire(chatId, r.id, because).catch(fireFailed(chatId));
          else missed.push(r);
        }
        if (!missed.length) continue;
        const lines = missed.map((r, i) => `${i + 1}. ${formatLocal(r.due, r.zone)} (${r.zone}) — ${r.task ? "🗓️ task: " : ""}${r.text}${r.cron ? ` (repeats ${r.label}; it goes on)` : ''}`);
        const once = missed.filter((r) => !r.cron).map((r) => r.id);
        for (const r of missed.filter((x) => x.cron)) {
          const next = (await loadWhen()).nextRun(r.cron!, r.zone, now);
          if (next === undefined) once.push(r.id);
          else {
            await save(store.update(chatId, r.id, (x) => (x.due = next)));
            arm(chatId, r);
          }
        }
        // Removed first, so the list is said once even if the bot stops before it goes out.
        await save(store.remove(chatId, once));
        host
          .send(chatId, `⏰ While ${occasion === 'offline' ? 'I was offline' : 'reminders were switched off'}, ${missed.length === 1 ? 'this reminder' : 'these reminders'} fell due more than ${formatDuration(window)} ago and ${missed.length === 1 ? 'was' : 'were'} not sent:\n${lines.join('\n')}`)
          .catch((err: unknown) => host.log.warn({ err, chat: chatId }, 'remind: the list of missed reminders could not be sent'));
      }
    };
    /**
     * The core changed a chat's reminders itself (a `.mydata` delete, the message that set one deleted for everyone,
     * the chat moved to a new id): those gone never fire, those that arrived are armed.
     */
    const follow = async (chatId: string) => {
      await store.reload(chatId);
      const present = new Set(store.list(chatId).map((r) => r.id));
      for (const k of [...timers.keys()]) {
        const [chat, id] = k.split('\n');
        if (chat === chatId && !present.has(id)) disarm(chat, id);
      }
      if (stopping) return;
      for (const r of store.list(chatId)) if (!timers.has(key(chatId, r.id)) && !sending.has(key(chatId, r.id))) arm(chatId, r);
    };
    const stopFollowing = host.store.onChange(REMINDERS, (chatId) => {
      if (chatId) follow(chatId).catch((err: unknown) => host.log.error({ err, chat: chatId }, 'remind: could not follow a change of the reminders'));
    });

    if (host.enabled()) await catchUp('offline');
    else for (const [chatId, list] of store.all()) for (const r of list) if (r.due > Date.now()) arm(chatId, r);
    // Held while switched off (fire() sends nothing then): out, marked late, as soon as the owner switches them on.
    const stopListening = host.onEnabledChange((enabled) => (enabled ? catchUp('switched off') : undefined));

    /** Sets a reminder for `senderId` in `chatId` from `<when> <text>`: the sentence to answer with. */
    const schedule = async (chatId: string, senderId: string, messageId: string, args: string, opts: Options, task = false): Promise<string> => {
      const zone = zoneOf(senderId);
      const now = Date.now();
      const { parseReminder, shortestGap } = await loadWhen();
      const parsed = await parseReminder(args, now, zone);
      if (!parsed.ok) return task ? parsed.error.replaceAll('.remind ', '.schedule ').replace('What should I remind you of?', 'What should I do then?') : parsed.error;
      const what = task ? 'scheduled task' : 'reminder';
      if (parsed.text.length > opts.maxTextLength) return `That ${what} is too long (${parsed.text.length} characters; the most is ${opts.maxTextLength}).`;
      const count = store.countBy(senderId, task);
      const most = task ? opts.maxTasksPerUser : opts.maxPerUser;
      if (task && most === 0) return 'Scheduled tasks are switched off on this bot. .remind still sets reminders.';
      if (count >= most) return `You already have ${count} ${what}s, the most one person may have. Cancel one first: .reminders lists them, .cancel <n> removes one.`;
      const { schedule: when } = parsed;
      // A task's prompt may be a template's name (`.schedule every day 07:00 digest`): its prompt is scheduled.
      const text = task ? (TASK_TEMPLATES[parsed.text.trim().toLowerCase()] ?? parsed.text) : parsed.text;
      if (when.kind === 'repeat') {
        const gap = shortestGap(when.cron, zone, now);
        const least = (task ? opts.minTaskRepeatSeconds : opts.minRepeatSeconds) * 1000;
        if (gap < least) {
          return `That repeats every ${formatDuration(gap)}; the shortest allowed is every ${formatDuration(least)}. For example ${task ? '.schedule every day 07:00 the weather today' : '.remind every day 07:00 stretch'}.`;
        }
      }
      const reminder: Reminder = {
        id: randomUUID(),
        text,
        creator: senderId,
        zone,
        createdAt: now,
        due: when.kind === 'once' ? when.at : when.next,
        ...(when.kind === 'repeat' ? { cron: when.cron, label: when.label } : {}),
        messageId,
        ...(task ? { task: true } : {}),
      };
      const problem = await save(store.add(chatId, reminder));
      arm(chatId, reminder);
      const confirm = task
        ? when.kind === 'once'
          ? `🗓️ Task scheduled for ${formatLocal(reminder.due, zone)} (${zone}); then I will answer: ${text}`
          : `🗓️ Task scheduled ${when.label} (${zone}), first on ${formatLocal(reminder.due, zone)}; each time I will answer: ${text}`
        : when.kind === 'once'
          ? `⏰ Reminder set for ${formatLocal(reminder.due, zone)} (${zone}): ${text}`
          : `🔁 Reminder set ${when.label} (${zone}), first on ${formatLocal(reminder.due, zone)}: ${text}`;
      return problem ? `${confirm}\n${unsaved(problem, 'I keep it in memory and keep trying to save it; if the bot stops before that is fixed, this reminder is lost.')}` : confirm;
    };

    // A task runs tools as its creator later: creating one is an effect (kind `schedule`), asked of the guard.
    host.effects.declare(TASK_EFFECT, 'schedule', (task: HeldTask) => schedule(task.chatId, task.senderId, task.messageId, task.args, host.options(), true));

    /** `.schedule <when> <prompt>`: checked first (a wrong time is said at once), then created when the guard allows. */
    const scheduleTask = async (ctx: CommandContext): Promise<void> => {
      const parsed = await (await loadWhen()).parseReminder(ctx.args, Date.now(), zoneOf(ctx.senderId));
      // Not a task (its time or text is wrong): the same sentence as ever, nothing to guard.
      if (!parsed.ok) return void (await ctx.reply(await schedule(ctx.chatId, ctx.senderId, ctx.message.id, ctx.args, host.options(), true)));
      const task: HeldTask = { chatId: ctx.chatId, senderId: ctx.senderId, messageId: ctx.message.id, args: ctx.args };
      const outcome = await host.effects.act({ effect: TASK_EFFECT, summary: `schedule a task in this chat: ${short(ctx.args)}`, data: task }, ctx);
      if (outcome.status === 'done') return void (await ctx.reply(outcome.result ?? '🗓️ Task scheduled.'));
      if (outcome.status === 'denied') return void (await ctx.reply(`Nothing was scheduled: ${outcome.reason}.`));
      // Held: an owner in their own chat was just asked there (their 👍 on that message, the chat's last, answers it).
      if (!(ctx.isOwner && !ctx.message.isGroup)) await ctx.reply(`Nothing is scheduled yet: the owner is asked first (${outcome.id}).`);
    };

    const listText = (chatId: string, viewer: string): string => {
      const list = store.list(chatId);
      if (!list.length) return 'No reminders in this chat. Set one with .remind, for example .remind 10m tea.';
      const viewerZone = zoneOf(viewer);
      const lines = list.map((r, i) => {
        const zone = r.zone === viewerZone ? '' : ` (${r.zone})`;
        const text = r.task ? `🗓️ task: ${r.text}${r.failing ? ' (its last run failed)' : ''}` : r.text;
        return r.cron ? `${i + 1}. 🔁 ${r.label}, next ${formatLocal(r.due, r.zone)}${zone} — ${text}` : `${i + 1}. ${formatLocal(r.due, r.zone)}${zone} — ${text}`;
      });
      return `Reminders in this chat (times in ${viewerZone} unless shown):\n${lines.join('\n')}\nCancel one with .cancel <n>.`;
    };

    const cancel = async (ctx: CommandContext<Options>): Promise<string> => {
      const list = store.list(ctx.chatId);
      const n = Number(ctx.args);
      if (!/^\d+$/.test(ctx.args) || n < 1) return 'Which one? .reminders lists them numbered; then .cancel <n>, for example .cancel 1.';
      if (n > list.length) return list.length ? `There is no reminder ${n} here: this chat has ${list.length}. .reminders lists them.` : 'No reminders in this chat.';
      const r = list[n - 1];
      if (ctx.message.isGroup) {
        const self = [ctx.senderId, ctx.message.senderAltId].filter((x): x is string => !!x);
        const allowed = self.includes(r.creator) || ctx.isOwner || (await host.isGroupAdmin(ctx.chatId, self));
        if (!allowed) return 'Only the person who set that reminder, a group admin or an owner of the bot can cancel it.';
      }
      disarm(ctx.chatId, r.id);
      const problem = await save(store.remove(ctx.chatId, [r.id]));
      const said = `Cancelled: ${r.cron ? `🔁 ${r.label}` : formatLocal(r.due, r.zone)} — ${r.task ? `🗓️ task: ${r.text}` : r.text}`;
      return problem ? `${said}\n${unsaved(problem, 'It will not fire while the bot runs and I keep trying to save that; if the bot stops before that is fixed, the reminder may come back.')}` : said;
    };

    const timezone = async (ctx: CommandContext<Options>): Promise<string> => {
      const wanted = ctx.args.trim();
      if (!wanted) {
        const own = store.zoneOf(ctx.senderId);
        return `Your time zone: ${own ?? `${defaultZone()} (the bot's default)`}. Set yours with .timezone <Area/City>, for example .timezone Europe/Berlin; .timezone default goes back to the bot's.`;
      }
      if (/^(default|reset)$/i.test(wanted)) {
        const problem = await save(store.setZone(ctx.senderId, undefined));
        const said = `Your reminders now use the bot's time zone, ${defaultZone()}.`;
        return problem ? `${said}\n${unsaved(problem, ZONE_KEPT)}` : said;
      }
      const zone = canonicalZone(wanted);
      if (!zone) return `"${wanted.slice(0, 64)}" is not a time zone I know. Use an Area/City name, for example .timezone Europe/Berlin or .timezone Asia/Jakarta.`;
      const problem = await save(store.setZone(ctx.senderId, zone));
      const said = `Your time zone is now ${zone} (it is ${formatLocal(Date.now(), zone)} there). New reminders you set use it; ones already set keep theirs.`;
      return problem ? `${said}\n${unsaved(problem, ZONE_KEPT)}` : said;
    };

    return {
      commands: [
        { command: 'remind', usage: '.remind <when> <text>', help: 'a reminder in this chat: 10m, 18:30, tomorrow 9am, "next monday 9:00", every day 07:00', run: async (ctx) => ctx.reply(await schedule(ctx.chatId, ctx.senderId, ctx.message.id, ctx.args, host.options())) },
        { command: 'schedule', usage: '.schedule <when> <prompt>', help: 'a task: at its time I answer the prompt with my tools, as you (10m, 07:00, every weekday 08:30)', run: scheduleTask },
        { command: 'reminders', help: "this chat's upcoming reminders, numbered", run: (ctx) => ctx.reply(listText(ctx.chatId, ctx.senderId)) },
        { command: 'cancel', usage: '.cancel <n>', help: 'cancels reminder or task n of .reminders', run: async (ctx) => ctx.reply(await cancel(ctx)) },
        { command: 'timezone', usage: '.timezone [Area/City]', help: 'shows or sets your time zone for reminders', run: async (ctx) => ctx.reply(await timezone(ctx)) },
      ],
      tools: [
        defineTool({
          name: 'schedule_message',
          // It sends into the chat later.
          effects: { outsideText: false, acts: 'chats' },
          description:
            "Schedule a reminder or message to be sent later in this chat (only this chat). Use when the user asks to be reminded of something or to have something sent at a later time. Returns the confirmation to pass on, or what was wrong with the time.",
          parameters: Type.Object(
            {
              when: Type.String({ description: "when, in the user's time: '10m', '2h', 'in 2 hours', '18:30', 'tomorrow 9am', 'next monday 09:00', '2026-12-24 18:00'; repeating: 'every day 07:00', 'every monday 09:00', 'every weekday 08:30'" }),
              text: Type.String({ description: 'what to send at that time, e.g. "call mom"' }),
            },
            { additionalProperties: false },
          ),
          // The chat and the sender come from the core (call.chatId, call.senderId), never from the model's arguments.
          run: (args, call) => {
            return schedule(call.chatId, call.senderId, call.ctx.message.id, toolLine(args.when.trim(), args.text.trim()), host.options());
          },
        }),
        defineTool({
          name: 'schedule_task',
          // It makes the bot run a prompt and post the answer in the chat later.
          effects: { outsideText: false, acts: 'chats', kind: 'schedule' },
          description:
            "Schedule a task in this chat (only this chat, for the user asking): at its time the prompt runs through you with your tools, as that user, and your answer is posted here. Use when the user asks for something to be done or looked up later or regularly (\"every morning at 7 give me the weather\", \"on Monday summarise…\"); for a plain reminder text use schedule_message. Returns the confirmation to pass on, or what was wrong.",
          parameters: TASK_PARAMETERS,
          // The chat and the person come from the core (call.chatId, call.senderId): the arguments can name neither.
          run: (args, call) => {
            const extra = Object.keys(args).filter((k) => !(k in TASK_PARAMETERS.properties));
            if (extra.length) return `Refused: schedule_task takes only "when" and "prompt"; it always schedules in this chat for the user asking (not ${extra.map((k) => `"${k}"`).join(', ')}). Nothing was scheduled.`;
            if (call.ctx.message.scheduled) return 'Refused: a scheduled task cannot schedule another task. Nothing was scheduled.';
            return schedule(call.chatId, call.senderId, call.ctx.message.id, toolLine(args.when.trim(), args.prompt.trim()), host.options(), true);
          },
        }),
      ],
      async stop() {
        stopping = true;
        stopListening();
        stopFollowing();
        for (const timer of timers.values()) clearTimeout(timer);
        timers.clear();
        // A last try for writes that failed; what is still not on disk is named by the data health at stop.
        await store.flush().catch(() => undefined);
      },
    };
  },
});

