import type { Capabilities } from '../capabilities/capabilities.js';
import type { BotConfig } from '../../services/config/schema.js';
import type { Middleware } from './compose.js';
import { firstWordOf, matchTrigger, type FirstWord, type TriggerHit } from './match.js';
import type { HandlerEntry } from '../plugin/instance.js';
import type { PluginRegistry, PluginState } from '../plugin/registry.js';
import type { MessageContext } from '../plugin/message-context.js';

export interface RoutingDeps {
  registry: PluginRegistry;
  capabilities: Capabilities;
  config: () => BotConfig;
  view: (ctx: MessageContext, name: string) => MessageContext;
}

/** One handler of an active plugin, with its place in routing order. */
interface Planned {
  state: PluginState;
  entry: HandlerEntry;
  order: number;
}

/**
 * The handlers of the active plugins, sorted by what can match them: a message is checked only against the handlers
 * its first word (command, literal) or media kind can reach, plus the predicates, still in routing order
 * (a plain text message no longer visits every command of every plugin). Made again when the active plugins change.
 */
class DispatchPlan {
  private readonly commands = new Map<string, Planned[]>();
  private readonly literals = new Map<string, Planned[]>();
  private readonly media: Planned[] = [];
  /** Predicates: they may match any message. */
  private readonly always: Planned[] = [];
  /** The merged lists already made (at most a few per command and literal): a message meets a sorted list, never sorts. */
  private readonly merged = new Map<Planned[] | string, Planned[]>();

  constructor(
    readonly active: PluginState[],
    readonly prefix: string,
  ) {
    let order = 0;
    for (const state of active) {
      for (const entry of state.instance!.handlers) {
        const planned = { state, entry, order: order++ };
        const { trigger } = entry;
        if ('command' in trigger) push(this.commands, trigger.command.toLowerCase(), planned);
        else if ('literal' in trigger) push(this.literals, trigger.literal.toLowerCase(), planned);
        else if ('media' in trigger) this.media.push(planned);
        else this.always.push(planned);
      }
    }
  }

  /** The handlers a message with this first word and media may match, in routing order. */
  candidates(first: FirstWord, hasMedia: boolean): Planned[] {
    const prefix = this.prefix;
    const command = first.word.length > prefix.length && first.word.startsWith(prefix) ? this.commands.get(first.word.slice(prefix.length).toLowerCase()) : undefined;
    const literal = this.literals.get(first.lower);
    if (!command && !literal) return hasMedia ? this.withMedia() : this.always;
    // Each planned handler is in one list only, so a list's first `order` names it.
    const key = command && !literal && !hasMedia ? command : `${command?.[0]!.order ?? ''}/${literal?.[0]!.order ?? ''}/${hasMedia ? 'media' : ''}`;
    let list = this.merged.get(key);
    if (!list) this.merged.set(key, (list = [...(command ?? []), ...(literal ?? []), ...(hasMedia ? this.media : []), ...this.always].sort((a, b) => a.order - b.order)));
    return list;
  }

  /** The media handlers and the predicates, in routing order (a media message without a command or literal). */
  private withMedia(): Planned[] {
    return (this.mediaAndAlways ??= [...this.media, ...this.always].sort((a, b) => a.order - b.order));
  }
  private mediaAndAlways: Planned[] | undefined;
}

function push(map: Map<string, Planned[]>, key: string, planned: Planned): void {
  const list = map.get(key);
  if (list) list.push(planned);
  else map.set(key, [planned]);
}

/**
 * Hands the message to the first handler of an active plugin whose trigger matches (access and `needs` checked,
 * failures told in a sentence); a message no plugin claims goes on to `next`.
 */
export function pluginRouting(deps: RoutingDeps): Middleware<MessageContext> {
  let plan: DispatchPlan | undefined;
  // Not async: the handler's promise (or the next step's) is handed on, no frame of its own around it.
  return (ctx, next) => {
    const prefix = deps.config().prefix;
    // A relayed text (forwarded, a card's name) is never a command or literal: its sender did not type it here.
    const first = ctx.message.relayed ? { word: '', args: ctx.text, lower: '' } : firstWordOf(ctx.text);
    const active = deps.registry.active();
    if (plan?.active !== active || plan.prefix !== prefix) plan = new DispatchPlan(active, prefix);
    for (const { state, entry } of plan.candidates(first, Boolean(ctx.message.media))) {
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
      return runHandler(deps, state, entry, ctx, hit);
    }
    return next();
  };
}

/** What a handler without needs misses (most handlers: no list made per message). Only its length is ever read. */
const NOTHING_MISSING: string[] = [];

async function runHandler(deps: RoutingDeps, state: PluginState, entry: HandlerEntry, base: MessageContext, hit: TriggerHit): Promise<void> {
  const plugin = state.plugin;
  const { trigger } = entry;
  const ctx = deps.view(base, plugin.name);
  if (!deps.registry.mayUse(plugin.name, ctx.message)) {
    const what = 'command' in trigger ? `${deps.config().prefix}${trigger.command}` : 'literal' in trigger ? trigger.literal : plugin.name;
    await ctx.reply(`Sorry, you are not allowed to use ${what} here.`);
    return;
  }
  // The plugin's needs, then the handler's own: the handler's `missing` speaks for what it alone needs.
  const pluginMissing = plugin.needs?.length ? deps.capabilities.missing(plugin.needs) : NOTHING_MISSING;
  const handlerMissing = pluginMissing.length || !entry.needs?.length ? NOTHING_MISSING : deps.capabilities.missing(entry.needs);
  const missing = pluginMissing.length ? pluginMissing : handlerMissing;
  if (missing.length) {
    const said = handlerMissing.length && entry.missing !== undefined ? entry.missing : plugin.missing;
    const text =
      typeof said === 'function'
        ? said(missing)
        : said ?? `${plugin.name} is unavailable right now: ${missing.map((m) => `${m} (${deps.capabilities.status(m).detail})`).join(', ')}.`;
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
