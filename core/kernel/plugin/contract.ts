import type Router from '@koa/router';
import { Type, type Static, type TObject, type TSchema, type TUnknown } from '@sinclair/typebox';
import path from 'node:path';
import type { CapabilityStatus } from '../capabilities/capabilities.js';
import type { DataSchema } from '../../services/store/schemas.js';
import { dataFileOf, type StoreDeclaration } from '../../services/store/store-declarations.js';
import type { AiService, RespondOptions } from './types.js';
import type { IncomingMedia, MediaKind } from '../port/message.js';
import { pluginErrors } from './errors.js';
import { resolveOptions, resolveSection, type SectionRule } from './options.js';
import type { BotContext, CommandMatch, Plugin, PluginHost, ToolCall, ToolEffects } from './types.js';

/**
 * The plugin contract. A plugin is a factory: it declares what it is (name, options, needs, what it
 * provides) and `setup(host)` returns what it offers. State lives in setup's closure, one per running bot.
 */

type Awaitable<T> = T | Promise<T>;

/**
 * What plugins see of the AI: every call goes through the provider chain (failover, cooldowns, usage accounting).
 *
 * @example
 * await ctx.reply(await ctx.ai.respond(ctx, { text: transcript }));
 */
export interface PluginAi extends Omit<AiService, 'respond' | 'budget'> {
  /** Answers a turn in the context's chat as the main model (memory, history, tools); records both in history. */
  respond(ctx: MessageContext<any>, options?: RespondOptions): Promise<string>;
  /** The sentence to tell the user when the sender is over an AI budget, for calls that bypass `respond`. */
  budget(ctx: MessageContext<any>, premium?: boolean): Promise<string | undefined>;
}

/** The services a plugin gets in `setup(host)`: its typed options, settings, stores, the AI, sending, a logger. */
export interface Host<O = Record<string, never>, C = unknown> extends Omit<PluginHost, 'options' | 'ai' | 'section'> {
  readonly ai: PluginAi;
  /** This plugin's options, validated, with defaults filled in (live: reflects dashboard edits). */
  options(): O;
  /** An environment setting (`.env` under the real environment), e.g. one the plugin declared in `settings`. */
  setting(name: string): string | undefined;
  /**
   * The value of the plugin's own top-level section of config.json (`configSection`), validated, its default when
   * the key is absent or its value invalid (live: reflects dashboard edits).
   */
  section(): C;
}

/**
 * What every handler receives for one message, seen through this plugin: `options` are its typed options.
 *
 * @example
 * observers: [(ctx) => ctx.log.debug({ text: ctx.text }, 'seen')]
 */
export interface MessageContext<O = Record<string, never>> extends Omit<BotContext, 'options' | 'trigger' | 'command' | 'match' | 'state' | 'host' | 'ai'> {
  readonly options: O;
  readonly ai: PluginAi;
  readonly host: Host<O>;
}

/** A command or literal handler's context: the command word as typed and its arguments are always there. */
export interface CommandContext<O = Record<string, never>> extends MessageContext<O> {
  readonly command: CommandMatch;
  /** The rest of the line after the command word, trimmed ('' when nothing follows). */
  readonly args: string;
}

/** A media handler's context: the media the trigger matched is always there. */
export interface MediaContext<O = Record<string, never>> extends MessageContext<O> {
  readonly media: IncomingMedia;
}

/** A pattern handler's context: the match of the pattern is always there. */
export interface PatternContext<O = Record<string, never>> extends MessageContext<O> {
  readonly match: RegExpExecArray;
}

/** `.roll` with the configured prefix; `args` holds the rest of the line. */
export interface CommandHandler<O> {
  command: string;
  help?: string;
  /** Shown in `.help`, written with the default "." prefix (it is shown with the configured one). */
  usage?: string;
  run(ctx: CommandContext<O>): Awaitable<unknown>;
}
/** A fixed first word whatever the prefix, such as `/ws`. */
export interface LiteralHandler<O> {
  literal: string;
  help?: string;
  usage?: string;
  run(ctx: CommandContext<O>): Awaitable<unknown>;
}
/** A message carrying media of one of these kinds. */
export interface MediaHandler<O> {
  media: MediaKind | MediaKind[];
  help?: string;
  run(ctx: MediaContext<O>): Awaitable<unknown>;
}
/** A text pattern, matched on the text without leading bot mentions. */
export interface PatternHandler<O> {
  pattern: RegExp;
  help?: string;
  run(ctx: PatternContext<O>): Awaitable<unknown>;
}
/** Any predicate (e.g. "this user has a workspace open"). */
export interface PredicateHandler<O> {
  when(ctx: MessageContext<O>): boolean;
  help?: string;
  usage?: string;
  run(ctx: MessageContext<O>): Awaitable<unknown>;
}

