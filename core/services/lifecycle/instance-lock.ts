import { readFileSync, rmdirSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';

// A CommonJS package, required: an ES import of one has Node parse its source for export names and wrap it (~5 ms of
// a start for each such package).
const lockfile = createRequire(import.meta.url)('proper-lockfile') as typeof import('proper-lockfile');

/**
 * One instance per data folder. The lock is `proper-lockfile`'s (an atomic `mkdir`, kept fresh by its mtime, removed
 * on exit); beside it a small file names the holder's pid and host. A lock whose holder is a dead process on this
 * host is taken over at once (a `kill -9` leaves the folder behind); a holder on another host (a shared volume) is
 * trusted until its lock goes stale.
 *
 * Backups should skip both names in `INSTANCE_LOCK_FILES`.
 */
export const INSTANCE_LOCK_FILES = ['.instance.lock', '.instance.pid'] as const;

/** After this long without a refresh, a lock is stale whoever holds it. */
const STALE_MS = 10_000;

export interface InstanceHolder {
  /** The holder's process id; undefined when the lock was just being taken and the pid not yet written. */
  pid?: number;
  host?: string;
  since?: string;
}

/** Thrown when another live process holds the data folder. The message names the folder and the pid. */
export class InstanceLockedError extends Error {
  constructor(readonly dataDir: string, readonly holder: InstanceHolder) {
    super(
      `another instance${holder.pid ? ` (pid ${holder.pid}${holder.host && holder.host !== os.hostname() ? ` on ${holder.host}` : ''})` : ''} ` +
        `is already running on the data folder ${dataDir}. Stop it first, or give this one its own folder ` +
        `(e.g. DATA_DIR=data-console npm run chat).`,
    );
  }
}

function lockPath(dataDir: string): string {
  return path.join(dataDir, INSTANCE_LOCK_FILES[0]);
}

function pidPath(dataDir: string): string {
  return path.join(dataDir, INSTANCE_LOCK_FILES[1]);
}

function readHolder(dataDir: string): InstanceHolder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(pidPath(dataDir), 'utf8')) as InstanceHolder;
    return typeof parsed.pid === 'number' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** False only when we know for sure: same host, and no such process (or it is ourselves, e.g. pid 1 in a new container). */
function mayBeAlive(holder: InstanceHolder): boolean {
  if (holder.pid === undefined || (holder.host && holder.host !== os.hostname())) return true;
  if (holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Folders this process holds: a second take from inside the same process is refused, not mistaken for a stale lock. */
const heldHere = new Set<string>();

const lockOptions = (dataDir: string) => ({ lockfilePath: lockPath(dataDir), realpath: false, stale: STALE_MS });

/**
 * Who holds the data folder, when a live process does (for `npm run restore`, which must not write under a bot).
 *
 * @example
 * const holder = await readInstanceLock(settings.dataDir);
 * if (holder) throw new Error(`stop the bot (pid ${holder.pid}) first`);
 */
export async function readInstanceLock(dataDir: string): Promise<InstanceHolder | undefined> {
  const fresh = await lockfile.check(dataDir, lockOptions(dataDir)).catch(() => false);
  if (!fresh) return undefined;
  const holder = readHolder(dataDir) ?? {};
  if (heldHere.has(path.resolve(dataDir))) return holder;
  return mayBeAlive(holder) ? holder : undefined;
}

export interface AcquireOptions {
  /** Called when the lock was lost while running (its folder removed or taken over); default: ignored. */
  onCompromised?: (err: Error) => void;
}

/**
 * Takes the data folder for this process. Resolves with the release function; throws InstanceLockedError when a live
 * process holds it.
 *
 * @example
 * const release = await acquireInstanceLock(settings.dataDir);
 * try { await runTheBot(); } finally { await release(); }
 */
export async function acquireInstanceLock(dataDir: string, options: AcquireOptions = {}): Promise<() => Promise<void>> {
  const key = path.resolve(dataDir);
  if (heldHere.has(key)) throw new InstanceLockedError(dataDir, { pid: process.pid, host: os.hostname() });
  const lockOpts = { ...lockOptions(dataDir), onCompromised: options.onCompromised ?? (() => undefined) };
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(dataDir, lockOpts);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
    const holder = readHolder(dataDir) ?? (await pidWrittenSoon(dataDir));
    if (!holder || mayBeAlive(holder)) throw new InstanceLockedError(dataDir, holder ?? {});
    // The holder died without releasing (kill -9, power loss): its lock is ours to take.
    try {
      rmdirSync(lockPath(dataDir));
    } catch (removeErr) {
      if ((removeErr as NodeJS.ErrnoException).code !== 'ENOENT') throw removeErr;
    }
    try {
      release = await lockfile.lock(dataDir, lockOpts);
    } catch (again) {
      if ((again as NodeJS.ErrnoException).code === 'ELOCKED') throw new InstanceLockedError(dataDir, readHolder(dataDir) ?? {});
      throw again;
    }
  }
  const holder: InstanceHolder = { pid: process.pid, host: os.hostname(), since: new Date().toISOString() };
  writeFileSync(pidPath(dataDir), JSON.stringify(holder));
  heldHere.add(key);
  return async () => {
    if (!heldHere.delete(key)) return;
    if (readHolder(dataDir)?.pid === process.pid) rmSync(pidPath(dataDir), { force: true });
    await release().catch(() => undefined);
  };
}

/** A lock taken a moment ago may not have its pid file yet: wait for it briefly. */
async function pidWrittenSoon(dataDir: string): Promise<InstanceHolder | undefined> {
  for (let i = 0; i < 10; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const holder = readHolder(dataDir);
    if (holder) return holder;
  }
  return undefined;
}
