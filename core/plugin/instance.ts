import type Router from '@koa/router';
import type { TriggerHit } from '../pipeline/match.js';
import type { PluginOffer } from './contract.js';
import type { BotContext, Plugin, PluginHost, ToolDefinition, Trigger } from './types.js';

/** One trigger of a running plugin and what runs when it matches. */
export interface HandlerEntry {
  trigger: Trigger;
  run(ctx: BotContext, hit: TriggerHit): Promise<unknown> | unknown;
}

/**
 * A plugin as the core runs it, whatever contract it was written to: its handlers in order, observers, tools,
 * routes and stop. Made once per bot by `instantiate`.
 */
export interface PluginInstance {
  handlers: HandlerEntry[];
  observers: Array<(ctx: BotContext) => Promise<unknown> | unknown>;
  tools: ToolDefinition[];
  /** Contract v2 `tools` given as a function: the tools this plugin offers for one message. */
  toolsFor?(ctx: BotContext): ToolDefinition[];
  routes?(router: Router): void;
  stop?(): Promise<void> | void;
}

export interface InstanceDeps {
  host: PluginHost;
  /** The plugin's view of a message's context (its options, host and logger). */
  view(ctx: BotContext): BotContext;
}

/** Adds the narrowed fields of a trigger (args, media, match) on top of a plugin's view of the context. */
function narrow(ctx: BotContext, fields: Record<string, unknown>): BotContext {
  const props: PropertyDescriptorMap = {};
  for (const [key, value] of Object.entries(fields)) props[key] = { value, enumerable: true };
  return Object.create(ctx, props) as BotContext;
}

/** Wraps a tool so its call sees the plugin's view of the context and the plugin's options. */
function boundTool(tool: ToolDefinition, deps: InstanceDeps): ToolDefinition {
  return {
    ...tool,
    run: (args, call) => {
      const ctx = deps.view(call.ctx);
      return tool.run(args, { ...call, ctx, options: ctx.options } as typeof call);
    },
  };
}

/** Runs a v2 plugin's setup and turns what it offers into the core's running shape. */
async function fromOffer(plugin: Plugin, deps: InstanceDeps): Promise<PluginInstance> {
  const offer = ((await (plugin.setup as (host: PluginHost) => unknown)(deps.host)) ?? {}) as PluginOffer<unknown>;
  const handlers: HandlerEntry[] = [];
  for (const h of offer.commands ?? []) {
    handlers.push({ trigger: { command: h.command, help: h.help, usage: h.usage }, run: (ctx, hit) => h.run(narrow(ctx, { command: hit.command, args: hit.command?.args ?? '' }) as never) });
  }
  for (const h of offer.literals ?? []) {
    handlers.push({ trigger: { literal: h.literal, help: h.help, usage: h.usage }, run: (ctx, hit) => h.run(narrow(ctx, { command: hit.command, args: hit.command?.args ?? '' }) as never) });
  }
  for (const h of offer.media ?? []) handlers.push({ trigger: { media: h.media, help: h.help }, run: (ctx) => h.run(narrow(ctx, { media: ctx.message.media }) as never) });
  for (const h of offer.patterns ?? []) handlers.push({ trigger: { pattern: h.pattern, help: h.help }, run: (ctx, hit) => h.run(narrow(ctx, { match: hit.match }) as never) });
  for (const h of offer.predicates ?? []) {
    handlers.push({ trigger: { when: (ctx) => h.when(ctx as never), help: h.help, usage: h.usage }, run: (ctx) => h.run(ctx as never) });
  }
  return {
    handlers,
    observers: (offer.observers ?? []).map((observe) => (ctx: BotContext) => observe(ctx as never)),
    tools: Array.isArray(offer.tools) ? offer.tools.map((tool) => boundTool(tool as unknown as ToolDefinition, deps)) : [],
    toolsFor: typeof offer.tools === 'function'
      ? ((list) => (ctx: BotContext) => (list(deps.view(ctx) as never) ?? []).map((tool) => boundTool(tool as unknown as ToolDefinition, deps)))(offer.tools)
      : undefined,
    routes: offer.routes ? (router) => offer.routes!(router) : undefined,
    stop: offer.stop ? () => offer.stop!() : undefined,
  };
}

/** The old contract (triggers + handle + start + tools + routes), run through the same shape. */
async function fromDefinition(plugin: Plugin, deps: InstanceDeps): Promise<PluginInstance> {
  await plugin.start?.(deps.host);
  const handle = plugin.handle?.bind(plugin);
  const handlers: HandlerEntry[] = (plugin.triggers ?? [])
    .filter((t) => !('every' in t))
    .map((trigger) => ({
      trigger,
      run: (ctx, hit) => {
        ctx.trigger = trigger;
        if (hit.command) ctx.command = hit.command;
        if (hit.match) ctx.match = hit.match;
        return handle?.(ctx);
      },
    }));
  const observes = plugin.triggers?.some((t) => 'every' in t);
  let tools: ToolDefinition[] = [];
  try {
    tools = typeof plugin.tools === 'function' ? plugin.tools(deps.host) : (plugin.tools ?? []);
  } catch (err) {
    deps.host.log.error({ err }, 'plugin tools could not be built; they are not offered');
  }
  return {
    handlers,
    observers: observes && handle ? [(ctx: BotContext) => {
      ctx.trigger = { every: true };
      return handle(ctx);
    }] : [],
    tools: tools.map((tool) => boundTool(tool, deps)),
    routes: plugin.routes ? (router) => plugin.routes!(router, deps.host) : undefined,
    stop: plugin.stop ? () => plugin.stop!() : undefined,
  };
}

/** Starts one plugin for one bot: v2 through `setup(host)`, the old contract through `start(host)`. */
export function instantiate(plugin: Plugin, deps: InstanceDeps): Promise<PluginInstance> {
  return plugin.setup ? fromOffer(plugin, deps) : fromDefinition(plugin, deps);
}