/** What the core binds into every tool call (the model never chooses the chat or user), plus the typed options. */
export interface ToolCallOf<O> extends Omit<ToolCall, 'ctx'> {
  ctx: MessageContext<O>;
  /** The plugin's options, validated, with defaults (the same as handlers see). */
  options: O;
}

/**
 * A function offered to the main model.
 *
 * @example
 * { name: 'roll_dice', description: 'Roll dice', parameters: { type: 'object', properties: {} },
 *   run: (args, call) => String(1 + Math.floor(Math.random() * call.options.sides)) }
 */
export interface PluginTool<O> {
  name: string;
  description: string;
  /** JSON schema of the arguments object. */
  parameters: Record<string, unknown>;
  /** Capabilities the tool needs; it is not offered while one is missing. */
  needs?: string[];
  /**
   * The tool checks live information (news, prices, weather…). While no offered tool has it, the model is told it
   * cannot check live information, so it says so instead of guessing.
   */
  live?: boolean;
  /**
   * What the tool brings into a turn and what it acts on. A tool that declares nothing is taken to bring in outside
   * text and to act on chats, so it is never offered in a turn that touches someone's own files.
   *
   * @example
   * effects: { outsideText: false, acts: 'nothing' } // a dice roll
   */
  effects?: ToolEffects;
  run(args: Record<string, unknown>, call: ToolCallOf<O>): Awaitable<unknown>;
}

/**
 * What `setup(host)` returns. Within a plugin, handlers are tried in this order: commands, literals, media,
 * patterns, predicates; the first that matches handles the message.
 */
export interface PluginOffer<O> {
  commands?: CommandHandler<O>[];
  literals?: LiteralHandler<O>[];
  media?: MediaHandler<O>[];
  patterns?: PatternHandler<O>[];
  predicates?: PredicateHandler<O>[];
  /** See every message, addressed to the bot or not, before routing; never stop other plugins from running. */
  observers?: Array<(ctx: MessageContext<O>) => Awaitable<unknown>>;
  /**
   * Tools offered to the main model: a list, or a function giving the tools for one message (for tools found at
   * run time, or offered only to some senders or chats). A function's tools are not checked at registration: one
   * whose name another plugin (or the core) already offers is left out of that message, with a log line.
   */
  tools?: PluginTool<O>[] | ((ctx: MessageContext<O>) => PluginTool<O>[]);
  /** Koa routes the web server mounts (its guards apply). */
  routes?(router: Router): void;
  /** Timers and resources to release when the bot stops. */
  stop?(): Awaitable<void>;
}

/**
 * A capability a plugin owns: detected at start for the one start-log table, needed by name by any plugin.
 * `detect` answers true/false or `{ ok, detail }`; when it is not ok without a detail, `missing` is the sentence shown.
 */
export interface CapabilityDeclaration {
  name: string;
  detect(host: Host<unknown>): Awaitable<boolean | CapabilityStatus>;
  /** Re-checked when used, for capabilities that change at run time (keys exhausted). */
  live?(): CapabilityStatus;
  missing: string;
}

/** An environment setting a plugin reads; the start log says whether it is set (never its value). */
export interface SettingDeclaration {
  name: string;
  description: string;
}

/**
 * A kind of data file the plugin keeps under `host.dataDir`. The core names its version in the backup manifest (a
 * backup made by a newer version is refused at restore) and, for a path without placeholders in its folder, sweeps
 * the temporary files an interrupted write left there at start. Check the file on load with `JsonFile` or
 * `checkDocument` and the same schema: one that does not match is set aside (bytes kept) and shown in the dashboard.
 *
 * @example
 * dataFiles: [{ path: 'dice/stats.json', schema: { name: 'dice stats', version: 1, schema: { type: 'object' } } }]
 */
