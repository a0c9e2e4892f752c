import { pluginErrors } from '../plugin/errors.js';
import type { Plugin } from '../plugin/spec.js';
import chat from './chat.js';
import guard from './guard.js';
import help from './help.js';
import profiles from './profiles/index.js';
import status from './status.js';
import type { CorePluginParts } from '../bot/compose.js';
import { GUARD_HOLDS } from './guard.js';

/**
 * The core plugins: built-in behaviour written with the same `definePlugin` API as every other plugin (they import
 * only the public entry, core/index.ts), on by default, listed in the start log, the dashboard and `.help` like the
 * others. `canTurnOff: false` marks the ones the owner cannot switch off (config.json's `enabled: false` is ignored
 * with a start-log warning, and the dashboard offers no switch).
 */
export const CORE_PLUGINS: ReadonlyArray<{ plugin: Plugin; canTurnOff: boolean; why?: string }> = [
  { plugin: help, canTurnOff: false, why: '.help is how people find the commands, and unknown or turned-off commands point to it' },
  { plugin: guard, canTurnOff: false, why: 'every effect (messages to other chats, publishing, deleting files…) passes the guard, and .yes/.no answer what it holds' },
  { plugin: status, canTurnOff: true },
  { plugin: profiles, canTurnOff: false, why: 'the chats\' profiles and the money caps the owners set must hold' },
  { plugin: chat, canTurnOff: true },
];

/** The guard's core plugin (its config section and the store of held actions). */
export { default as GUARD_PLUGIN, GUARD_HOLDS } from './guard.js';

/** The fallback to the model (the `chat` core plugin): the end of the pipeline says so when it is off. */
export const FALLBACK_PLUGIN = chat;

/** What the kernel itself works with of the core plugins (`BotDeps.core`), handed in by the composition root. */
export const CORE_PARTS: CorePluginParts = {
  rule: (plugin) => corePluginRule(plugin),
  fallback: chat,
  guard: { name: guard.name, holds: GUARD_HOLDS },
};

/** How the core treats one of its own plugins, or undefined for any other plugin. */
export function corePluginRule(plugin: Plugin): { canTurnOff: boolean; why?: string } | undefined {
  return CORE_PLUGINS.find((c) => c.plugin === plugin);
}

/**
 * The core plugins, then the discovered ones. A discovered plugin taking a core plugin's name stays out (a coded
 * PLUGIN_DUPLICATE_NAME failure for the start log and the dashboard): the core's own is kept.
 */
export function withCorePlugins(discovered: readonly Plugin[], failures: Array<{ source: string; reason: string }>): Plugin[] {
  const core = CORE_PLUGINS.map((c) => c.plugin);
  const kept = discovered.filter((plugin) => {
    if (!core.some((c) => c.name === plugin.name)) return true;
    const source = `installed plugin ${plugin.name}`;
    failures.push({ source, reason: pluginErrors.duplicateName(plugin.name, source, 'the core (a core plugin)').message });
    return false;
  });
  return [...core, ...kept];
}
