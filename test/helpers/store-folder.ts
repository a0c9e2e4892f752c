import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { closeDatabase } from '../../core/services/store/database.js';

export interface StoreFolder {
  /** The data folder of the test running now (a new one for each test). */
  readonly dir: string;
}

export interface StoreFolderOptions {
  /** The temp folder's name prefix (it says whose folder a kept run, KEEP_TEST_TMP=1, holds). */
  prefix?: string;
  /** The data folder is this subfolder of the temp folder (`<temp>/data`), for a test whose data folder's parent must be its own too. */
  inside?: string;
  /** What the test still holds on the folder, closed first (a store's pending writes), before its database is closed. */
  closing?: () => unknown;
}

/**
 * A data folder of its own for each test of the suite this is called in: made before each test (before the hooks the
 * suite declares after this call); after it, what `closing` names closed, the folder's store database closed and the
 * folder removed. The database of a folder is opened once per process and shared (`databaseFor`): a test that leaves
 * it open keeps a file open in a removed folder, in a mocha worker that runs many files one after another.
 */
export function storeFolderPerTest(options: StoreFolderOptions = {}): StoreFolder {
  let root: string | undefined;
  let dir: string | undefined;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), options.prefix ?? 'wabot-store-'));
    dir = options.inside ? path.join(root, options.inside) : root;
    if (options.inside) await mkdir(dir);
  });
  afterEach(async () => {
    if (!root || !dir) return;
    try {
      await options.closing?.();
    } finally {
      closeDatabase(dir);
      await rm(root, { recursive: true, force: true });
      root = dir = undefined;
    }
  });
  return {
    get dir(): string {
      if (!dir) throw new Error('storeFolderPerTest: the folder exists only while a test runs (in it and its each-test hooks)');
      return dir;
    },
  };
}
