import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Settings } from '../core/services/config/settings.js';
import { discoverPlugins } from '../core/kernel/plugin/discover.js';
import { ACCESS_SCHEMA } from '../core/kernel/access/access-store.js';
import { BURST_TURNS_PATH, BURST_TURNS_SCHEMA } from '../core/kernel/pipeline/burst-turns.js';
import { DELETED_MESSAGES_PATH, DELETED_MESSAGES_SCHEMA } from '../core/kernel/pipeline/deleted-messages.js';
import { POLL_BOOK_PATH, POLL_BOOK_SCHEMA } from '../core/kernel/chat/polls.js';
import { DATA_SCHEMAS, HISTORY_SCHEMA, MEMORY_SCHEMA, type DataSchema } from '../core/services/store/schemas.js';
import { WHATSAPP_DATA_FILES } from '../core/adapters/whatsapp/whatsapp-data-schemas.js';

/** The plugin packages config.json names, read as it is: never created or rewritten, and a broken one names none. */
function pluginPackagesOf(settings: Settings): string[] {
  if (!existsSync(settings.configFile)) return [];
  try {
    const raw = JSON.parse(readFileSync(settings.configFile, 'utf8')) as { pluginPackages?: unknown };
    return Array.isArray(raw.pluginPackages) ? raw.pluginPackages.filter((p): p is string => typeof p === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * Every kind of data file this installation writes: the core's and those the plugins declare in `dataFiles` (the
 * plugin folders beside this build, and the packages config.json names), for the backup manifest and the restore
 * check. A plugin that cannot be loaded is left out (the bot's start log says why).
 */
export async function installedDataSchemas(settings: Settings, cwd = process.cwd()): Promise<DataSchema[]> {
  const pluginsDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'plugins');
  const { plugins } = await discoverPlugins(pluginsDir, pluginPackagesOf(settings), cwd);
  const byName = new Map([...DATA_SCHEMAS, ...WHATSAPP_DATA_FILES.map((f) => f.schema), ACCESS_SCHEMA, BURST_TURNS_SCHEMA, DELETED_MESSAGES_SCHEMA, POLL_BOOK_SCHEMA].map((s) => [s.name, s]));
  for (const plugin of plugins) for (const file of plugin.dataFiles ?? []) if (!byName.has(file.schema.name)) byName.set(file.schema.name, file.schema);
  return [...byName.values()];
}

/** The core's own data files, and the WhatsApp adapter's (relative to DATA_DIR; `<chat>` is one file per chat). */
const CORE_DATA_FILES: Array<{ path: string; schema: DataSchema }> = [
  { path: 'history/<chat>.json', schema: HISTORY_SCHEMA },
  { path: 'memory/<chat>.json', schema: MEMORY_SCHEMA },
  { path: BURST_TURNS_PATH, schema: BURST_TURNS_SCHEMA },
  { path: DELETED_MESSAGES_PATH, schema: DELETED_MESSAGES_SCHEMA },
  { path: POLL_BOOK_PATH, schema: POLL_BOOK_SCHEMA },
  ...WHATSAPP_DATA_FILES,
];

/**
 * Every data file this installation writes, with its schema: the core's and those the installed plugins declare
 * (`dataFiles`, where `<placeholder>` stands for one path segment), for `npm run doctor`.
 */
export async function installedDataFiles(settings: Settings, cwd = process.cwd()): Promise<Array<{ path: string; schema: DataSchema }>> {
  const pluginsDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'plugins');
  const { plugins } = await discoverPlugins(pluginsDir, pluginPackagesOf(settings), cwd);
  return [...CORE_DATA_FILES, ...plugins.flatMap((p) => (p.dataFiles ?? []).map((f) => ({ path: f.path, schema: f.schema })))];
}
