import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Logger } from '../../services/log/logger.js';
import { isPlugin } from './contract.js';
import { pluginErrors } from './errors.js';
import type { Plugin } from './types.js';

export interface DiscoveryResult {
  plugins: Plugin[];
  /** Plugins that could not be loaded, with the reason (reported in the start log; the bot still starts). */
  failures: Array<{ source: string; reason: string }>;
}

async function loadModule(specifier: string, source: string, failures: DiscoveryResult['failures']): Promise<Plugin | undefined> {
  try {
    const mod = (await import(specifier)) as { default?: unknown };
    if (isPlugin(mod.default)) return mod.default;
    failures.push({ source, reason: pluginErrors.notAPlugin(source, notAPlugin(mod.default)).message });
    return undefined;
  } catch (err) {
    failures.push({ source, reason: (err as Error).message.split('\n')[0] });
    return undefined;
  }
}

/** What a default export that is not a plugin is, for the error. */
function notAPlugin(value: unknown): string {
  if (value === undefined) return 'has no default export';
  const fields = value && typeof value === 'object' ? value : {};
  // The first contract's plain objects ({ name, triggers, handle }): said by name, they were plugins once.
  if ('triggers' in fields || 'handle' in fields) return 'exports a plugin written to the old contract (triggers and handle), which this bot no longer runs';
  if ('name' in fields && 'description' in fields) return 'exports a plain object, not a plugin made by definePlugin';
  return `exports ${value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value}, not a plugin`;
}

/**
 * Finds plugins: every `plugins/<name>/index.(js|ts)` under `pluginsDir` (dropping a folder in is enough), then the
 * packages named in config `pluginPackages` (resolved from `cwd`). A plugin that fails to load is reported, not fatal.
 * Two plugins with the same name: the second is refused, naming both sources.
 */
export async function discoverPlugins(pluginsDir: string, packages: string[], cwd: string, log?: Logger): Promise<DiscoveryResult> {
  const plugins: Plugin[] = [];
  const failures: DiscoveryResult['failures'] = [];
  const sources = new Map<string, string>();
  const add = (plugin: Plugin | undefined, source: string) => {
    if (!plugin) return;
    const other = sources.get(plugin.name);
    if (other) {
      failures.push({ source, reason: pluginErrors.duplicateName(plugin.name, source, other).message });
      return;
    }
    sources.set(plugin.name, source);
    plugins.push(plugin);
  };

  const entries = existsSync(pluginsDir) ? (await readdir(pluginsDir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name).sort() : [];
  const loaded = await Promise.all(
    entries.map(async (dir) => {
      const js = path.join(pluginsDir, dir, 'index.js');
      const ts = path.join(pluginsDir, dir, 'index.ts');
      const file = existsSync(js) ? js : existsSync(ts) ? ts : undefined;
      if (!file) return undefined;
      return { source: `plugins/${dir}`, plugin: await loadModule(pathToFileURL(file).href, `plugins/${dir}`, failures) };
    }),
  );
  for (const item of loaded) if (item) add(item.plugin, item.source);

  const require = createRequire(path.join(cwd, 'package.json'));
  for (const name of packages) {
    let resolved: string;
    try {
      resolved = pathToFileURL(require.resolve(name)).href;
    } catch {
      failures.push({ source: `package ${name}`, reason: `not installed: run npm install ${name}` });
      continue;
    }
    add(await loadModule(resolved, `package ${name}`, failures), `package ${name}`);
  }
  for (const f of failures) log?.error(f, 'plugin could not be loaded');
  return { plugins, failures };
}
