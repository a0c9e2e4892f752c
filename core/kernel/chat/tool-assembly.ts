import type { Capabilities } from '../capabilities/capabilities.js';
import type { Logger } from '../../services/log/logger.js';
import { CORE_TOOLS, type PluginRegistry } from '../plugin/registry.js';
import type { MessageContext, Tool } from '../plugin/message-context.js';

/** The plugin that offers each tool object (a chat's profile allows tools by name or by plugin). */
const offeredBy = new WeakMap<Tool, string>();

/** The plugin offering `tool` in this bot, or `core` for the core's own (`remember`) and tools added for one turn. */
export function pluginOfTool(tool: Tool): string {
  return offeredBy.get(tool) ?? 'core';
}

/** Tools offered to the model for this message: from enabled, started plugins whose needs are met and the sender may use. */
export function toolsFor(registry: PluginRegistry, capabilities: Capabilities, ctx: MessageContext, log?: Logger): Tool[] {
  const tools: Tool[] = [];
  for (const state of registry.active()) {
    const plugin = state.plugin;
    const list = state.instance!.tools;
    if (!list.length) continue;
    if (capabilities.lacks(plugin.needs ?? [])) continue;
    if (!registry.mayUse(plugin.name, ctx.message)) continue;
    for (const tool of list) {
      if (capabilities.lacks(tool.needs ?? [])) continue;
      offeredBy.set(tool, plugin.name);
      tools.push(tool);
    }
  }
  // Tools a plugin finds at run time (per message) were never checked at registration: a name already taken is left out.
  // Made only when a plugin finds tools now (most messages have none of those).
  let taken: Map<string, string> | undefined;
  for (const state of registry.active()) {
    const plugin = state.plugin;
    if (!state.instance!.toolsFor) continue;
    if (capabilities.lacks(plugin.needs ?? [])) continue;
    if (!registry.mayUse(plugin.name, ctx.message)) continue;
    let found: Tool[];
    try {
      found = state.instance!.toolsFor(ctx);
    } catch (err) {
      log?.error({ plugin: plugin.name, err }, 'plugin tools could not be listed; none of them are offered for this message');
      continue;
    }
    for (const tool of found) {
      if (capabilities.lacks(tool.needs ?? [])) continue;
      taken ??= new Map<string, string>([...CORE_TOOLS.map((t) => [t, 'the core'] as const), ...tools.map((t) => [t.name, 'a plugin'] as const)]);
      const owner = taken.get(tool.name);
      if (owner) {
        log?.warn({ plugin: plugin.name, tool: tool.name, owner }, `plugin "${plugin.name}" offers a tool "${tool.name}" that ${owner} already has; it is not offered`);
        continue;
      }
      taken.set(tool.name, `plugin "${plugin.name}"`);
      offeredBy.set(tool, plugin.name);
      tools.push(tool);
    }
  }
  return tools;
}
