import type { Capabilities } from '../capabilities/capabilities.js';
import type { BotConfig } from '../config/schema.js';
import type { Middleware } from '../pipeline/compose.js';
import { firstWordOf, matchTrigger, type TriggerHit } from '../pipeline/match.js';
import type { HandlerEntry } from '../plugin/instance.js';
import type { PluginRegistry, PluginState } from '../plugin/registry.js';
import type { BotContext } from '../plugin/types.js';

export interface RoutingDeps {
  registry: PluginRegistry;
  capabilities: Capabilities;
  config: () => BotConfig;
  view: (ctx: BotContext, name: string) => BotContext;
}

/**
 * Hands the message to the first handler of an active plugin whose trigger matches (access and `needs` checked,
 * failures told in a sentence); a message no plugin claims goes on to `next`.
 */
export function pluginRouting(deps: RoutingDeps): Middleware<BotContext> {
  return async (ctx, next) => {
    const prefix = deps.config().prefix;
    const first = firstWordOf(ctx.text);
    for (const state of deps.registry.active()) {
      for (const entry of state.instance!.handlers) {
        const { trigger } = entry;
        let hit;
        try {
          // A `when` predicate may read the plugin's own options, so it sees the plugin's view of the context.
          hit = matchTrigger(trigger, 'when' in trigger ? deps.view(ctx, state.plugin.name) : ctx, prefix, first);
        } catch (err) {
          ctx.log.error({ err, plugin: state.plugin.name }, 'trigger check failed');
          continue;
        }
        if (!hit) continue;
        await runHandler(deps, state, entry, ctx, hit);
        return;
      }
    }
    await next();
  };
}

async function runHandler(deps: RoutingDeps, state: PluginState, entry: HandlerEntry, base: BotContext, hit: TriggerHit): Promise<void> {
  const plugin = state.plugin;
  const { trigger } = entry;
  const ctx = deps.view(base, plugin.name);
  if (!deps.registry.mayUse(plugin.name, ctx.message)) {
    const what = 'command' in trigger ? `${deps.config().prefix}${trigger.command}` : 'literal' in trigger ? trigger.literal : plugin.name;
    await ctx.reply(`Sorry, you are not allowed to use ${what} here.`);
    return;
  }
  const missing = deps.capabilities.missing(plugin.needs ?? []);
  if (missing.length) {
    const text =
      typeof plugin.missing === 'function'
        ? plugin.missing(missing)
        : plugin.missing ?? `${plugin.name} is unavailable right now: ${missing.map((m) => `${m} (${deps.capabilities.status(m).detail})`).join(', ')}.`;
    ctx.log.info({ plugin: plugin.name, missing }, 'capability missing; told the user');
    await ctx.reply(text);
    return;
  }
  try {
    await entry.run(ctx, hit);
  } catch (err) {
    ctx.log.error({ err, plugin: plugin.name }, 'plugin failed while handling a message');
    await ctx.reply(`Sorry, ${plugin.name} ran into an error and could not finish. The owner can find the details in the log.`).catch(() => undefined);
  }
}
