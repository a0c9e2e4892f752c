import { definePlugin, PromptRefused, Store, Type, type PluginHost } from '../../core/index.js';

const MINUTE_MS = 60_000;
const HHMM = '^([01]\\d|2[0-3]):[0-5]\\d$';

const options = Type.Object({
  everyMinutes: Type.Integer({ title: 'Minutes between passes', minimum: 5, maximum: 1440, default: 60, description: 'how often the hidden pass looks for something worth following up in each opted-in chat' }),
  timeZone: Type.String({ title: 'Time zone', default: 'UTC', minLength: 1, description: 'the time zone of the active hours (an IANA name, e.g. Europe/Berlin)' }),
});

type Host = PluginHost<typeof options.static>;

/** A chat's opt-in: who opted in (the pass runs as them), active hours (local HH:MM), the daily cap and today's count. */
const CheckinChat = Type.Object({
  by: Type.String(),
  from: Type.String({ pattern: HHMM }),
  to: Type.String({ pattern: HHMM }),
  maxPerDay: Type.Integer({ minimum: 1, maximum: 10 }),
  day: Type.String(),
  sent: Type.Integer({ minimum: 0 }),
  at: Type.Number(),
});

/** The chats that opted in, by chat id: a private chat's entry is its person's (`.mydata`, deletes). */
export const CHECKIN_CHATS = Store.doc('chats', Type.Object({ chats: Type.Record(Type.String(), CheckinChat) }), () => ({ chats: {} }), {
  title: 'check-in opt-ins',
  people: { byId: (doc) => doc.chats },
});

/** What the hidden pass asks; it is the bot's own prompt, never kept in the chat's history. */
export const CHECKIN_PROMPT = '[Check-in pass: nobody wrote just now. Look at this conversation for something worth following up.]';
const CHECKIN_SYSTEM =
  'This is a hidden check-in pass, not a message from the user. If the conversation holds something the user said they would do or wanted to hear about again (a call to make, an appointment, an open question of theirs) and a short follow-up would help now, write that one short, friendly follow-up ("You said you would call the bank — done?"). Otherwise — and whenever in doubt — answer exactly NO_REPLY and nothing else: then nothing is sent.';

