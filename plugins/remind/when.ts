// English only: the whole package loads every language (~0.15 s of start-up); .remind reads English phrases.
import type * as Chrono from 'chrono-node/en';
import { Cron } from 'croner';
import { formatLocal, instantOf, offsetMinutes, wallTime } from './zone.js';

/** chrono-node (some fifty modules) loads with the first reminder, not with the bot: start-up stays short. */
let chronoLoad: Promise<typeof Chrono> | undefined;
const loadChrono = () => (chronoLoad ??= import('chrono-node/en'));

/**
 * Reads `<when> <text>` from the start of `.remind`'s arguments. Natural phrases go to chrono-node (maintained, the
 * most complete English date parser for JavaScript, and it reports where in the text the time ended); recurring
 * schedules are cron patterns checked and stepped by croner (maintained, no dependencies, seconds and IANA zones).
 */

export type Schedule =
  | { kind: 'once'; at: number }
  | { kind: 'repeat'; cron: string; label: string; next: number };

export type Parsed = { ok: true; schedule: Schedule; text: string } | { ok: false; error: string };

export const EXAMPLES = 'for example .remind 10m tea, .remind 18:30 call mom, .remind tomorrow 9am dentist, .remind "next monday 9:00" standup';

const DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The quoted first part (`"next monday 9:00" rest`), when the arguments start with a quote. */
function splitQuoted(args: string): { head: string; rest: string } | undefined {
  const match = /^(["'“”‘’])(.*?)(["'“”‘’])\s*([\s\S]*)$/.exec(args);
  if (!match) return undefined;
  return { head: match[2].trim(), rest: match[4] };
}

/** The next instant at or after `now` (strictly after) with the wall time `hour:minute` in `zone`. */
function nextWallTime(now: number, zone: string, hour: number, minute: number): number {
  const today = wallTime(now, zone);
  let at = instantOf(zone, today.year, today.month, today.day, hour, minute);
  if (at <= now) {
    const tomorrow = wallTime(now + 86_400_000, zone);
    at = instantOf(zone, tomorrow.year, tomorrow.month, tomorrow.day, hour, minute);
  }
  return at;
}

const validClock = (h: number, m: number) => h >= 0 && h <= 23 && m >= 0 && m <= 59;

/** The time forms that are not natural language: `30s`/`10m`/`2h`/`3d`, `YYYY-MM-DD HH:MM`, `HH:MM`. */
function exactTime(args: string, now: number, zone: string): { at: number; length: number } | { error: string } | undefined {
  const duration = /^(\d{1,6})\s?(s|m|h|d)(?=\s|$)/i.exec(args);
  if (duration) {
    const amount = Number(duration[1]);
    if (amount === 0) return { error: `A reminder needs a time in the future, ${EXAMPLES}.` };
    return { at: now + amount * UNIT_MS[duration[2].toLowerCase()], length: duration[0].length };
  }
  const date = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2})[:.](\d{2}))?(?=\s|$)/.exec(args);
  if (date) {
    const [year, month, day] = [Number(date[1]), Number(date[2]), Number(date[3])];
    const [hour, minute] = date[4] === undefined ? [9, 0] : [Number(date[4]), Number(date[5])];
    const probe = new Date(Date.UTC(year, month - 1, day));
    if (probe.getUTCMonth() !== month - 1 || probe.getUTCDate() !== day || !validClock(hour, minute)) {
      return { error: `${date[0]} is not a date and time I can read: write it as YYYY-MM-DD HH:MM, for example .remind 2026-12-24 18:00 call grandma.` };
    }
    return { at: instantOf(zone, year, month, day, hour, minute), length: date[0].length };
  }
  const clock = /^(\d{1,2})[:.](\d{2})(?=\s|$)/.exec(args);
  if (clock) {
    const [hour, minute] = [Number(clock[1]), Number(clock[2])];
    if (!validClock(hour, minute)) return { error: `${clock[0]} is not a time of day: use HH:MM from 00:00 to 23:59, for example .remind 18:30 call mom.` };
    return { at: nextWallTime(now, zone, hour, minute), length: clock[0].length };
  }
  return undefined;
}

/** A natural phrase at the very start (`tomorrow 9am`, `in two hours`, `next monday at 18:00`) read by chrono-node. */
function naturalTime(chrono: typeof Chrono, args: string, now: number, zone: string): { at: number; length: number } | undefined {
  const reference = { instant: new Date(now), timezone: offsetMinutes(now, zone) };
  const [result] = chrono.parse(args, reference, { forwardDate: true });
  if (!result || args.slice(0, result.index).trim()) return undefined;
  let at = result.start.date().getTime();
  // chrono reads the phrase with today's UTC offset; a stated hour across a daylight-saving change keeps its wall time.
  if (result.start.isCertain('hour')) at -= (offsetMinutes(at, zone) - reference.timezone) * 60_000;
  return { at, length: result.index + result.text.length };
}

