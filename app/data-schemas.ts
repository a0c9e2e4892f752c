import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Settings } from '../core/config/settings.js';
import { discoverPlugins } from '../core/plugin/discover.js';
import { DATA_SCHEMAS, type DataSchema } from '../core/store/schemas.js';

/**
 * Every kind of data file this installation writes: the core's and those the plugins declare in `dataFiles` (the
 * plugin folders beside this build, and the packages config.json names), for the backup manifest and the restore
 * check. A plugin that cannot be loaded is left out (the bot's start log says why).
 */
export async function installedDataSchemas(settings: Settings, cwd = process.cwd()): Promise<DataSchema[]> {
  const pluginsDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'plugins');
  let packages: string[] = [];
  // Read as it is: the backup never creates or rewrites config.json, and a broken one must not stop a backup.
  if (existsSync(settings.configFile)) {
    try {
      const raw = JSON.parse(readFileSync(settings.configFile, 'utf8')) as { pluginPackages?: unknown };
      if (Array.isArray(raw.pluginPackages)) packages = raw.pluginPackages.filter((p): p is string => typeof p === 'string');
    } catch {
      packages = [];
    }
  }
  const { plugins } = await discoverPlugins(pluginsDir, packages, cwd);
  const byName = new Map(DATA_SCHEMAS.map((s) => [s.name, s]));
  for (const plugin of plugins) for (const file of plugin.dataFiles ?? []) if (!byName.has(file.schema.name)) byName.set(file.schema.name, file.schema);
  return [...byName.values()];
}