/** Local date (YYYY-MM-DD) and time (HH:MM) of `at` in `zone`. */
function localNow(at: number, zone: string): { day: string; time: string } {
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(at);
  } catch {
    parts = new Intl.DateTimeFormat('en-CA', { timeZone: 'UTC', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(at);
  }
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '00';
  return { day: `${get('year')}-${get('month')}-${get('day')}`, time: `${get('hour')}:${get('minute')}` };
}

/** True when `time` is within [from, to) (a span past midnight, such as 22:00–02:00, too). */
function within(time: string, from: string, to: string): boolean {
  return from <= to ? time >= from && time < to : time >= from || time < to;
}

/**
 * Check-ins that stay quiet: a chat opts in (`.checkin on 09:00-21:00 max 2`); every `everyMinutes`, within the active
 * hours and under the daily cap, a hidden pass asks the model whether anything said earlier is worth a follow-up. With
 * nothing worth saying the model answers the no-reply token and nothing is sent; the token never reaches a chat. The
 * pass runs as the person who opted in (their access, tools and budget); the follow-up goes to that chat only.
 */
export default definePlugin({
  name: 'checkins',
  description: 'Follow-ups the bot starts in chats that opted in (.checkin on), quiet when there is nothing to say',
  options,
  stores: [CHECKIN_CHATS],
  setup: async (host) => {
    const doc = host.store.doc(CHECKIN_CHATS);
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const running = new Set<string>();

    const passChat = async (chatId: string, now: number): Promise<void> => {
      const chat = (await doc.get()).chats[chatId];
      if (!chat || running.has(chatId)) return;
      const local = localNow(now, host.options().timeZone);
      if (!within(local.time, chat.from, chat.to)) return void host.log.debug({ chat: chatId }, 'check-in: outside the active hours, not run');
      const sentToday = chat.day === local.day ? chat.sent : 0;
      if (sentToday >= chat.maxPerDay) return void host.log.debug({ chat: chatId, sentToday }, "check-in: today's cap is reached, not run");
      running.add(chatId);
      try {
        const answer = await host.promptAs(chatId, chat.by, CHECKIN_PROMPT, { system: CHECKIN_SYSTEM, hidden: true });
        // Through the one send path of messages the bot starts (paced; the no-reply token never sent), to this chat only.
        const sent = answer.trim() ? await host.send(chatId, answer) : { id: '' };
        if (!sent.id) {
          host.log.info({ chat: chatId }, 'check-in: nothing worth saying, nothing sent');
          return;
        }
        // Counted at once (written soon after): the cap holds from the next pass on.
        await doc.update((d) => {
          const entry = d.chats[chatId];
          if (entry) Object.assign(entry, { day: local.day, sent: sentToday + 1 });
        });
        host.log.info({ chat: chatId, sentToday: sentToday + 1 }, 'check-in: a follow-up was sent');
      } catch (err) {
        if (err instanceof PromptRefused) host.log.info({ chat: chatId, reason: err.reason }, 'check-in: not run now');
        else host.log.warn({ err, chat: chatId }, 'check-in: the pass failed; nothing was sent');
      } finally {
        running.delete(chatId);
      }
    };

    /** One pass over every opted-in chat; the next is armed when it is done. */
    const pass = async (): Promise<void> => {
      timer = undefined;
      if (stopped) return;
      const now = Date.now();
      if (host.enabled()) for (const chatId of Object.keys((await doc.get()).chats)) await passChat(chatId, now);
      arm();
    };
    const arm = () => {
      if (stopped || timer) return;
      timer = setTimeout(() => void pass().catch((err: unknown) => host.log.error({ err }, 'check-in pass failed')), host.options().everyMinutes * MINUTE_MS);
      timer.unref?.();
    };
    if (Object.keys((await doc.get()).chats).length) arm();

    const status = async (chatId: string): Promise<string> => {
      const chat = (await doc.get()).chats[chatId];
      const prefix = host.config().prefix;
      if (!chat) return `Check-ins are off here. ${prefix}checkin on [09:00-21:00] [max 2] lets me follow up on what was said, at most that often a day, and only when there is something worth saying.`;
      return `Check-ins are on here: between ${chat.from} and ${chat.to} (${host.options().timeZone}), at most ${chat.maxPerDay} a day. ${prefix}checkin off stops them.`;
    };

    return {
      commands: [
        {
          command: 'checkin',
          usage: '.checkin [on [HH:MM-HH:MM] [max N] | off]',
          help: 'let me follow up on what was said here (on, with active hours and a daily cap), or stop it (off)',
          run: async (ctx) => {
            const [word, ...rest] = ctx.args.trim().split(/\s+/);
            const mine = ctx.isOwner || (!ctx.message.isGroup && ctx.chatId === ctx.senderId);
            if (!word) return ctx.reply(await status(ctx.chatId));
            if (!mine) return ctx.reply('Only an owner (or, in a private chat, its own person) switches check-ins here.');
            if (word.toLowerCase() === 'off') {
              await doc.save((d) => void delete d.chats[ctx.chatId]);
              return ctx.reply('Check-ins are off here.');
            }
            if (word.toLowerCase() !== 'on') return ctx.reply(`Usage: ${host.config().prefix}checkin on [09:00-21:00] [max 2], or ${host.config().prefix}checkin off`);
            const args = rest.join(' ');
            const hours = /(\d\d?:\d\d)\s*-\s*(\d\d?:\d\d)/.exec(args);
            const pad = (t: string) => t.padStart(5, '0');
            const from = hours ? pad(hours[1]) : '09:00';
            const to = hours ? pad(hours[2]) : '21:00';
            if (!new RegExp(HHMM).test(from) || !new RegExp(HHMM).test(to) || from === to) return ctx.reply('Active hours are HH:MM-HH:MM, e.g. 09:00-21:00.');
            const max = /max\s+(\d+)/i.exec(args);
            const maxPerDay = max ? Number(max[1]) : 2;
            if (!(maxPerDay >= 1 && maxPerDay <= 10)) return ctx.reply('At most 1 to 10 check-ins a day.');
            await doc.save((d) => void (d.chats[ctx.chatId] = { by: ctx.senderId, from, to, maxPerDay, day: '', sent: 0, at: Date.now() }));
            arm();
            return ctx.reply(`✅ Check-ins on: between ${from} and ${to} (${host.options().timeZone}), at most ${maxPerDay} a day, and only when there is something worth saying.`);
          },
        },
      ],
      stop() {
        stopped = true;
        if (timer) clearTimeout(timer);
      },
    };
  },
});
