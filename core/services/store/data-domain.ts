import { renameSync } from 'node:fs';
import path from 'node:path';
import { DataHealth } from './data-health.js';

/**
 * The write gate an online backup closes while it copies a data folder: writes started before wait to finish, writes
 * asked for meanwhile wait (in memory, in order) until it opens again. Nothing fails; replies go on.
 */
export class WriteGate {
  private gate: Promise<void> | undefined;
  private inFlight = 0;
  private drained: Array<() => void> = [];
  /** Writes waiting at the closed gate now, and whenWaiting() callers to wake as that number changes. */
  private waitingNow = 0;
  private waitWatchers: Array<() => void> = [];

  /** True while a backup holds the writes. */
  get closed(): boolean {
    return this.gate !== undefined;
  }

  /** Waits while a backup holds the writes, then counts this write as in flight. */
  async enter(): Promise<void> {
    if (this.gate) {
      this.waitingNow++;
      for (const wake of this.waitWatchers.splice(0)) wake();
      try {
        while (this.gate) await this.gate;
      } finally {
        this.waitingNow--;
      }
    }
    this.inFlight++;
  }

  /** Resolves once `count` writes wait at the closed gate (a test's proof that they were held, not merely slow). */
  async whenWaiting(count: number): Promise<void> {
    while (this.waitingNow < count) await new Promise<void>((resolve) => this.waitWatchers.push(resolve));
  }

  /** A write (started with enter) ended. */
  leave(): void {
    if (--this.inFlight === 0) for (const wake of this.drained.splice(0)) wake();
  }

  /** Holds every write: resolves once the writes in flight have finished, with the function that lets writes go on. */
  async hold(): Promise<() => void> {
    while (this.gate) await this.gate;
    let open!: () => void;
    this.gate = new Promise<void>((resolve) => (open = resolve));
    if (this.inFlight > 0) await new Promise<void>((resolve) => this.drained.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.gate = undefined;
      open();
    };
  }
}

/** Something with changes not yet on disk that a flush of the whole data folder must write (a store document). */
export interface Unsaved {
  flush(): Promise<void>;
  /** Resolves once its scheduled writes happened on their own (never forced). */
  whenIdle(): Promise<void>;
  /** Resolves once no write is under way (one scheduled for later is not waited for). */
  whenNotWriting(): Promise<void>;
}

/**
 * What one running app keeps about its data folder: its health (set-aside files, failed writes), its write gate (an
 * online backup holds it), and the stores with changes not on disk yet (flushed before a backup and at stop). One
 * per app instance, never shared: two apps in one process over two folders hold, flush and report apart.
 *
 * Stores find the domain of a file by its path (`domainFor`), so plugin and transport stores need no wiring; a file
 * outside every registered folder belongs to a domain of its own (tests, tools run without an app).
 *
 * @example
 * const domain = new DataDomain(new DataHealth('data', log));
 * const off = registerDataDomain(domain);
 * const release = await domain.holdWrites(); // backup copies the folder
 * release(); off();
 */
export class DataDomain {
  readonly root: string;
  readonly gate = new WriteGate();
  /** Documents with changes not on disk yet (each adds and removes itself). */
  readonly unsaved = new Set<Unsaved>();
  /** Stores keeping writes in memory for a while outside documents (search logs), run by every flushAll. */
  readonly flushers = new Set<() => Promise<void>>();
  /** The same stores' waits for those writes to happen on their own (see whenIdle). */
  readonly idlers = new Set<() => Promise<void>>();

  constructor(readonly health: DataHealth) {
    this.root = path.resolve(health.root);
  }

  /** Writes everything pending in this folder (failures stay reported by each file's health). */
  async flushAll(): Promise<void> {
    await Promise.allSettled([...this.unsaved].map((doc) => doc.flush()).concat([...this.flushers].map((flush) => flush())));
  }

  /**
   * Resolves once every document of this folder with a change pending was written on its own, after its pause, and
   * the search logs' items added without waiting too (unlike flushAll, nothing is forced): what a test awaits to see
   * background writes instead of sleeping.
   */
  async whenIdle(): Promise<void> {
    for (;;) {
      const docs = [...this.unsaved];
      await Promise.all(docs.map((doc) => doc.whenIdle()));
      await Promise.all([...this.idlers].map((idle) => idle()));
      if ([...this.unsaved].every((doc) => docs.includes(doc))) return;
    }
  }

