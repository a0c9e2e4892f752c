/**
 * Time zones by IANA name (`Asia/Jakarta`), with nothing but `Intl`: Node ships the full time zone database, so
 * validation, offsets and local formatting need no library.
 */

/** The zone this machine runs in (`TZ`, else the system's). */
export function machineZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** The canonical name of a zone (`europe/berlin` → `Europe/Berlin`), or undefined when Intl does not know it. */
export function canonicalZone(name: string): string | undefined {
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > 64) return undefined;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: trimmed }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** 0 = Sunday. */
  weekday: number;
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const formatters = new Map<string, Intl.DateTimeFormat>();

/** The wall-clock time at `instant` in `zone`. */
export function wallTime(instant: number, zone: string): WallTime {
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      weekday: 'short',
    });
    formatters.set(zone, format);
  }
  const parts: Record<string, string> = {};
  for (const p of format.formatToParts(new Date(instant))) parts[p.type] = p.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour) % 24,
    minute: Number(parts.minute),
    second: Number(parts.second),
    weekday: WEEKDAYS.indexOf(parts.weekday ?? ''),
  };
}

/** Minutes `zone` is ahead of UTC at `instant` (Jakarta: 420). */
export function offsetMinutes(instant: number, zone: string): number {
  const w = wallTime(instant, zone);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return Math.round((asUtc - Math.floor(instant / 1000) * 1000) / 60_000);
}

/**
 * The instant a wall-clock time in `zone` names. A time skipped by a daylight-saving jump lands just after it; a
 * repeated hour takes its first occurrence.
 */
export function instantOf(zone: string, year: number, month: number, day: number, hour: number, minute: number, second = 0): number {
  const asUtc = Date.UTC(year, month - 1, day, hour, minute, second);
  let guess = asUtc - offsetMinutes(asUtc, zone) * 60_000;
  // One correction settles it: the offset at the first guess may differ from the one at the answer (DST edge).
  guess = asUtc - offsetMinutes(guess, zone) * 60_000;
  return guess;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** `Mon 2026-11-23 09:00` (seconds shown when not zero) in `zone`. */
export function formatLocal(instant: number, zone: string): string {
  const w = wallTime(instant, zone);
  const time = `${pad(w.hour)}:${pad(w.minute)}${w.second ? `:${pad(w.second)}` : ''}`;
  return `${WEEKDAYS[w.weekday]} ${w.year}-${pad(w.month)}-${pad(w.day)} ${time}`;
}

/** `2 h 5 min`, `40 s`, `3 days 2 h`: how long, in words a chat reads easily. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const days = Math.floor(s / 86_400);
  const hours = Math.floor((s % 86_400) / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  if (days) return `${days} day${days > 1 ? 's' : ''}${hours ? ` ${hours} h` : ''}`;
  if (hours) return `${hours} h${minutes ? ` ${minutes} min` : ''}`;
  if (minutes) return `${minutes} min`;
  return `${s} s`;
}
