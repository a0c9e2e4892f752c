import type { Capabilities } from '../capabilities/capabilities.js';
import type { PluginRegistry } from '../plugin/registry.js';
import type { BotContext, ToolDefinition } from '../plugin/types.js';

/** Tools offered to the model for this message: from enabled, started plugins whose needs are met and the sender may use. */
export function toolsFor(registry: PluginRegistry, capabilities: Capabilities, ctx: BotContext): ToolDefinition[] {
  const tools: ToolDefinition[] = [];
  for (const state of registry.active()) {
    const plugin = state.plugin;
    const list = state.instance!.tools;
    if (!list.length) continue;
    if (capabilities.missing(plugin.needs ?? []).length) continue;
    if (!registry.mayUse(plugin.name, ctx.message)) continue;
    for (const tool of list) if (!capabilities.missing(tool.needs ?? []).length) tools.push(tool);
  }
  return tools;
}
