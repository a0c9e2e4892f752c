import type { TurnPolicy } from './offer.js';
import type { TriggerHit } from '../pipeline/match.js';
import { EFFECT_KINDS } from '../guard/policy.js';
import type { IncomingMedia, MediaKind, QuotedMessage } from '../port/message.js';
import { pluginErrors } from './errors.js';
import { withCommand, withMedia } from './narrowed-context.js';
import type { HandlerBase, Trigger } from './handlers.js';
import type { MessageContext, PluginHost, Tool } from './message-context.js';
import type { PluginOffer, QuotedWords } from './offer.js';
import type { PluginPanel } from './panel.js';
import type { Plugin } from './spec.js';
import type { ChatWatch, WatchedWordsReader } from './watch.js';

/** One trigger of a running plugin and what runs when it matches. */
export interface HandlerEntry {
  trigger: Trigger;
  /** The handler's own `needs` and `missing` (checked with the plugin's before it runs). */
  needs?: readonly string[];
  missing?: HandlerBase['missing'];
  run(ctx: MessageContext, hit: TriggerHit): Promise<unknown> | unknown;
}

/** One observer of a running plugin: its own `needs` (checked with the plugin's at every message) and what it runs. */
export interface ObserverEntry {
  needs?: readonly string[];
  /** What is off while a need is missing, for the start log. */
  missing?: string;
  run(ctx: MessageContext): Promise<unknown> | unknown;
}

/** A running plugin's offer to put quoted messages of some media kinds into words (its `needs` checked by the core). */
export interface QuotedWordsEntry {
  media: readonly MediaKind[];
  needs?: readonly string[];
  read(ctx: MessageContext, quoted: QuotedMessage & { media: IncomingMedia }): Promise<QuotedWords>;
}

/**
 * A plugin as the core runs it: its handlers in order, observers, tools and stop. Made once per bot by `instantiate`.
 */
export interface PluginInstance {
  handlers: HandlerEntry[];
  observers: ObserverEntry[];
  tools: Tool[];
  /** `tools` given as a function: the tools this plugin offers for one message. */
  toolsFor?(ctx: MessageContext): Tool[];
  quotedWords: QuotedWordsEntry[];
  /** The chats it watches read-only (see `PluginOffer.watch`). */
  watch?: ChatWatch;
  /** Its offers to put a watched chat's media into words (see `PluginOffer.watchedWords`). */
  watchedWords: Array<Omit<WatchedWordsReader, 'media'> & { media: MediaKind[] }>;
  /** Its dashboard panel (see `PluginOffer.panel`). */
  panel?: PluginPanel;
  /** The owner's rules around AI turns (taken from core plugins only). */
  turnPolicy?: TurnPolicy;
  stop?(): Promise<void> | void;
}

export interface InstanceDeps {
  host: PluginHost;
  /** The plugin's view of a message's context (its options, host and logger). */
  view(ctx: MessageContext): MessageContext;
}

/** Wraps a tool so its call sees the plugin's view of the context. */
function boundTool(tool: Tool, deps: InstanceDeps): Tool {
  return { ...tool, run: (args, call) => tool.run(args, { ...call, ctx: deps.view(call.ctx) }) };
}

const MEDIA_KINDS: readonly MediaKind[] = ['voice', 'audio', 'image', 'video', 'document', 'sticker'];

/** What is wrong with a tool's `effects` declaration, or undefined (absent is fine: it counts as the unsafe side). */
function effectsMistake(effects: unknown): string | undefined {
  if (effects === undefined) return undefined;
  const e = effects as { outsideText?: unknown; acts?: unknown };
  if (!e || typeof e !== 'object' || typeof e.outsideText !== 'boolean' || !['nothing', 'ownFiles', 'chats'].includes(e.acts as string)) {
    return "effects must be { outsideText: true | false, acts: 'nothing' | 'ownFiles' | 'chats' }";
  }
  if (e.acts === 'ownFiles' && e.outsideText) return "a tool that touches someone's own files cannot also bring in outside text: make them two tools";
  const kind = (effects as { kind?: unknown }).kind;
  if (kind !== undefined && !(EFFECT_KINDS as readonly unknown[]).includes(kind)) return `effects.kind must be one of ${EFFECT_KINDS.join(', ')}`;
  return undefined;
}

/**
 * Parts of an offer the contract once had and no longer has. Refused in words rather than ignored: a plugin written
 * against an older contract would otherwise load and silently never answer what those parts matched.
 */
const REMOVED_PARTS: Record<string, string> = {
  patterns:
    "make each one a predicate that tests the text, predicates: [{ when: (ctx) => /weather in (\\w+)/i.test(ctx.text), run: (ctx) => { const match = /weather in (\\w+)/i.exec(ctx.text)!; … } }], or a command or literal when it matched a first word",
};