export interface DataFileDeclaration {
  /** Where, relative to DATA_DIR; `<name>` marks a part that varies, e.g. `workspaces/index/<id>.json`. */
  path: string;
  schema: DataSchema;
}

/**
 * A top-level key of config.json that the plugin owns, for settings owners expect at the top (a time zone, say):
 * validated with `schema` (and `check`) at load and at every dashboard edit, shown on the dashboard, read typed with
 * `host.section()`. An invalid value never stops the bot: the start log and the dashboard name it, the plugin gets
 * the default, and the file is left as the owner wrote it. A key the core owns (`prefix`, `plugins`, …) or another
 * plugin already claimed is refused (`PLUGIN_CONFIG_KEY_TAKEN`).
 *
 * @example
 * configSection: { key: 'timeZone', schema: Type.String({ default: '', description: 'IANA time zone' }), check: (z) => (!z || isZone(z) ? undefined : 'is not a time zone') }
 */
export interface ConfigSectionDeclaration<C extends TSchema = TSchema> {
  /** The top-level key, letters and digits starting with a letter (`timeZone`). */
  key: string;
  /** TypeBox schema of its value, with a default its own schema accepts; its `description` is shown on the dashboard. */
  schema: C;
  /** What the schema cannot say (a real time zone name): the problem in words, or undefined when the value is fine. */
  check?(value: Static<C>): string | undefined;
}

export interface PluginSpec<S extends TObject, C extends TSchema = TUnknown> {
  /** Lowercase letters, digits and dashes; the plugin's key in config.json `plugins`. */
  name: string;
  /** Shown in `.help` and in the dashboard. */
  description: string;
  /** The options in config.json `plugins.<name>`, as a TypeBox object with defaults (`Type.Object({ … })`). */
  options?: S;
  /** Capabilities the plugin needs; its handlers and tools wait for them (`missing` is said instead). */
  needs?: string[];
  /** The reply when a handler matches but a needed capability is missing. Default: names what is missing. */
  missing?: string | ((missing: string[]) => string);
  provides?: CapabilityDeclaration[];
  settings?: SettingDeclaration[];
  /**
   * Options that moved from config.json to environment settings (option → setting name), because they run a program
   * or open a hole. An old config.json keeping them starts with a warning naming them; the dashboard refuses them.
   *
   * @example
   * movedToEnv: { ytdlpPath: 'YTDLP_PATH' }
   */
  movedToEnv?: Readonly<Record<string, string>>;
  /** The kinds of data files the plugin keeps (see `DataFileDeclaration`). */
  dataFiles?: DataFileDeclaration[];
  /**
   * What the plugin keeps through `host.store` (made with `Store.chatDoc`, `Store.doc`, `Store.chatLog`): the core
   * writes, checks, backs up and flushes them, and answers `.mydata`, deletes and chat moves for them.
   */
  stores?: StoreDeclaration[];
  /** A top-level section of config.json the plugin owns (see `ConfigSectionDeclaration`). */
  configSection?: ConfigSectionDeclaration<C>;
  /** Whether the plugin is on when config.json does not mention it. Default true. */
  enabledByDefault?: boolean;
  /** Lower is tried earlier among plugins whose handlers match. Default 100. */
  order?: number;
  setup(host: Host<Static<S>, Static<C>>): Awaitable<PluginOffer<Static<S>>>;
}

const NAME = /^[a-z][a-z0-9-]{0,39}$/;

/**
 * Declares a plugin. The default export of `plugins/<name>/index.ts`, or of a plugin package, must
 * be the result. Mistakes are refused here, with a code and the fix, so they show when the plugin loads.
 *
 * @example
 * export default definePlugin({
 *   name: 'echo',
 *   description: 'Repeats what you say',
 *   options: Type.Object({ prefix: Type.String({ default: 'you said: ' }) }),
 *   setup: () => ({
 *     commands: [{ command: 'echo', usage: '.echo <text>', run: (ctx) => ctx.reply(ctx.options.prefix + ctx.args) }],
 *   }),
 * });
 */
