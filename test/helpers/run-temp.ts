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