/** `every day 07:00`, `every monday 09:00`, `every weekday 8:30`, `every "0 9 * * 1"` → a cron pattern. */
function repeating(args: string, now: number, zone: string): { schedule: Schedule; text: string } | { error: string } {
  const example = 'for example .remind every day 07:00 stretch, .remind every monday 09:00 standup, or a cron pattern in quotes: .remind every "0 9 * * 1" standup';
  const quoted = splitQuoted(args);
  let cron: string;
  let label: string;
  let text: string;
  if (quoted) {
    cron = quoted.head;
    label = `on the schedule "${cron}"`;
    text = quoted.rest;
  } else {
    const match = /^(day|daily|weekday|weekdays|(?:sun|mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?)(?:day)?)\s+(?:at\s+)?(\d{1,2})[:.](\d{2})(?=\s|$)\s*([\s\S]*)$/i.exec(args);
    if (!match) return { error: `I could not read when it repeats: ${example}.` };
    const [hour, minute] = [Number(match[2]), Number(match[3])];
    if (!validClock(hour, minute)) return { error: `${match[2]}:${match[3]} is not a time of day: use HH:MM from 00:00 to 23:59, ${example}.` };
    const word = match[1].toLowerCase();
    const time = `${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}`;
    if (word === 'day' || word === 'daily') {
      cron = `${minute} ${hour} * * *`;
      label = `every day at ${time}`;
    } else if (word.startsWith('weekday')) {
      cron = `${minute} ${hour} * * 1-5`;
      label = `every weekday (Mon–Fri) at ${time}`;
    } else {
      const day = DAYS.findIndex((d) => d.startsWith(word.slice(0, 3)));
      cron = `${minute} ${hour} * * ${day}`;
      label = `every ${DAYS[day][0].toUpperCase()}${DAYS[day].slice(1)} at ${time}`;
    }
    text = match[4];
  }
  let next: Date | null;
  try {
    next = new Cron(cron, { timezone: zone }).nextRun(new Date(now));
  } catch (err) {
    return { error: `"${cron}" is not a cron pattern I can read (${(err as Error).message.replace(/^CronPattern: /, '')}): ${example}.` };
  }
  if (!next) return { error: `"${cron}" never comes round again: ${example}.` };
  return { schedule: { kind: 'repeat', cron, label, next: next.getTime() }, text };
}

/**
 * Reads `<when> <text>` relative to `now`, in `zone`. Quotes force where the time ends.
 *
 * @example parseReminder('10m tea', Date.now(), 'Asia/Jakarta') // resolves to { ok: true, schedule: { kind: 'once', at }, text: 'tea' }
 */
export async function parseReminder(args: string, now: number, zone: string): Promise<Parsed> {
  const chrono = await loadChrono();
  const input = args.trim();
  if (!input) return { ok: false, error: `Tell me when and what, ${EXAMPLES}.` };
  const every = /^every\s+([\s\S]*)$/i.exec(input);
  if (every) {
    const result = repeating(every[1].trim(), now, zone);
    if ('error' in result) return { ok: false, error: result.error };
    return finish(result.schedule, result.text);
  }
  const quoted = splitQuoted(input);
  if (quoted) {
    const found = exactTime(quoted.head, now, zone) ?? naturalTime(chrono, quoted.head, now, zone);
    if (found && 'error' in found) return { ok: false, error: found.error };
    if (!found || quoted.head.slice(found.length).trim()) return { ok: false, error: `I could not read "${quoted.head}" as a time, ${EXAMPLES}.` };
    return once(found.at, quoted.rest, now, zone);
  }
  const found = exactTime(input, now, zone) ?? naturalTime(chrono, input, now, zone);
  if (!found) return { ok: false, error: `I could not read a time at the start of "${input.slice(0, 60)}", ${EXAMPLES}.` };
  if ('error' in found) return { ok: false, error: found.error };
  return once(found.at, input.slice(found.length), now, zone);
}

function once(at: number, rest: string, now: number, zone: string): Parsed {
  if (at <= now) {
    return { ok: false, error: `${formatLocal(at, zone)} (${zone}) has already passed: give a time in the future, ${EXAMPLES}.` };
  }
  return finish({ kind: 'once', at }, rest);
}

function finish(schedule: Schedule, rest: string): Parsed {
  // "remind me in 2 hours to call mom": the joining word is not part of what to remind.
  const text = rest.trim().replace(/^(?:to|that|about|:|-|–|—)\s+/i, '').trim();
  if (!text) return { ok: false, error: 'What should I remind you of? Put it after the time, for example .remind 10m take the tea out.' };
  return { ok: true, schedule, text };
}

/** The shortest gap between the next few runs of a cron pattern, in ms. */
export function shortestGap(cron: string, zone: string, from: number): number {
  const runs = new Cron(cron, { timezone: zone }).nextRuns(12, new Date(from)).map((d) => d.getTime());
  let gap = Infinity;
  for (let i = 1; i < runs.length; i++) gap = Math.min(gap, runs[i] - runs[i - 1]);
  return gap;
}

/** The next run of a cron pattern strictly after `after`. */
export function nextRun(cron: string, zone: string, after: number): number | undefined {
  return new Cron(cron, { timezone: zone }).nextRun(new Date(after))?.getTime();
}
