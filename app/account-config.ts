import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CORE_CONFIG_KEYS, ConfigError, loadConfigFile, type LoadedConfig } from '../core/services/config/config-file.js';
import { CORE_SETTING_NAMES, envFileProblems } from '../core/services/config/env-file-check.js';
import type { BotConfig } from '../core/services/config/schema.js';
import type { Settings } from '../core/services/config/settings.js';
import type { Logger } from '../core/services/log/logger.js';
import { withCorePlugins } from '../core/kernel/core-plugins/index.js';
import { discoverPlugins, type DiscoveryResult } from '../core/kernel/plugin/discover.js';
import { optionProblems } from '../core/kernel/plugin/options.js';
import type { Plugin } from '../core/kernel/plugin/spec.js';

// A CommonJS package, required: an ES import of one has Node parse its source for export names and wrap it (~5 ms of
// a start for each such package).
const { closest, distance } = createRequire(import.meta.url)('fastest-levenshtein') as typeof import('fastest-levenshtein');

/**
 * config.json as start reads it, in one place: `npm start`, `npm run chat` and `npm run doctor` all call
 * `loadAccountConfig`, so the doctor refuses exactly what start refuses, in the same words.
 */

/** The folder the built (or source) core lives in; plugins are found next to it. */
export function defaultPluginsDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return path.join(here, '..', 'plugins');
}

/**
 * Drops options that plugins moved to environment settings (executable paths, sandbox and guard switches) from an
 * old config.json: their values are ignored, the start log names each one and the setting that replaces it.
 */
function dropMovedOptions(plugins: Plugin[], config: BotConfig, log: Logger | undefined): void {
  for (const plugin of plugins) {
    const section = config.plugins[plugin.name] as Record<string, unknown> | undefined;
    if (!section || !plugin.movedToEnv) continue;
    const found = Object.keys(plugin.movedToEnv).filter((key) => key in section);
    if (!found.length) continue;
    for (const key of found) delete section[key];
    const names = found.map((key) => `plugins.${plugin.name}.${key} → ${plugin.movedToEnv![key]}`);
    log?.warn(
      { ignored: found.map((key) => `plugins.${plugin.name}.${key}`) },
      `config.json still has settings that can run code or open a hole; they are read from the environment only now, so these values are IGNORED: ${names.join(', ')}. Set them in .env if you need them, and remove them from config.json.`,
    );
  }
}

/** A top-level key of config.json that neither the core nor a plugin's `configSection` owns is a mistake, as before. */
function unclaimedSections(plugins: Plugin[], config: BotConfig): string[] {
  const claimed = plugins.map((p) => p.configSection?.key).filter((key): key is string => Boolean(key));
  const keys = [...CORE_CONFIG_KEYS, ...claimed];
  return Object.keys(config.sections)
    .filter((key) => !claimed.includes(key))
    .map((key) => {
      const meant = closest(key, keys);
      return `${key}: unknown field${distance(key.toLowerCase(), meant.toLowerCase()) <= 2 ? ` (did you mean "${meant}"?)` : ''}`;
    });
}

/** Every plugin's config.json section against its options schema (defaults filled in first, as they are at use). */
function pluginOptionProblems(plugins: Plugin[], config: BotConfig): string[] {
  const problems: string[] = [];
  for (const plugin of plugins) {
    const section = config.plugins[plugin.name];
    if (!section || !plugin.optionsSchema) continue;
    const { enabled: _e, access: _a, ...options } = section;
    problems.push(...optionProblems(plugin.optionsSchema, structuredClone(options), `plugins.${plugin.name}`));
  }
  return problems;
}

export interface AccountConfig {
  loaded: LoadedConfig;
  discovery: DiscoveryResult;
  /** The core's plugins first, then the discovered ones. */
  plugins: Plugin[];
}

/**
 * Reads config.json (created from config.example.json when missing: the doctor checks it exists first), finds the
 * plugins it names, and checks it whole: JSON with line and column, the core's schema, each plugin's options and the
 * top-level sections plugins own. Throws ConfigError listing every problem; `Cannot start:` prints it.
 */
export async function loadAccountConfig(options: { cwd: string; settings: Settings; plugins?: Plugin[]; pluginsDir?: string; log?: Logger }): Promise<AccountConfig> {
  const { cwd, settings, log } = options;
  // Top-level keys that are not the core's may be plugins' own sections: refused below unless a plugin declares them.
  const loaded = await loadConfigFile(cwd, settings.configFile, { sectionKeys: 'any' });
  const config = loaded.config;
  const discovery = options.plugins
    ? { plugins: options.plugins, failures: [], installed: [] }
    : await discoverPlugins(options.pluginsDir ?? defaultPluginsDir(), config.pluginPackages, cwd, log);
  const plugins = withCorePlugins(discovery.plugins, discovery.failures);
  dropMovedOptions(plugins, config, log);
  const problems = [...pluginOptionProblems(plugins, config), ...unclaimedSections(plugins, config)];
  if (problems.length) throw new ConfigError(loaded.file, problems);
  return { loaded, discovery, plugins };
}

/** Every name the bot reads from `.env`: the core's and the plugins' declared settings. */
export function knownSettingNames(plugins: readonly Plugin[]): string[] {
  return [...CORE_SETTING_NAMES, ...plugins.flatMap((p) => (p.settings ?? []).map((s) => s.name))];
}

/** Names in the account's `.env` the bot does not read, and lines that are not settings (see `envFileProblems`). */
export function envFileWarnings(settings: Settings, plugins: readonly Plugin[]): string[] {
  if (!existsSync(settings.envFile)) return [];
  let text: string;
  try {
    text = readFileSync(settings.envFile, 'utf8');
  } catch {
    return [];
  }
  return envFileProblems(text, knownSettingNames(plugins));
}
