import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Mocha global fixture: every temp folder a test run makes (its own, the bots it starts, the children it spawns,
 * the jails' scratch) lands in one folder for the run, removed at the end. Without it each `npm test` left ~250
 * folders in /tmp for good. `KEEP_TEST_TMP=1` keeps the folder to look at after a failure.
 */
let runDir: string | undefined;

export function mochaGlobalSetup(): void {
  runDir = mkdtempSync(path.join(os.tmpdir(), 'wabot-tests-'));
  // The jail's unprivileged uid must pass through to its scratch folders, as it does through /tmp itself.
  chmodSync(runDir, 0o711);
  // os.tmpdir() reads TMPDIR on every call, and spawned children inherit it.
  process.env.TMPDIR = runDir;
}

export function mochaGlobalTeardown(): void {
  if (!runDir || process.env.KEEP_TEST_TMP === '1') return;
  try {
    rmSync(runDir, { recursive: true, force: true, maxRetries: 3 });
  } catch (err) {
    console.warn(`could not remove the test run's temp folder ${runDir}: ${(err as Error).message}`);
  }
}

/**
 * Mocha root hook: a test that leaves a fake clock installed fails, naming itself, and the real clock is put back.
 * Mocha's workers run many files one after another in one process, so a fake `Date` or `setInterval` left behind
 * freezes time for whatever file that worker runs next: a test far away then waits forever on a session that never
 * idles or a sweep that never runs, and only under the full suite's ordering (CI went red that way).
 */
const REAL_CLOCK = { Date, setTimeout, clearTimeout, setInterval, clearInterval, setImmediate, clearImmediate } as const;
type ClockName = keyof typeof REAL_CLOCK;
const realPerformanceNow = performance.now;

/** The clock functions that are not the real ones now. */
function fakedNow(): ClockName[] {
  const global = globalThis as unknown as Record<ClockName, unknown>;
  const faked = (Object.keys(REAL_CLOCK) as ClockName[]).filter((name) => global[name] !== REAL_CLOCK[name]);
  if (performance.now !== realPerformanceNow) faked.push('performance.now' as ClockName);
  return faked;
}

/** Puts the real clock back and says what was left, by whom. */
function restoreAndBlame(leaked: ClockName[], who: string): Error {
  const global = globalThis as unknown as Record<ClockName, unknown>;
  for (const name of leaked) {
    if (name === ('performance.now' as ClockName)) performance.now = realPerformanceNow;
    else global[name] = REAL_CLOCK[name];
  }
  return new Error(
    `${who} left a fake clock installed (${leaked.join(', ')}). Restore it in afterEach/after or in a finally, before ` +
      'anything that can throw: later test files in this worker would read a frozen clock.',
  );
}

// A clock a suite fakes in its `before` and restores in its `after` (the kit's `bot.useClock()` for a whole
// describe) is the suite's own: a test is blamed only for a fake it installed itself, the file for any fake left at
// its end (mocha runs the root hooks once per file in each parallel worker).
let fakedBeforeTest: ClockName[] = [];
export const mochaHooks = {
  beforeEach(): void {
    fakedBeforeTest = fakedNow();
  },
  afterEach(this: Mocha.Context): void {
    const leaked = fakedNow().filter((name) => !fakedBeforeTest.includes(name));
    if (leaked.length) throw restoreAndBlame(leaked, `"${this.currentTest?.fullTitle() ?? 'a test'}"`);
  },
  afterAll(): void {
    const leaked = fakedNow();
    if (leaked.length) throw restoreAndBlame(leaked, 'a suite of this file (its before/after hooks)');
  },
};