function removedPart(offer: PluginOffer): { part: string; instead: string } | undefined {
  if (!offer || typeof offer !== 'object') return undefined;
  const part = Object.keys(REMOVED_PARTS).find((key) => key in offer && (offer as Record<string, unknown>)[key] !== undefined);
  return part ? { part, instead: REMOVED_PARTS[part]! } : undefined;
}

/** The first mistake in what `setup` returned, in words with the fix (undefined when it can work). */
function offerMistake(offer: PluginOffer): string | undefined {
  if (typeof offer !== 'object') return 'setup(host) must return an object such as { commands: [...] }';
  for (const [i, h] of (offer.commands ?? []).entries()) {
    if (typeof h?.run !== 'function') return `commands[${i}] has no run(ctx) function`;
    if (typeof h.command !== 'string' || !/^[a-z0-9][a-z0-9_-]*$/i.test(h.command)) {
      const word = String(h.command).replace(/^\W+/, '').split(/\s/)[0] || 'roll';
      return `commands[${i}]: command "${String(h.command)}" must be a single word without the prefix (write '${word}', not '.${word}')`;
    }
  }
  for (const [i, h] of (offer.literals ?? []).entries()) {
    if (typeof h?.run !== 'function') return `literals[${i}] has no run(ctx) function`;
    if (typeof h.literal !== 'string' || !/^\S+$/.test(h.literal)) return `literals[${i}]: literal "${String(h.literal)}" must be one word, such as '/ws'`;
  }
  for (const [i, h] of (offer.media ?? []).entries()) {
    if (typeof h?.run !== 'function') return `media[${i}] has no run(ctx) function`;
    const bad = (Array.isArray(h.media) ? h.media : [h.media]).find((k) => !MEDIA_KINDS.includes(k));
    if (bad !== undefined) return `media[${i}]: media "${String(bad)}" is not one of ${MEDIA_KINDS.join(', ')}`;
  }
  for (const [i, h] of (offer.predicates ?? []).entries()) {
    if (typeof h?.run !== 'function' || typeof h.when !== 'function') return `predicates[${i}] needs when(ctx) => boolean and run(ctx)`;
  }
  for (const [kind, list] of [['commands', offer.commands], ['literals', offer.literals], ['media', offer.media], ['predicates', offer.predicates]] as const) {
    for (const [i, h] of (list ?? []).entries()) {
      const problem = handlerNeedsMistake(kind, i, h);
      if (problem) return problem;
    }
  }
  for (const [i, o] of (offer.observers ?? []).entries()) {
    if (typeof o === 'function') continue;
    if (typeof o?.run !== 'function') return `observers[${i}] must be a function (ctx) => … or { needs, missing, run(ctx) }`;
    if (o.needs !== undefined && (!Array.isArray(o.needs) || o.needs.some((n) => typeof n !== 'string' || !n))) return `observers[${i}]: needs must be a list of capability names`;
    if (o.missing !== undefined && typeof o.missing !== 'string') return `observers[${i}]: missing must be a sentence saying what is off (for the start log)`;
  }
  if (offer.watch !== undefined && (typeof offer.watch?.isWatched !== 'function' || typeof offer.watch.keep !== 'function')) return 'watch needs isWatched(chatId) and keep(message)';
  for (const [part, args] of [['quotedWords', 'ctx, quoted'], ['watchedWords', 'message']] as const) {
    const readers = offer[part];
    if (readers !== undefined && !Array.isArray(readers)) return `${part} must be a list of { media, read(${args}) }`;
    for (const [i, r] of (readers ?? []).entries()) {
      if (typeof r?.read !== 'function') return `${part}[${i}] needs read(${args})`;
      const kinds = Array.isArray(r.media) ? r.media : [r.media];
      const bad = kinds.find((k) => !MEDIA_KINDS.includes(k));
      if (!kinds.length || bad !== undefined) return `${part}[${i}]: media "${String(bad)}" is not one of ${MEDIA_KINDS.join(', ')}`;
      if (r.needs !== undefined && (!Array.isArray(r.needs) || r.needs.some((n) => typeof n !== 'string' || !n))) return `${part}[${i}]: needs must be a list of capability names`;
    }
  }
  if (offer.panel !== undefined) {
    if (typeof offer.panel?.read !== 'function') return 'panel needs read() giving its tables';
    if (offer.panel.actions !== undefined && !Array.isArray(offer.panel.actions)) return 'panel.actions must be a list of { name, label, field, run(value) }';
    for (const [i, a] of (offer.panel.actions ?? []).entries()) {
      if (typeof a?.name !== 'string' || !/^[a-z0-9-]{1,40}$/i.test(a.name)) return `panel.actions[${i}] needs a name of letters, digits and -`;
      if (typeof a.label !== 'string' || !a.label || typeof a.field !== 'string' || !a.field || typeof a.run !== 'function') return `panel.actions[${i}] (${a.name}) needs a label, a field and run(value)`;
    }
  }
  if (Array.isArray(offer.tools)) {
    for (const [i, t] of offer.tools.entries()) {
      if (typeof t?.name !== 'string' || !t.name || typeof t.run !== 'function') return `tools[${i}] needs a name and run(args, call)`;
      const effectsProblem = effectsMistake(t.effects);
      if (effectsProblem) return `tools[${i}] (${t.name}): ${effectsProblem}`;
    }
  } else if (offer.tools !== undefined && typeof offer.tools !== 'function') return 'tools must be a list, or a function (ctx) => list';
  return undefined;
}