export function definePlugin<S extends TObject = TObject<{}>, C extends TSchema = TUnknown>(spec: PluginSpec<S, C>): Plugin {
  if (!spec || typeof spec !== 'object') throw pluginErrors.badDefinition('?', 'definePlugin needs an object: definePlugin({ name, description, setup })');
  const { name } = spec;
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw pluginErrors.badDefinition(String(name), 'the name must be lowercase letters, digits and dashes, starting with a letter');
  }
  if (typeof spec.description !== 'string' || !spec.description.trim()) throw pluginErrors.badDefinition(name, 'it has no description: it is shown in .help and in the dashboard');
  if (typeof spec.setup !== 'function') throw pluginErrors.badDefinition(name, 'it has no setup(host) function returning what it offers, e.g. setup: () => ({ commands: [...] })');
  for (const need of spec.needs ?? []) if (typeof need !== 'string' || !need) throw pluginErrors.badDefinition(name, 'needs must be a list of capability names');
  for (const p of spec.provides ?? []) {
    if (!p || typeof p.name !== 'string' || typeof p.detect !== 'function' || typeof p.missing !== 'string') {
      throw pluginErrors.badDefinition(name, 'each of provides must be { name, detect(host), missing: "what the user is told" }');
    }
  }
  for (const f of spec.dataFiles ?? []) {
    if (!f || typeof f.path !== 'string' || !f.path || path.isAbsolute(f.path) || f.path.split('/').includes('..') || typeof f.schema?.name !== 'string' || !Number.isInteger(f.schema.version)) {
      throw pluginErrors.badDefinition(name, 'each of dataFiles must be { path: relative to DATA_DIR, schema: { name, version, schema } }');
    }
  }
  const stores = spec.stores ?? [];
  const storeNames = new Set<string>();
  for (const decl of stores) {
    if (!decl || !['chat-doc', 'doc', 'chat-log'].includes((decl as { kind?: string }).kind ?? '')) {
      throw pluginErrors.badDefinition(name, 'each of stores must be made with Store.chatDoc, Store.doc or Store.chatLog');
    }
    if (storeNames.has(decl.name)) throw pluginErrors.badDefinition(name, `two stores are named "${decl.name}": give each its own name`);
    storeNames.add(decl.name);
  }
  const section = spec.configSection;
  if (section !== undefined) {
    if (!section || typeof section.key !== 'string' || !/^[A-Za-z][A-Za-z0-9]{0,39}$/.test(section.key) || !section.schema || typeof section.schema !== 'object') {
      throw pluginErrors.badDefinition(name, "configSection must be { key: 'timeZone' (letters and digits), schema: Type.String({ default: '' }) }");
    }
    if (section.check !== undefined && typeof section.check !== 'function') throw pluginErrors.badDefinition(name, 'configSection.check must be a function (value) => problem or undefined');
    const resolved = resolveSection(section as SectionRule, undefined);
    if (resolved.problems.length) throw pluginErrors.badOptionDefault(name, resolved.problems);
  }
  const schema = spec.options ?? Type.Object({});
  if ((schema as { type?: unknown }).type !== 'object') throw pluginErrors.badDefinition(name, 'options must be an object schema: Type.Object({ … })');
  const { problems } = resolveOptions(schema, {});
  if (problems.length) throw pluginErrors.badOptionDefault(name, problems);
  const missing = spec.missing;
  return Object.freeze({
    name,
    description: spec.description,
    needs: spec.needs,
    missing: typeof missing === 'function' ? (names: string[]) => missing(names) : missing,
    optionsSchema: schema as unknown as Record<string, unknown>,
    enabledByDefault: spec.enabledByDefault,
    order: spec.order,
    provides: spec.provides,
    settings: spec.settings,
    movedToEnv: spec.movedToEnv,
    dataFiles: [...(spec.dataFiles ?? []), ...stores.map((decl) => dataFileOf(decl, name))],
    stores: Object.freeze([...stores]),
    configSection: section as SectionRule | undefined,
    setup: spec.setup as unknown as Plugin['setup'],
    __plugin: true as const,
  });
}

/** True for a value made by `definePlugin` (of this copy of the core or another: the mark is a plain field). */
export function isPlugin(value: unknown): value is Plugin {
  return Boolean(value && typeof value === 'object' && (value as { __plugin?: unknown }).__plugin === true && typeof (value as { setup?: unknown }).setup === 'function');
}
