import { definePlugin, userPart, type CommandContext, type MessageContext, type PanelTable, type PluginHost, type PluginListing, type TurnPlan, type TurnRecord } from '../../../index.js';
import { CORE_TOOLS } from '../../../builtin.js';
import { costOf, money, monthOf, priceOf, priceWeight, type Price } from './prices.js';
import { ANSWER_LENGTHS, ANSWERS, ANSWERS_KEPT, CHAT_PROFILES, DEFAULT_PROFILE, emptyTally, SPEND, type Answer, type AnswerLength, type Profile, type Tally } from './stores.js';
import { answerAskedAbout, whyText } from './why.js';

/** config.json → `money`: the price table and the monthly caps in money. */
type Money = ReturnType<PluginHost['config']>['money'];

/** What the answer-length preference tells the model (the same words every turn: the prompt's start stays cached). */
const LENGTH_LINES: Record<AnswerLength, string | undefined> = {
  short: 'The owner set answers in this chat to be short: two or three sentences unless the user asks for more.',
  normal: undefined,
  long: 'The owner set answers in this chat to be thorough: explain fully, with detail and examples where they help.',
};

const nextMonthStart = (at: number) => {
  const d = new Date(at);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);
};

function add(tally: Tally, cost: number | undefined, tokens: { prompt: number; cached: number; completion: number }): void {
  tally.turns++;
  tally.prompt += tokens.prompt;
  tally.cached += tokens.cached;
  tally.completion += tokens.completion;
  if (cost === undefined) tally.unpriced++;
  else tally.cost += cost;
}

/** The sender's ids (phone jid and LID when both are known). */
const idsOf = (ctx: MessageContext) => [ctx.senderId, ctx.message.senderAltId].filter((id): id is string => Boolean(id));