/** The first mistake in a handler's own `needs`/`missing`, in words (undefined when there is none). */
function handlerNeedsMistake(kind: string, i: number, h: HandlerBase): string | undefined {
  if (h.needs !== undefined && (!Array.isArray(h.needs) || h.needs.some((n) => typeof n !== 'string' || !n))) return `${kind}[${i}]: needs must be a list of capability names`;
  if (h.missing !== undefined && typeof h.missing !== 'string' && typeof h.missing !== 'function') return `${kind}[${i}]: missing must be a sentence or a function (missing) => sentence`;
  return undefined;
}

/** Runs a plugin's setup and turns what it offers into the core's running shape; a mistake in it is refused, coded. */
async function fromOffer(plugin: Plugin, deps: InstanceDeps): Promise<PluginInstance> {
  const offer = ((await plugin.setup(deps.host)) ?? {}) as PluginOffer;
  const removed = removedPart(offer);
  const mistake = removed ? undefined : offerMistake(offer);
  if (removed || mistake) {
    await Promise.resolve(offer?.stop?.()).catch(() => undefined);
    throw removed ? pluginErrors.removedPart(plugin.name, removed.part, removed.instead) : pluginErrors.badDefinition(plugin.name, mistake!);
  }
  const handlers: HandlerEntry[] = [];
  const own = (h: HandlerBase) => ({ needs: h.needs, missing: h.missing });
  for (const h of offer.commands ?? []) {
    handlers.push({ trigger: { command: h.command, help: h.help, usage: h.usage }, ...own(h), run: (ctx, hit) => h.run(withCommand(ctx, hit.command!)) });
  }
  for (const h of offer.literals ?? []) {
    handlers.push({ trigger: { literal: h.literal, help: h.help, usage: h.usage }, ...own(h), run: (ctx, hit) => h.run(withCommand(ctx, hit.command!)) });
  }
  for (const h of offer.media ?? []) handlers.push({ trigger: { media: h.media, help: h.help }, ...own(h), run: (ctx) => h.run(withMedia(ctx, ctx.message.media!)) });
  for (const h of offer.predicates ?? []) {
    handlers.push({ trigger: { when: (ctx) => h.when(ctx), help: h.help, usage: h.usage }, ...own(h), run: (ctx) => h.run(ctx) });
  }
  const tools = offer.tools;
  // One bound copy per tool object: a per-message list that gives the same tools gets the same copies, so the prompt
  // reuses their JSON (made once per tool object) instead of making it again for every message.
  const bound = new WeakMap<Tool, Tool>();
  const bind = (tool: Tool) => {
    let copy = bound.get(tool);
    if (!copy) bound.set(tool, (copy = boundTool(tool, deps)));
    return copy;
  };
  return {
    handlers,
    observers: (offer.observers ?? []).map((o): ObserverEntry => (typeof o === 'function' ? { run: (ctx) => o(ctx) } : { needs: o.needs, missing: o.missing, run: (ctx) => o.run(ctx) })),
    tools: Array.isArray(tools) ? tools.map((tool) => boundTool(tool, deps)) : [],
    toolsFor: typeof tools === 'function' ? (ctx: MessageContext) => (tools(deps.view(ctx)) ?? []).map(bind) : undefined,
    quotedWords: (offer.quotedWords ?? []).map((r): QuotedWordsEntry => ({
      media: Array.isArray(r.media) ? [...r.media] : [r.media],
      needs: r.needs,
      read: async (ctx, quoted) => r.read(deps.view(ctx), quoted),
    })),
    ...(offer.watch ? { watch: offer.watch } : {}),
    ...(offer.panel ? { panel: offer.panel } : {}),
    watchedWords: (offer.watchedWords ?? []).map((r) => ({ media: Array.isArray(r.media) ? [...r.media] : [r.media], needs: r.needs, read: (message) => r.read(message) })),
    turnPolicy: offer.turnPolicy,
    stop: offer.stop ? () => offer.stop!() : undefined,
  };
}

/** Starts one plugin for one bot: runs its `setup(host)` and checks what it offers. */
export function instantiate(plugin: Plugin, deps: InstanceDeps): Promise<PluginInstance> {
  return fromOffer(plugin, deps);
}
