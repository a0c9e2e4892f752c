import { PluginError } from '../../api/errors.js';

/**
 * The catalogue of plugin registration errors, in the Fastify manner: every error has a stable code, names both
 * sides of a clash and says the fix. The bot stays up: the plugin that caused the error stays off, and the start log
 * and the dashboard (`app.pluginFailures`) say why.
 *
 * @example
 * try { definePlugin(spec); } catch (err) { if (err instanceof PluginError && err.code === 'PLUGIN_BAD_OPTION_DEFAULT') … }
 */

/** The constructors of the catalogue, so every message is worded once. */
export const pluginErrors = {
  badDefinition: (plugin: string, detail: string) => new PluginError('PLUGIN_BAD_DEFINITION', plugin, `plugin "${plugin}": ${detail}`),
  /** What `setup` returned has a part the contract no longer has (`patterns`): said with what to write instead. */
  removedPart: (plugin: string, part: string, instead: string) =>
    new PluginError('PLUGIN_REMOVED_PART', plugin, `plugin "${plugin}" offers ${part}, which the plugin contract no longer has, so they would never run; ${instead}`),
  badOptionDefault: (plugin: string, problems: string[]) =>
    new PluginError(
      'PLUGIN_BAD_OPTION_DEFAULT',
      plugin,
      `plugin "${plugin}": its options are not valid with their defaults alone (${problems.join('; ')}); give every option a default that its own schema accepts, e.g. Type.Integer({ minimum: 1, default: 6 })`,
    ),
  duplicateName: (plugin: string, source: string, otherSource: string) =>
    new PluginError('PLUGIN_DUPLICATE_NAME', plugin, `a plugin named "${plugin}" from ${source} clashes with the one already loaded from ${otherSource}; rename one of them (the one from ${source} stays off)`),
  unknownNeed: (plugin: string, need: string, known: string[]) =>
    new PluginError(
      'PLUGIN_UNKNOWN_NEED',
      plugin,
      `plugin "${plugin}" needs "${need}", but no capability of that name exists (known: ${known.join(', ')}); fix the name in needs, or declare it in provides of the plugin that owns it`,
    ),
  duplicateCapability: (plugin: string, capability: string, owner: string) =>
    new PluginError('PLUGIN_DUPLICATE_CAPABILITY', plugin, `plugin "${plugin}" provides capability "${capability}", which ${owner} already provides; give yours another name, or need theirs instead`),
  duplicateTool: (plugin: string, tool: string, owner: string) =>
    new PluginError('PLUGIN_DUPLICATE_TOOL', plugin, `plugin "${plugin}" offers tool "${tool}", which ${owner} already offers to the model; rename the tool (e.g. "${plugin.replace(/-/g, '_')}_${tool}")`),
  duplicateCommand: (plugin: string, command: string, owner: string) =>
    new PluginError('PLUGIN_DUPLICATE_COMMAND', plugin, `plugin "${plugin}" answers ${command}, which ${owner} already answers; rename the command (or turn one of the plugins off)`),
  /** Nothing to load where the plugin should be: a package not installed, a folder without a built entry. */
  notFound: (source: string, detail: string) => new PluginError('PLUGIN_NOT_FOUND', source, `${source} ${detail}`),
  /**
   * The plugin's module was found but importing it threw: a syntax error, a dependency of its own that is missing, an
   * exception at the top of the module. The cause is named (its first line) and kept as `cause`.
   */
  notImportable: (source: string, file: string, cause: unknown, place?: string) =>
    Object.assign(
      new PluginError(
        'PLUGIN_NOT_IMPORTABLE',
        source,
        `${source} was found (${file}) but importing it failed: ${causeLine(cause)}${place ? ` (at ${place})` : ''}; fix that in the plugin (rebuild it, or run npm install in its folder when it names a missing package)`,
      ),
      { cause },
    ),
  notAPlugin: (source: string, what: string) =>
    new PluginError(
      'PLUGIN_NOT_A_PLUGIN',
      source,
      `${source} ${what}; a plugin's default export must be made by definePlugin: import { definePlugin } from 'wa-assistant-bot/plugin' and export default definePlugin({ name, description, setup: (host) => ({ commands: [...] }) }) (see docs/plugin-authors/writing-a-plugin.md)`,
    ),
  configKeyTaken: (plugin: string, key: string, owner: string) =>
    new PluginError(
      'PLUGIN_CONFIG_KEY_TAKEN',
      plugin,
      `plugin "${plugin}" declares the top-level config.json section "${key}", which ${owner === 'the core' ? 'the core owns' : `${owner} already declares`}; use another key (e.g. "${plugin.replace(/-(.)/g, (_m, c: string) => c.toUpperCase())}${key.charAt(0).toUpperCase()}${key.slice(1)}") or an option under plugins.${plugin}`,
    ),
  setupFailed: (plugin: string, cause: unknown) =>
    Object.assign(
      new PluginError(
        'PLUGIN_SETUP_FAILED',
        plugin,
        `plugin "${plugin}" failed in setup(host): ${(cause as Error)?.message ?? String(cause)}; it stays off until the bot restarts — fix what that names (a setting, a file, a program the plugin needs), or turn the plugin off in the dashboard`,
      ),
      { cause },
    ),
};

/** The first line of what an import threw, with its kind: `SyntaxError: Unexpected token '}'`, `Error: boom`. */
function causeLine(cause: unknown): string {
  if (!(cause instanceof Error)) return `it threw ${String(cause)}`;
  const code = (cause as { code?: unknown }).code;
  const first = cause.message.split('\n')[0] ?? '';
  return `${cause.name}${typeof code === 'string' ? ` (${code})` : ''}: ${first}`;
}
