import type { Capabilities } from '../capabilities/capabilities.js';
import type { Logger } from '../../services/log/logger.js';
import { CORE_TOOLS, type PluginRegistry, type PluginState } from '../plugin/registry.js';
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
  tools.push(...perMessageTools(registry, capabilities, ctx, new Set(tools.map((t) => t.name)), log));
  return tools;
}

/** A plugin or tool that needs nothing. */
const NO_NEEDS: readonly string[] = [];
/** The core's own tool names (a plugin's tool of the same name is never offered). */
const CORE_TOOL_NAMES: ReadonlySet<string> = new Set(CORE_TOOLS);

/**
 * Tools plugins find at run time (per message), after the fixed ones (named in `fixedNames`). They were never checked
 * at registration: a name the core or an earlier tool already has is left out, with a log line.
 */
function perMessageTools(registry: PluginRegistry, capabilities: Capabilities, ctx: MessageContext, fixedNames: ReadonlySet<string>, log?: Logger): Tool[] {
  const tools: Tool[] = [];
  for (const state of registry.active()) {
    const plugin = state.plugin;
    if (!state.instance!.toolsFor) continue;
    if (capabilities.lacks(plugin.needs ?? NO_NEEDS)) continue;
    if (!registry.mayUse(plugin.name, ctx.message)) continue;
    let found: Tool[];
    try {
      found = state.instance!.toolsFor(ctx);
    } catch (err) {
      log?.error({ plugin: plugin.name, err }, 'plugin tools could not be listed; none of them are offered for this message');
      continue;
    }
    for (const tool of found) {
      if (capabilities.lacks(tool.needs ?? NO_NEEDS)) continue;
      // Who has the name already: the core, a fixed tool, or a tool found earlier for this message (a few at most).
      const earlier = CORE_TOOL_NAMES.has(tool.name) ? 'the core' : fixedNames.has(tool.name) ? 'a plugin' : tools.find((t) => t.name === tool.name);
      if (earlier) {
        const owner = typeof earlier === 'string' ? earlier : `plugin "${pluginOfTool(earlier)}"`;
        log?.warn({ plugin: plugin.name, tool: tool.name, owner }, `plugin "${plugin.name}" offers a tool "${tool.name}" that ${owner} already has; it is not offered`);
        continue;
      }
      offeredBy.set(tool, plugin.name);
      tools.push(tool);
    }
  }
  return tools;
}

/** What a cached tool list was made from: it serves again only while every part still holds. */
interface Offer {
  /** The registry's active list (a new array whenever a plugin is switched on or off, started or stopped). */
  active: readonly PluginState[];
  /** Each active plugin's fixed tool list, in order (a plugin started again brings new ones). */
  lists: readonly (readonly Tool[])[];
  /** Every capability the list depended on, with whether the bot had it then (some change at run time). */
  capabilities: ReadonlyMap<string, boolean>;
  /** The fixed tools, wrapped. */
  tools: Tool[];
  /** Their names (a tool a plugin finds per message may not take one). */
  names: ReadonlySet<string>;
  /** Whether some active plugin finds tools per message. */
  perMessage: boolean;
  /** The last message's tools found per message and the whole list made with them (served again for the same ones). */
  last?: { found: readonly Tool[]; tools: Tool[] };
}

/** At most this many senders' lists are kept per config (the oldest is dropped first). */
const MAX_SENDERS = 1000;

/**
 * The tools offered per message, with the fixed part (plugins' `tools` arrays) made once per sender and kept while
 * nothing it depends on changed: the config (plugin access, owners; a new object at each edit), the active plugins,
 * their tool lists and the capabilities asked. A change to any of them is seen on the very next message. Tools a
 * plugin gives per message are asked for every message, as before.
 */
export class ToolOffers {
  private readonly byConfig = new WeakMap<object, Map<string, Offer>>();

  constructor(
    private readonly registry: PluginRegistry,
    private readonly capabilities: Capabilities,
    private readonly config: () => object,
    /** Applied once to each offered tool (the effect guard's wrapper). */
    private readonly wrap: (tool: Tool) => Tool,
    private readonly log?: Logger,
  ) {}

  /** The tools offered to the model for this message (the same array while nothing changed and no plugin gives tools per message). */
  for(ctx: MessageContext): Tool[] {
    const active = this.registry.active();
    const fixed = this.fixedFor(active, ctx);
    if (!fixed.perMessage) return fixed.tools;
    const found = perMessageTools(this.registry, this.capabilities, ctx, fixed.names, this.log);
    if (!found.length) return fixed.tools;
    // Plugins that find tools per message mostly find the same ones: the list made for them serves again.
    const last = fixed.last;
    if (last && sameTools(last.found, found)) return last.tools;
    const tools = Object.freeze([...fixed.tools, ...found.map(this.wrap)]) as Tool[];
    fixed.last = { found, tools };
    return tools;
  }

  private fixedFor(active: readonly PluginState[], ctx: MessageContext): Offer {
    const config = this.config();
    let offers = this.byConfig.get(config);
    if (!offers) this.byConfig.set(config, (offers = new Map()));
    const { senderId, senderAltId, fromOperator } = ctx.message;
    const key = `${fromOperator === true ? 'op' : ''}|${senderId}|${senderAltId ?? ''}`;
    const kept = offers.get(key);
    if (kept && this.holds(kept, active)) return kept;
    const asked = new Map<string, boolean>();
    const lacks = (needs: readonly string[] | undefined) => {
      let lacking = false;
      for (const name of needs ?? []) {
        const has = this.capabilities.has(name);
        asked.set(name, has);
        if (!has) lacking = true;
      }
      return lacking;
    };
    const tools: Tool[] = [];
    for (const state of active) {
      const plugin = state.plugin;
      const list = state.instance!.tools;
      if (!list.length) continue;
      if (lacks(plugin.needs)) continue;
      if (!this.registry.mayUse(plugin.name, ctx.message)) continue;
      for (const tool of list) {
        if (lacks(tool.needs)) continue;
        offeredBy.set(tool, plugin.name);
        tools.push(this.wrap(tool));
      }
    }
    // Frozen: handed out message after message, so no caller may change it.
    const offer: Offer = {
      active,
      lists: active.map((s) => s.instance!.tools),
      capabilities: asked,
      tools: Object.freeze(tools) as Tool[],
      names: new Set(tools.map((t) => t.name)),
      perMessage: active.some((s) => s.instance!.toolsFor),
    };
    offers.delete(key);
    offers.set(key, offer);
    if (offers.size > MAX_SENDERS) offers.delete(offers.keys().next().value as string);
    return offer;
  }

  private holds(offer: Offer, active: readonly PluginState[]): boolean {
    if (offer.active !== active) return false;
    for (let i = 0; i < active.length; i++) if (active[i].instance!.tools !== offer.lists[i]) return false;
    for (const [name, had] of offer.capabilities) if (this.capabilities.has(name) !== had) return false;
    return true;
  }
}

/** Whether two tool lists hold the same tool objects in the same order. */
function sameTools(a: readonly Tool[], b: readonly Tool[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
