/**
 * Preloaded into a spawned bot (see {@link clockAhead}): `Date` reads `TEST_CLOCK_AHEAD_MS` later than the wall clock,
 * so a start runs as if that much time had passed since the last run and what fell due while the bot was down is due
 * at once, without the test waiting on the wall clock. Timers keep real time (only the date moves).
 */
const ahead = Number(process.env.TEST_CLOCK_AHEAD_MS ?? 0);
if (ahead) {
  const RealDate = Date;
  class AheadDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(RealDate.now() + ahead);
      else super(...(args as [string | number | Date]));
    }
    static override now(): number {
      return RealDate.now() + ahead;
    }
  }
  globalThis.Date = AheadDate as DateConstructor;
}

/** The environment that starts a spawned bot `ms` in the future (its `Date` only). */
export function clockAhead(ms: number): Record<string, string> {
  return { NODE_OPTIONS: `--import=${import.meta.url}`, TEST_CLOCK_AHEAD_MS: String(ms) };
}

/**
 * The same in this process, for a bot run here (test/helpers/console-chat.ts): `Date` reads `ms` later until the
 * returned function puts the real one back.
 */
export function dateAhead(ms: number): () => void {
  const RealDate = globalThis.Date;
  class AheadDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(RealDate.now() + ms);
      else super(...(args as [string | number | Date]));
    }
    static override now(): number {
      return RealDate.now() + ms;
    }
  }
  globalThis.Date = AheadDate as DateConstructor;
  return () => {
    globalThis.Date = RealDate;
  };
}