/** A profile in words, for `.profile`. */
function profileText(profile: Profile | undefined, own: boolean, money: Money, fallbackModel: string): string {
  const cap = profile?.monthlyCap ? `${moneyText(profile.monthlyCap, money)} a month` : money.caps.chatMonthly ? `${moneyText(money.caps.chatMonthly, money)} a month (the bot's cap per chat)` : 'none';
  return [
    `• Model: ${profile?.model ?? `${fallbackModel} (each provider's own)`}`,
    `• Tools: ${profile?.tools ? (profile.tools.length ? profile.tools.join(', ') : 'none') : 'all that are switched on'}`,
    `• Answer length: ${profile?.answerLength ?? 'normal'}`,
    `• Spending cap: ${cap}`,
    own ? '' : '(this chat has no profile of its own: the default applies)',
  ]
    .filter(Boolean)
    .join('\n');
}

const moneyText = (amount: number, m: Money) => money(amount, m.currency);

/** The names of `names` that are neither a plugin nor a tool any plugin (or the core) lists. */
function unknownToolNames(names: readonly string[], listings: readonly PluginListing[]): string[] {
  const known = new Set<string>(CORE_TOOLS);
  for (const p of listings) {
    known.add(p.name);
    for (const tool of p.tools) known.add(tool);
  }
  return names.filter((n) => !known.has(n));
}

/** A cap that holds for a turn, with what was spent against it this month. */
interface Cap {
  scope: string;
  key: string;
  cap: number;
  spent: number;
  who: string;
}

/**
 * The `.why` record of an answer. Built by assignment in the record's key order: an object literal that starts with
 * a spread (`{ ...(id ? { questionId } : {}), askedBy, … }`) makes V8 add each later key through its slow path,
 * ~6 KB of garbage for every answer instead of ~0.6 KB.
 */
function answerRecord(ctx: MessageContext, record: TurnRecord, cost: number | undefined, unpriced: ReadonlySet<string>): Answer {
  const answer = {} as Answer;
  if (ctx.message.id) answer.questionId = ctx.message.id;
  answer.askedBy = ctx.senderId;
  answer.at = record.at;
  answer.leg = record.leg;
  answer.model = record.model;
  answer.intendedLeg = record.intendedLeg;
  answer.intendedModel = record.intendedModel;
  answer.failedLegs = record.failedLegs;
  if (record.profileModelMissing) answer.profileModelMissing = record.profileModelMissing;
  answer.premium = record.premium;
  answer.tools = record.tools;
  answer.facts = record.facts;
  if (record.summary) answer.summaryPeople = record.summary.people;
  answer.tokens = record.tokens;
  if (cost === undefined) answer.unpricedModels = [...unpriced];
  else answer.cost = cost;
  answer.ms = Math.round(record.ms);
  answer.answer = record.answer.slice(0, 1000);
  return answer;
}

/**
 * The `profiles` core plugin: what each chat may use and spend (its model, tools, answer length and monthly cap, set
 * by an owner with `.profile`), the money every turn costs (prices in config.json `money`, caps per person, chat and
 * overall, owners told at 80 % and when a pricier failover leg answered), `.usage`, and `.why` for a recent answer.
 */
export default definePlugin({
  name: 'profiles',
  description: 'Owners: a profile per chat (model, tools, answer length, spending cap); money spent (.usage); why an answer was given (.why)',
  order: 15,
  stores: [CHAT_PROFILES, SPEND, ANSWERS],
  setup(host: PluginHost) {
    const section = (): Money => host.config().money;
    const profiles = host.store.doc(CHAT_PROFILES);
    const spend = host.store.doc(SPEND);
    const prices = () => section().prices;

    /** The chat's own profile and the default, merged (the chat's settings win). */
    async function profileOf(chatId: string): Promise<{ profile: Profile | undefined; own: boolean }> {
      const { chats } = await profiles.get();
      const own = chats[chatId];
      const base = chats[DEFAULT_PROFILE];
      if (!own && !base) return { profile: undefined, own: false };
      return { profile: Object.assign({}, base, own) as Profile, own: Boolean(own) };
    }

    /** The caps that hold for this turn, with what was spent against each this month. */
    async function capsFor(ctx: MessageContext, profile: Profile | undefined, at: number): Promise<Cap[]> {
      const m = section();
      const chatCap = profile?.monthlyCap || m.caps.chatMonthly;
      // No cap set (the shipped default): nothing to read for every turn.
      if (!(m.caps.personMonthly > 0 || chatCap > 0 || m.caps.overallMonthly > 0)) return [];
      const month = monthOf(at);
      const doc = await spend.get();
      const thisMonth = doc.months[month];
      const person = idsOf(ctx).reduce((sum, id) => sum + (doc.people[id]?.[month]?.cost ?? 0), 0);
      return [
        { scope: 'person', key: `person:${ctx.senderId}`, cap: m.caps.personMonthly, spent: person, who: `you` },
        { scope: 'chat', key: `chat:${ctx.chatId}`, cap: chatCap, spent: thisMonth?.chats[ctx.chatId]?.cost ?? 0, who: 'this chat' },
        { scope: 'overall', key: 'overall', cap: m.caps.overallMonthly, spent: thisMonth?.all.cost ?? 0, who: 'the bot as a whole' },
      ].filter((c) => c.cap > 0);
    }

    async function before(ctx: MessageContext, turn: { premium: boolean }): Promise<TurnPlan> {
      const { profile } = await profileOf(ctx.chatId);
      // Owners are exempt from the money caps (they set them), as from the daily AI budgets.
      if (!ctx.isOwner) {
        const at = Date.now();
        for (const c of await capsFor(ctx, profile, at)) {
          if (c.spent >= c.cap) {
            return { refuse: `Sorry, I cannot answer: ${c.who === 'you' ? 'you have' : `${c.who} has`} reached this month's AI spending limit (${moneyText(c.spent, section())} of ${moneyText(c.cap, section())}). It starts again on ${nextMonthStart(at)} (UTC); an owner can raise it.` };
          }
        }
      }
      if (!profile) return {};
      const allowed = profile.tools;
      return {
        ...(profile.model && !turn.premium ? { model: profile.model } : {}),
        ...(allowed ? { allowTool: (tool: string, plugin: string) => allowed.includes(tool) || allowed.includes(plugin) } : {}),
        ...(profile.answerLength && LENGTH_LINES[profile.answerLength] ? { system: LENGTH_LINES[profile.answerLength] } : {}),
      };
    }

    async function after(ctx: MessageContext, record: TurnRecord): Promise<void> {
      const m = section();
      let cost: number | undefined = 0;
      const unpriced = new Set<string>();
      for (const r of record.requests) {
        const price = priceOf(r.model, prices());
        if (!price) unpriced.add(r.model);
        else cost += costOf(r, price);
      }
      if (unpriced.size) cost = undefined;
      const month = monthOf(record.at);
      // What was spent before this turn matters only to a turn that cost something (the notices at 80 % and 100 %).
      const capsBefore = cost ? await capsFor(ctx, (await profileOf(ctx.chatId)).profile, record.at) : [];
      await spend.update((doc) => {
        const mo = (doc.months[month] ??= { all: emptyTally(), chats: {}, models: {} });
        add(mo.all, cost, record.tokens);
        add((mo.chats[ctx.chatId] ??= emptyTally()), cost, record.tokens);
        add((mo.models[record.model] ??= emptyTally()), cost, record.tokens);
        add(((doc.people[ctx.senderId] ??= {})[month] ??= emptyTally()), cost, record.tokens);
      });
      if (cost) await tellCaps(ctx, capsBefore, cost, month, m);
      tellPricierLeg(ctx, record);
      const answer = answerRecord(ctx, record, cost, unpriced);
      // The question was deleted (or edited) while it was answered: the record, which starts with the answer, would
      // bring its words back.
      if (ctx.history.incomingRemoved()) return;
      await host.store.chat(ctx.chatId).doc(ANSWERS).update((doc) => {
        doc.items.push(answer);
        if (doc.items.length > ANSWERS_KEPT) doc.items.splice(0, doc.items.length - ANSWERS_KEPT);
      });
    }

    /** Owners hear once a month when a cap passes `noticePercent`, and when it is reached. */
    async function tellCaps(ctx: MessageContext, caps: Cap[], cost: number, month: string, m: Money): Promise<void> {
      for (const c of caps) {
        const now = c.spent + cost;
        const marks = [
          { at: c.cap, key: `${c.key}:${month}:100`, text: 'has reached' },
          { at: (c.cap * m.noticePercent) / 100, key: `${c.key}:${month}:${m.noticePercent}`, text: `has used ${m.noticePercent} % of` },
        ];
        const mark = marks.find((k) => now >= k.at);
        if (!mark) continue;
        const doc = await spend.get();
        if (doc.warned[mark.key]) continue;
        await spend.update((d) => void (d.warned[mark.key] = true));
        const whose = c.scope === 'person' ? `+${userPart(ctx.senderId)}` : c.scope === 'chat' ? `the chat ${ctx.chatId}` : 'the bot as a whole';
        host.notices.raise(`money-cap:${mark.key}`, `Spending: ${whose} ${mark.text} its monthly AI cap (${moneyText(now, m)} of ${moneyText(c.cap, m)} in ${month}).${mark.at === c.cap ? ' Further turns are refused until next month unless you raise the cap (money.caps in config.json, or .profile cap).' : ''}`);
      }
    }

    /** A failover leg with a higher price than the leg that should have answered: owners hear of it (once a day per leg and model). */
    function tellPricierLeg(ctx: MessageContext, record: TurnRecord): void {
      if (!record.failedLegs.length || record.leg === record.intendedLeg) return;
      const served = priceOf(record.model, prices());
      const intended = priceOf(record.intendedModel, prices());
      if (!intended || (served && priceWeight(served) <= priceWeight(intended))) return;
      const m = section();
      const rate = (p: Price) => `${moneyText(p.input, m)} in / ${moneyText(p.output, m)} out per million tokens`;
      const day = new Date(record.at).toISOString().slice(0, 10);
      host.notices.raise(
        `pricier-leg:${record.leg}:${record.model}:${day}`,
        `A pricier provider answered: ${record.intendedLeg} (${record.intendedModel}, ${rate(intended)}) could not, so ${record.leg} (${record.model}, ${served ? rate(served) : 'unknown price'}) served a turn in ${ctx.chatId}. Check ${record.intendedLeg} in .status.`,
      );
    }

    async function profileCommand(ctx: CommandContext): Promise<void> {
      const prefix = host.config().prefix;
      const words = ctx.args.trim().split(/\s+/).filter(Boolean);
      const forDefault = words[0]?.toLowerCase() === 'default';
      if (forDefault) words.shift();
      const key = forDefault ? DEFAULT_PROFILE : ctx.chatId;
      const fallbackModel = host.ai.legs()[0]?.model ?? 'none';
      if (!words.length) {
        if (forDefault) {
          const { chats } = await profiles.get();
          return void (await ctx.reply(`The default profile (for chats without one of their own):\n${profileText(chats[DEFAULT_PROFILE], true, section(), fallbackModel)}`));
        }
        const { profile, own } = await profileOf(ctx.chatId);
        return void (await ctx.reply(`This chat's profile:\n${profileText(profile, own, section(), fallbackModel)}\n\nOwners change it with ${prefix}profile model <id>, ${prefix}profile tools <names>|all|none, ${prefix}profile length short|normal|long, ${prefix}profile cap <amount>|off, ${prefix}profile reset (add "default" after ${prefix}profile for the default).`));
      }
      if (!ctx.isOwner) return void (await ctx.reply(`Sorry, only the owners of this bot can change a chat's profile (${prefix}profile shows it).`));
      const [what, ...rest] = words;
      const value = rest.join(' ');
      const by = ctx.message.fromOperator ? 'console' : ctx.senderId;
      const save = (change: (p: Profile) => void) =>
        profiles.save((doc) => {
          const p = (doc.chats[key] ??= { by, at: Date.now() });
          change(p);
          p.by = by;
          p.at = Date.now();
        });
      const where = forDefault ? 'the default profile' : "this chat's profile";
      switch (what.toLowerCase()) {
        case 'model': {
          if (!value) return void (await ctx.reply(`Send ${prefix}profile model <id> (or ${prefix}profile model default for each provider's own).`));
          if (value === 'default' || value === 'off') {
            await save((p) => void delete p.model);
            return void (await ctx.reply(`Done: ${where} uses each provider's own model again.`));
          }
          const listed = await host.ai.models?.();
          if (listed && !listed.includes(value)) {
            const near = listed.filter((id) => id.toLowerCase().includes(value.toLowerCase().slice(0, 4))).slice(0, 8);
            return void (await ctx.reply(`The gateway does not offer a model "${value}", so nothing was changed. ${near.length ? `Close ones: ${near.join(', ')}.` : `It offers: ${listed.slice(0, 15).join(', ')}${listed.length > 15 ? ', …' : ''}.`}`));
          }
          await save((p) => void (p.model = value));
          const price = priceOf(value, prices());
          return void (await ctx.reply(`Done: ${where} uses ${value}${listed ? '' : " (the gateway does not list its models, so I could not check the name)"}. ${price ? `Price: ${moneyText(price.input, section())} in / ${moneyText(price.output, section())} out per million tokens.` : 'Its price is unknown: add it under money.prices in config.json to count its cost.'} A provider that lacks it answers with its own model (.why says so).`));
        }
        case 'tools': {
          if (!value) return void (await ctx.reply(`Send ${prefix}profile tools <names of tools or plugins>, ${prefix}profile tools all, or ${prefix}profile tools none.`));
          if (value.toLowerCase() === 'all') {
            await save((p) => void delete p.tools);
            return void (await ctx.reply(`Done: ${where} allows every tool that is switched on.`));
          }
          const names = value.toLowerCase() === 'none' ? [] : [...new Set(value.split(/[\s,]+/).filter(Boolean))];
          const bad = names.find((n) => !/^[A-Za-z0-9_.-]{1,80}$/.test(n));
          if (bad) return void (await ctx.reply(`"${bad.slice(0, 40)}" is not a tool or plugin name. Nothing was changed.`));
          await save((p) => void (p.tools = names));
          const listings = host.plugins();
          const plugins = new Set(listings.map((p) => p.name));
          const asPlugins = names.filter((n) => plugins.has(n));
          const unknown = unknownToolNames(names, listings);
          const warning = unknown.length
            ? ` Note: no plugin here offers ${unknown.length === 1 ? 'a tool or plugin named' : 'tools or plugins named'} ${unknown.join(', ')}${listings.some((p) => p.toolsPerMessage) ? ` (${listings.filter((p) => p.toolsPerMessage).map((p) => p.name).join(', ')} name${listings.filter((p) => p.toolsPerMessage).length === 1 ? 's its' : ' their'} tools per message, so check the spelling there)` : ''}: until one does, ${unknown.length === 1 ? 'that name allows' : 'those names allow'} nothing. ${prefix}help lists the plugins.`
            : '';
          return void (await ctx.reply((names.length ? `Done: ${where} allows only ${names.join(', ')}${asPlugins.length ? ` (${asPlugins.join(', ')}: every tool of that plugin)` : ''}. Other tools are neither offered nor run there.` : `Done: ${where} allows no tools.`) + warning));
        }
        case 'length': {
          const length = value.toLowerCase() as AnswerLength;
          if (!ANSWER_LENGTHS.includes(length)) return void (await ctx.reply(`Send ${prefix}profile length short, normal or long.`));
          await save((p) => void (p.answerLength = length));
          return void (await ctx.reply(`Done: answers in ${forDefault ? 'chats with the default profile' : 'this chat'} are ${length} from now on.`));
        }
        case 'cap': {
          if (value === 'off' || value === '0') {
            await save((p) => void delete p.monthlyCap);
            return void (await ctx.reply(`Done: ${where} has no spending cap of its own.`));
          }
          const amount = Number(value.replace(/^\$/, ''));
          if (!value || !Number.isFinite(amount) || amount <= 0) return void (await ctx.reply(`Send ${prefix}profile cap <amount in ${section().currency}> (per month), or ${prefix}profile cap off.`));
          await save((p) => void (p.monthlyCap = amount));
          return void (await ctx.reply(`Done: ${forDefault ? 'each chat with the default profile' : 'this chat'} may spend ${moneyText(amount, section())} a month on AI answers.`));
        }
        case 'reset': {
          await profiles.save((doc) => void delete doc.chats[key]);
          return void (await ctx.reply(forDefault ? 'Done: there is no default profile any more.' : 'Done: this chat has no profile of its own any more (the default applies).'));
        }
        default:
          return void (await ctx.reply(`I do not know "${what}". Send ${prefix}profile to see the profile and how to change it.`));
      }
    }

    async function usageCommand(ctx: CommandContext): Promise<void> {
      const m = section();
      const wanted = ctx.args.trim();
      if (wanted && !/^\d{4}-\d{2}$/.test(wanted)) return void (await ctx.reply(`Send ${host.config().prefix}usage, or ${host.config().prefix}usage <YYYY-MM> for another month.`));
      const month = wanted || monthOf(Date.now());
      const doc = await spend.get();
      const line = (t: Tally) => `${moneyText(t.cost, m)} over ${t.turns} answer${t.turns === 1 ? '' : 's'}${t.unpriced ? ` (+ ${t.unpriced} at an unknown price)` : ''}`;
      if (!ctx.isOwner) {
        const mine = emptyTally();
        for (const id of idsOf(ctx)) {
          const t = doc.people[id]?.[month];
          if (t) for (const k of Object.keys(mine) as Array<keyof Tally>) mine[k] += t[k];
        }
        const cap = m.caps.personMonthly ? ` Your monthly cap: ${moneyText(m.caps.personMonthly, m)}.` : '';
        return void (await ctx.reply(`Your AI spending in ${month}: ${line(mine)}.${cap}`));
      }
      const mo = doc.months[month];
      const top = (entries: Array<[string, Tally]>, name: (id: string) => string) =>
        entries
          .sort((a, b) => b[1].cost - a[1].cost)
          .slice(0, 10)
          .map(([id, t]) => `  ${name(id)}: ${line(t)}`);
      const people = Object.entries(doc.people).flatMap(([id, months]) => (months[month] ? [[id, months[month]] as [string, Tally]] : []));
      const text = mo
        ? [
            `AI spending in ${month}: ${line(mo.all)}${m.caps.overallMonthly ? ` (cap ${moneyText(m.caps.overallMonthly, m)})` : ''}.`,
            'Per chat:',
            ...top(Object.entries(mo.chats), (id) => id),
            'Per person:',
            ...top(people, (id) => `+${userPart(id) || id}`),
            'Per model:',
            ...top(Object.entries(mo.models), (id) => `${id}${priceOf(id, prices()) ? '' : ' (unknown price)'}`),
          ].join('\n')
        : `No AI spending recorded in ${month}.`;
      if (!ctx.message.isGroup) return void (await ctx.reply(text));
      // In a group the report (other people's spending) goes to the owner's private chat.
      const privateChat = ctx.message.senderAltId?.endsWith('@s.whatsapp.net') ? ctx.message.senderAltId : ctx.senderId;
      await host.send(privateChat, text);
      await ctx.reply('I sent you the spending report in our private chat.');
    }

    async function whyCommand(ctx: CommandContext): Promise<void> {
      const { items } = await host.store.chat(ctx.chatId).doc(ANSWERS).get();
      const answer = answerAskedAbout(ctx, items);
      if (!answer) {
        return void (await ctx.reply(ctx.message.quoted?.fromBot ? `I no longer have the details of that answer (I keep the last ${ANSWERS_KEPT} answers of each chat).` : 'I have not answered anything here yet that I could explain. Reply to one of my answers with .why.'));
      }
      await ctx.reply(whyText(answer, ctx, section().currency));
    }

    return {
      commands: [
        { command: 'profile', usage: '.profile [default] [model <id>|tools <names>|length <short|normal|long>|cap <amount>|reset]', help: "show this chat's profile; owners set its model, tools, answer length and spending cap", run: profileCommand },
        { command: 'usage', usage: '.usage [YYYY-MM]', help: 'money spent on AI answers this month (owners: per chat, person and model; others: their own)', run: usageCommand },
        { command: 'why', usage: '.why (as a reply to my answer)', help: 'why I answered as I did: provider, model, tools, facts, tokens, cost and time', run: whyCommand },
      ],
      turnPolicy: { before, after },
      panel: { read: panelTables },
    };

    /** The dashboard's view (owners only): every profile, and this month's spending per chat, person and model. */
    async function panelTables(): Promise<PanelTable[]> {
      const m = section();
      const month = monthOf(Date.now());
      const [{ chats }, doc] = await Promise.all([profiles.get(), spend.get()]);
      const tally = (t: Tally) => [`${moneyText(t.cost, m)}${t.unpriced ? ` (+ ${t.unpriced} at an unknown price)` : ''}`, String(t.turns), String(t.prompt), String(t.cached), String(t.completion)];
      const spent = (caption: string, entries: Array<[string, Tally]>, name: (id: string) => string): PanelTable => ({
        caption: `${caption} in ${month} (UTC)`,
        columns: [caption.replace(/^Spending per (.)/, (_, c: string) => c.toUpperCase()), 'Cost', 'Answers', 'Input tokens', 'Cached input', 'Output tokens'],
        rows: entries.sort((a, b) => b[1].cost - a[1].cost).map(([id, t]) => [name(id), ...tally(t)]),
        empty: 'nothing spent yet this month',
      });
      const mo = doc.months[month];
      const people = Object.entries(doc.people).flatMap(([id, months]) => (months[month] ? [[id, months[month]] as [string, Tally]] : []));
      return [
        {
          caption: 'Chat profiles (owners set them in the chat with .profile)',
          columns: ['Chat', 'Model', 'Tools', 'Answer length', 'Monthly cap', 'Set by'],
          rows: Object.entries(chats)
            .sort(([a], [b]) => (a === DEFAULT_PROFILE ? -1 : b === DEFAULT_PROFILE ? 1 : a.localeCompare(b)))
            .map(([id, p]) => [id === DEFAULT_PROFILE ? 'default (chats without their own)' : id, p.model ?? "each provider's own", p.tools ? p.tools.join(', ') || 'none' : 'all switched on', p.answerLength ?? 'normal', p.monthlyCap ? moneyText(p.monthlyCap, m) : 'none', p.by]),
          empty: 'no chat has a profile: every chat uses the providers\' models and every switched-on tool',
        },
        { caption: `Spending in ${month} (UTC)`, columns: ['Overall', 'Cost', 'Answers', 'Input tokens', 'Cached input', 'Output tokens'], rows: mo ? [['all chats', ...tally(mo.all)]] : [], empty: 'nothing spent yet this month' },
        spent('Spending per chat', Object.entries(mo?.chats ?? {}), (id) => id),
        spent('Spending per person', people, (id) => `+${userPart(id) || id}`),
        spent('Spending per model', Object.entries(mo?.models ?? {}), (id) => `${id}${priceOf(id, prices()) ? '' : ' (unknown price)'}`),
      ];
    }
  },
});
