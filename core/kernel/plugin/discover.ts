import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Logger } from '../../services/log/logger.js';
import { isPlugin, pluginBrand, CONTRACT_VERSION } from './contract.js';
import { pluginErrors } from './errors.js';
import type { Plugin } from './spec.js';

export interface DiscoveryResult {
  plugins: Plugin[];
  /** Plugins that could not be loaded, with the reason (reported in the start log; the bot still starts). */
  failures: Array<{ source: string; reason: string }>;
  /** Names of the plugins installed by the owner (from `plugins.local/` or `pluginPackages`), each off until enabled. */
  installed: string[];
}

/** The folder of locally installed plugins, beside the checkout's `plugins/` but git-ignored: installing touches nothing tracked. */
export const LOCAL_PLUGINS_DIR = 'plugins.local';

/** Where a plugin's module is, or why there is none (PLUGIN_NOT_FOUND's detail). */
type Located = { file: string } | { missing: string };

/**
 * The entry file of a package folder as Node's `import` would pick it: `exports` with the conditions an ES module
 * import matches (import, node, default — an ESM-only map is fine), else `main`, else `index.js`.
 */
function packageEntry(dir: string): Located {
  const manifest = path.join(dir, 'package.json');
  if (!existsSync(manifest)) {
    if (existsSync(path.join(dir, 'index.js'))) return { file: path.join(dir, 'index.js') };
    const ts = existsSync(path.join(dir, 'index.ts'));
    return {
      missing: ts
        ? 'holds index.ts but no built index.js: compile the plugin (tsc) in its folder, or give it a package.json whose exports name the built file'
        : 'has neither a package.json nor an index.js',
    };
  }
  let pkg: Record<string, unknown>;
  try {
    pkg = JSON.parse(readFileSync(manifest, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    return { missing: `has a package.json that is not valid JSON (${(err as Error).message})` };
  }
  let relative: string | undefined;
  try {
    // Required here, with the first plugin package found: a start with none (the usual one) never needs it.
    const { exports: exportsOf, legacy: legacyEntryOf } = createRequire(import.meta.url)('resolve.exports') as typeof import('resolve.exports');
    relative = pkg.exports !== undefined ? exportsOf(pkg, '.', { conditions: ['node', 'import'], unsafe: false })?.[0] : (legacyEntryOf(pkg, { browser: false, fields: ['main'] }) as string | undefined);
  } catch (err) {
    return { missing: `has a package.json whose exports offer no entry an ES module import can use (${(err as Error).message})` };
  }
  const file = path.join(dir, relative ?? 'index.js');
  if (!existsSync(file)) return { missing: `names ${path.relative(dir, file)} as its entry, which does not exist: build the plugin (e.g. npm run build in its folder)` };
  return { file };
}

/** A package by name, looked up in node_modules from `cwd` upwards as Node does. */
function locatePackage(name: string, cwd: string): Located {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return packageEntry(candidate);
    if (path.dirname(dir) === dir) break;
  }
  return { missing: `is not installed: run npm install --no-save ${name} in the bot's folder (or put the plugin's folder in ${LOCAL_PLUGINS_DIR}/)` };
}

/** Imports a located plugin; each way it can fail is its own coded error, and none stops the other plugins. */
async function load(source: string, located: Located, failures: DiscoveryResult['failures']): Promise<Plugin | undefined> {
  if ('missing' in located) {
    failures.push({ source, reason: pluginErrors.notFound(source, located.missing).message });
    return undefined;
  }
  let mod: { default?: unknown };
  try {
    mod = (await import(pathToFileURL(located.file).href)) as { default?: unknown };
  } catch (err) {
    failures.push({ source, reason: pluginErrors.notImportable(source, located.file, err, err instanceof SyntaxError ? syntaxErrorPlace(located.file) : undefined).message });
    return undefined;
  }
  if (isPlugin(mod.default)) return mod.default;
  failures.push({ source, reason: pluginErrors.notAPlugin(source, notAPlugin(mod.default)).message });
  return undefined;
}

/**
 * Where a syntax error of the entry file is ("/path/index.js:3"): Node 20 leaves the place out of an ES module's
 * SyntaxError, so the file is checked again by `node --check` (only after an import failed that way). Undefined
 * when the entry itself parses (the error is in a module it imports).
 */
function syntaxErrorPlace(file: string): string | undefined {
  const check = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8', timeout: 10_000 });
  return /^(?:file:\/\/)?(\S+:\d+)$/m.exec(check.stderr ?? '')?.[1];
}

/** What a default export that is not a plugin is, for the error. */
function notAPlugin(value: unknown): string {
  if (value === undefined) return 'has no default export';
  const brand = pluginBrand(value);
  if (brand !== undefined) {
    return `exports a plugin made by definePlugin for plugin contract ${String(brand)}, but this bot runs contract ${CONTRACT_VERSION}: rebuild it against this bot's @wa-assistant-bot/plugin-api`;
  }
  const fields = value && typeof value === 'object' ? value : {};
  // The first contract's plain objects ({ name, triggers, handle }): said by name, they were plugins once.
  if ('triggers' in fields || 'handle' in fields) return 'exports a plugin written to the old contract (triggers and handle), which this bot no longer runs';
  if ('name' in fields && 'description' in fields) return 'exports a plain object, not a plugin made by definePlugin';
  return `exports ${value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value}, not a plugin`;
}

/** The sub-folders of `dir` (symlinks to folders count: `ln -s ~/src/my-plugin plugins.local/`), sorted, hidden ones skipped. */
async function folders(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const names = (await readdir(dir)).filter((name) => !name.startsWith('.')).sort();
  return names.filter((name) => {
    try {
      return statSync(path.join(dir, name)).isDirectory();
    } catch {
      return false; // a dangling symlink: nothing there to load (and nothing to report as a plugin)
    }
  });
}

/**
 * Finds plugins: every `plugins/<name>/index.(js|ts)` under `pluginsDir` (dropping a folder in is enough), then every
 * folder of `localDir` (`plugins.local/<name>/`: a plugin's own folder or unpacked package, built — a package.json
 * whose `exports`/`main` names the built entry, or an index.js), then the packages named in config `pluginPackages`
 * (resolved from `cwd`). A plugin that fails to load is reported with a coded reason — PLUGIN_NOT_FOUND,
 * PLUGIN_NOT_IMPORTABLE (with the cause), PLUGIN_NOT_A_PLUGIN — and never stops the others.
 * Two plugins with the same name: the second is refused, naming both sources.
 */
export async function discoverPlugins(pluginsDir: string, packages: string[], cwd: string, log?: Logger, localDir = path.join(cwd, LOCAL_PLUGINS_DIR)): Promise<DiscoveryResult> {
  const plugins: Plugin[] = [];
  const failures: DiscoveryResult['failures'] = [];
  const sources = new Map<string, string>();
  const installed: string[] = [];
  const add = (found: Plugin | undefined, source: string, byOwner = false) => {
    if (!found) return;
    // Code the owner dropped in runs only once they say so (config.json or the dashboard), whatever it declares.
    const plugin = byOwner ? Object.freeze({ ...found, enabledByDefault: false }) : found;
    const other = sources.get(plugin.name);
    if (other) {
      failures.push({ source, reason: pluginErrors.duplicateName(plugin.name, source, other).message });
      return;
    }
    sources.set(plugin.name, source);
    plugins.push(plugin);
    if (byOwner) installed.push(plugin.name);
  };

  const bundled = await Promise.all(
    (await folders(pluginsDir)).map(async (dir) => {
      const js = path.join(pluginsDir, dir, 'index.js');
      const ts = path.join(pluginsDir, dir, 'index.ts');
      const file = existsSync(js) ? js : existsSync(ts) ? ts : undefined;
      if (!file) return undefined; // not a plugin folder (e.g. shared files of a build)
      return { source: `plugins/${dir}`, plugin: await load(`plugins/${dir}`, { file }, failures) };
    }),
  );
  for (const item of bundled) if (item) add(item.plugin, item.source);

  for (const dir of await folders(localDir)) {
    const source = `${LOCAL_PLUGINS_DIR}/${dir}`;
    add(await load(source, packageEntry(path.join(localDir, dir)), failures), source, true);
  }

  for (const name of packages) add(await load(`package ${name}`, locatePackage(name, cwd), failures), `package ${name}`, true);
  for (const f of failures) log?.error(f, 'plugin could not be loaded');
  return { plugins, failures, installed };
}
