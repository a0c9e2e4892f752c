import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import type { PluginFiles } from '../plugin/ports.js';

/** Top-level names of DATA_DIR that are the core's own: no plugin folder may be, or be inside, one of them. */
const CORE_PLACES = /^(store\.db.*|session_auth|migrated|work|logs|whatsapp|history|memory|access|\..*)$/;

/**
 * `host.files` of one plugin over a data folder: named folders of its files, refused outside DATA_DIR or in the core's
 * own places, and per-job work folders under `work/<plugin>/`, that folder emptied at the first job of each run.
 *
 * @example
 * const files = pluginFiles(settings.dataDir, 'mp3');
 * const work = await files.work();
 * try { ... } finally { await work.remove(); }
 */
export function pluginFiles(dataDir: string, plugin: string): PluginFiles {
  const root = path.resolve(dataDir);
  const workRoot = path.join(root, 'work', plugin);
  let cleared: Promise<void> | undefined;
  return {
    folder(name) {
      const parts = typeof name === 'string' ? name.split('/') : [];
      if (!parts.length || parts.some((p) => !p || p === '.' || p === '..' || p.includes('\\')) || CORE_PLACES.test(parts[0]!)) {
        throw new TypeError(`plugin "${plugin}": host.files.folder(${JSON.stringify(name)}) must name a folder of its own under DATA_DIR (relative, no "." or ".." parts, not a place of the core's)`);
      }
      return path.join(root, ...parts);
    },
    async work() {
      // What a crash left from an earlier run goes before the first job of this one.
      cleared ??= rm(workRoot, { recursive: true, force: true });
      await cleared;
      await mkdir(workRoot, { recursive: true, mode: 0o700 });
      const dir = await mkdtemp(path.join(workRoot, 'job-'));
      return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
    },
  };
}