  /** Resolves once no document of this folder is being written (writes scheduled for later neither waited for nor started). */
  async whenNotWriting(): Promise<void> {
    await Promise.all([...this.unsaved].map((doc) => doc.whenNotWriting()));
  }

  /** Flushes everything, then holds every write until the returned function is called (an online backup). */
  async holdWrites(): Promise<() => void> {
    await this.flushAll();
    return this.gate.hold();
  }
}

const registry = new Map<string, DataDomain>();
/**
 * Files already looked up → their domain (a relative path as the cwd was then): a log append asks on every message,
 * and resolving the path costs ~2 µs where the append itself costs a few. Emptied whenever a domain comes or goes,
 * and when it grows large.
 */
const known = new Map<string, DataDomain>();
const KNOWN_MAX = 4096;
/** Files outside every registered data folder (tests, one-off tools). */
const unregistered = new DataDomain(new DataHealth('/'));

/**
 * Runs a synchronous write of `domain`'s data now, or, while a backup holds its writes, once it lets them go (in
 * order). A synchronous write needs no "in flight" count: a backup can never start in the middle of one. With `file`
 * (the store database), a failure of the database (an `SQLITE_*` code) is told to the data health and the next write
 * that succeeds its recovery; the result or the error is the caller's either way.
 *
 * @example await gatedWrite(domain, db.file, () => db.run('DELETE FROM t WHERE chat = ?', [chatId]));
 */
export function gatedWrite<R>(domain: DataDomain, file: string | undefined, run: () => R): Promise<R> {
  const reported = (): R => {
    if (file === undefined) return run();
    try {
      const result = run();
      domain.health.writeRecovered(file);
      return result;
    } catch (err) {
      if ((err as { code?: string }).code?.startsWith('SQLITE_')) domain.health.writeFailed(file, err);
      throw err;
    }
  };
  const gate = domain.gate;
  if (!gate.closed) {
    try {
      return Promise.resolve(reported());
    } catch (err) {
      return Promise.reject(err);
    }
  }
  return gate.enter().then(() => {
    try {
      return reported();
    } finally {
      gate.leave();
    }
  });
}

/** Makes `domain` the one files under its root belong to (the app does this at start); returns the undo. */
export function registerDataDomain(domain: DataDomain): () => void {
  registry.set(domain.root, domain);
  known.clear();
  return () => {
    if (registry.get(domain.root) === domain) registry.delete(domain.root);
    known.clear();
  };
}

/** The domain whose folder holds `file` (the longest registered root that contains it). */
export function domainFor(file: string): DataDomain {
  if (registry.size === 0) return unregistered;
  const hit = known.get(file);
  if (hit) return hit;
  const found = lookup(file);
  if (known.size >= KNOWN_MAX) known.clear();
  known.set(file, found);
  return found;
}

function lookup(file: string): DataDomain {
  const full = path.resolve(file);
  let best: DataDomain | undefined;
  for (const [root, domain] of registry) {
    if ((full === root || full.startsWith(root + path.sep)) && (!best || root.length > best.root.length)) best = domain;
  }
  return best ?? unregistered;
}

/** The domain of files outside every registered folder. */
export function unregisteredDomain(): DataDomain {
  return unregistered;
}

/**
 * Makes `health` the one stores under its root report to, in a domain of its own (tests that need only the health).
 * Returns the undo.
 */
export function registerDataHealth(health: DataHealth): () => void {
  return registerDataDomain(new DataDomain(health));
}

/** The health of the data folder a file lives in. */
export function healthFor(file: string): DataHealth {
  return domainFor(file).health;
}

/**
 * Moves a file of an earlier version that cannot be taken in aside, its bytes kept (`<file>.corrupt-<time>`), and names
 * it in its data folder's health; one that cannot be moved either is left untouched, and said so.
 */
export function setAsideUnreadable(file: string, reason: string): void {
  const health = domainFor(file).health;
  const movedTo = `${file}.corrupt-${Date.now()}`;
  try {
    renameSync(file, movedTo);
  } catch (err) {
    health.corrupt(file, file, `${reason}; could not move it aside (${(err as Error).message}), so it is left untouched`);
    return;
  }
  health.corrupt(file, movedTo, reason);
}
