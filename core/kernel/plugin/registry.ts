import type { Capabilities } from '../capabilities/capabilities.js';
import type { BotConfig, PluginSection } from '../../services/config/schema.js';
import type { Logger } from '../../services/log/logger.js';
import { mayUse } from './access.js';
import { pluginErrors } from './errors.js';
import { PluginError } from '../../api/errors.js';
import { instantiate, type PluginInstance } from './instance.js';
import { resolveOptions, resolveSection, type SectionRule } from './options.js';
import type { Trigger } from './handlers.js';
import type { PluginListing, TriggerListing } from './listing.js';
import type { MessageContext, PluginHost } from './message-context.js';
import type { Plugin } from './spec.js';

export interface PluginState {
  plugin: Plugin;
  enabled: boolean;
  started: boolean;
  /** Why the plugin is not (fully) active, for the start log and the dashboard. */
  problem?: string;
  /** Refused at registration (a coded PluginError): it stays off whatever config.json says. */
  refused?: PluginError;
  /** What the plugin offers once started (handlers, observers, tools, stop). */
  instance?: PluginInstance;
  /** Set for a core plugin (core/kernel/core-plugins): whether the owner may turn it off. */
  core?: CoreRule;
}

/** How the core treats one of its own plugins (see core/kernel/core-plugins). */
export interface CoreRule {
  canTurnOff: boolean;
  /** Why it cannot be turned off, for the start log and the dashboard. */
  why?: string;
}

/** A plugin that could not be loaded or registered, for the start log and the dashboard. */
export interface PluginFailure {
  source: string;
  reason: string;
}

/** Tools the core itself offers (outside any plugin); a plugin cannot take them. */
export const CORE_TOOLS = ['remember'];

export interface RegistryDeps {
  plugins: Plugin[];
  capabilities: Capabilities;
  log: Logger;
  config: () => BotConfig;
  failures: PluginFailure[];
  /** The host services of one plugin. */
  host: (name: string) => PluginHost;
  /** A message's context as one plugin sees it. */
  view: (ctx: MessageContext, name: string) => MessageContext;
  /** The rule of a core plugin, undefined for any other plugin. */
  coreRule?: (plugin: Plugin) => CoreRule | undefined;
}

/**
 * The plugins of one bot and their life: registration (capabilities they provide, `needs` they name, clashing
 * commands and tools refused with coded errors), start, enablement from config.json, options and access.
 */
export class PluginRegistry {
  /** In routing order (`order`, then load order). */
  readonly states: PluginState[];
  /** The same states in load order: of two clashing plugins, the later one stays off. */
  private readonly loadOrder: PluginState[];
  private readonly optionsCache = new WeakMap<BotConfig, Map<string, Record<string, unknown>>>();
  private readonly sectionCache = new WeakMap<BotConfig, Map<string, { value: unknown; problems: string[] }>>();

  constructor(private readonly deps: RegistryDeps) {
    this.loadOrder = deps.plugins.map((plugin) => {
      const core = deps.coreRule?.(plugin);
      return { plugin, enabled: isEnabledIn(plugin, deps.config(), core), started: false, ...(core ? { core } : {}) };
    });
    this.states = [...this.loadOrder].sort((a, b) => (a.plugin.order ?? 100) - (b.plugin.order ?? 100));
    for (const state of this.loadOrder) if (!this.byName.has(state.plugin.name)) this.byName.set(state.plugin.name, state);
  }
  /** The first plugin loaded under each name (options are asked per message: a predicate reading its phrases). */
  private readonly byName = new Map<string, PluginState>();

  /** Refuses a plugin with a coded error: it stays off, the start log and the dashboard say why. */
  private refuse(state: PluginState, error: PluginError): void {
    state.refused = error;
    state.enabled = false;
    state.started = false;
    state.problem = error.message;
    this.deps.failures.push({ source: `plugin ${state.plugin.name}`, reason: error.message });
    this.deps.log.error({ plugin: state.plugin.name, code: error.code }, error.message);
  }

  /**
   * Top-level config.json sections plugins declare: a key the core owns, or one an earlier plugin declared, is
   * refused (the later plugin stays off).
   */
  registerConfigSections(coreKeys: readonly string[]): void {
    const owners = new Map<string, string>(coreKeys.map((k) => [k, 'the core']));
    for (const state of this.loadOrder) {
      const key = state.plugin.configSection?.key;
      if (!key || state.refused) continue;
      const owner = owners.get(key);
      if (owner) {
        this.refuse(state, pluginErrors.configKeyTaken(state.plugin.name, key, owner));
        continue;
      }
      owners.set(key, `plugin "${state.plugin.name}"`);
    }
  }

  /** The top-level sections of the plugins that were not refused: key → the plugin and its rule. */
  configSections(): Array<{ plugin: string; rule: SectionRule }> {
    return this.loadOrder.filter((s) => !s.refused && s.plugin.configSection).map((s) => ({ plugin: s.plugin.name, rule: s.plugin.configSection as SectionRule }));
  }

  /**
   * A plugin's own top-level section, validated (cached per config, so a dashboard edit is seen at once): the file's
   * value, or the default when it is absent or invalid, with the problems found.
   */
  sectionOf(name: string): { value: unknown; problems: string[] } {
    const config = this.deps.config();
    const rule = this.byName.get(name)?.plugin.configSection as SectionRule | undefined;
    if (!rule) return { value: undefined, problems: [] };
    let perConfig = this.sectionCache.get(config);
    if (!perConfig) this.sectionCache.set(config, (perConfig = new Map()));
    let resolved = perConfig.get(name);
    if (!resolved) {
      // An invalid value is named in the start log and on the dashboard (Bot.configSections); the file is left alone.
      resolved = resolveSection(rule, config.sections?.[rule.key]);
      perConfig.set(name, resolved);
    }
    return resolved;
  }

  /** Capabilities that plugins provide are declared, then every `needs` is checked against the known names. */
  registerCapabilities(): void {
    const { capabilities } = this.deps;
    const owners = new Map<string, string>(capabilities.names().map((n) => [n, 'the core']));
    for (const state of this.loadOrder) {
      for (const provided of state.plugin.provides ?? []) {
        const owner = owners.get(provided.name);
        if (owner) {
          this.refuse(state, pluginErrors.duplicateCapability(state.plugin.name, provided.name, owner));
          break;
        }
        owners.set(provided.name, `plugin "${state.plugin.name}"`);
        const host = this.deps.host(state.plugin.name);
        capabilities.define(
          provided.name,
          async () => {
            const answer = await provided.detect(host);
            const status = typeof answer === 'boolean' ? { ok: answer, detail: '' } : answer;
            return { ok: status.ok, detail: status.detail || (status.ok ? 'available' : provided.missing), ...(status.fix && !status.ok ? { fix: status.fix } : {}), ...(status.notConfigured && !status.ok ? { notConfigured: true } : {}) };
          },
          provided.live,
          provided.fix,
        );
      }
    }
    for (const state of this.loadOrder) {
      if (state.refused) continue;
      const unknown = (state.plugin.needs ?? []).find((need) => !capabilities.known(need));
      if (unknown) this.refuse(state, pluginErrors.unknownNeed(state.plugin.name, unknown, capabilities.names()));
    }
  }

  /**
   * A plugin's options as `host.options()` gives them: validated, defaults filled in (cached per config,
   * so a dashboard edit is seen at once).
   */
  optionsOf(name: string): PluginSection {
    const config = this.deps.config();
    const plugin = this.byName.get(name)?.plugin;
    if (!plugin) return this.section(name);
    let perConfig = this.optionsCache.get(config);
    if (!perConfig) this.optionsCache.set(config, (perConfig = new Map()));
    let options = perConfig.get(name);
    if (!options) {
      const resolved = resolveOptions(plugin.optionsSchema, config.plugins[name]);
      if (resolved.problems.length) this.deps.log.warn({ plugin: name, problems: resolved.problems }, 'plugin options are invalid; using the defaults');
      perConfig.set(name, (options = resolved.options));
    }
    return options as PluginSection;
  }

  /** The plugin's raw config.json section. */
  section(name: string): PluginSection {
    return this.deps.config().plugins[name] ?? {};
  }

  /** Re-reads enablement from a new config (dashboard edits). */
  applyConfig(config: BotConfig): void {
    for (const state of this.states) state.enabled = !state.refused && isEnabledIn(state.plugin, config, state.core);
  }

  /** Enabled, started plugins, in routing order. */
  active(): PluginState[] {
    // Asked several times per message: the last list is handed out again while it still holds (never mutate it).
    const last = this.activeList;
    let count = 0;
    for (const s of this.states) {
      if (!isActive(s)) continue;
      if (last[count] !== s) return (this.activeList = this.states.filter(isActive));
      count++;
    }
    return count === last.length ? last : (this.activeList = this.states.filter(isActive));
  }
  private activeList: PluginState[] = [];

  /**
   * Every plugin as `host.plugins()` shows it, in routing order (made again when the config or the active plugins
   * change: asked for every message that reaches the core's help plugin).
   */
  listings(): readonly PluginListing[] {
    const config = this.deps.config();
    const active = this.active();
    if (this.listed?.config === config && this.listed.active === active) return this.listed.list;
    const list = this.states.map((s): PluginListing => {
      const name = s.plugin.name;
      return Object.freeze({
        name,
        description: s.plugin.description,
        enabled: s.enabled,
        active: active.includes(s),
        core: Boolean(s.core),
        triggers: Object.freeze((s.instance?.handlers ?? []).map(({ trigger, needs }) => listingOf(trigger, Object.freeze([...new Set([...(s.plugin.needs ?? []), ...(needs ?? [])])])))),
        answersFreeText: s.plugin.answersFreeText === true,
        tools: Object.freeze((s.instance?.tools ?? []).map((t) => t.name)),
        toolsPerMessage: Boolean(s.instance?.toolsFor),
        mayUse: (message: Parameters<PluginListing['mayUse']>[0]) => this.mayUse(name, message),
      });
    });
    this.listed = { config, active, list: Object.freeze(list) };
    return this.listed.list;
  }
  private listed: { config: BotConfig; active: PluginState[]; list: readonly PluginListing[] } | undefined;

  /** True when the sender of `message` may use plugin `name` (its `access` in config.json). */
  mayUse(name: string, message: { senderId: string; senderAltId?: string; fromOperator?: boolean }): boolean {
    const config = this.deps.config();
    // Asked per plugin and message: no `{}` made for a plugin config.json does not mention.
    return mayUse(config.plugins[name]?.access, message, config);
  }

  /**
   * Starts every plugin (`setup(host)`) in load order. One that throws is
   * reported and left inactive; one whose commands or tools clash with an earlier one is refused; the others go on.
   */
  async start(): Promise<void> {
    const commands = new Map<string, string>();
    const tools = new Map<string, string>(CORE_TOOLS.map((t) => [t, 'the core']));
    for (const state of this.loadOrder) {
      if (state.refused) continue;
      const name = state.plugin.name;
      let instance: PluginInstance;
      try {
        instance = await instantiate(state.plugin, { host: this.deps.host(name), view: (ctx) => this.deps.view(ctx, name) });
      } catch (err) {
        // A coded mistake in what setup offered, or setup itself throwing (PLUGIN_SETUP_FAILED): off, said why.
        if (!(err instanceof PluginError)) this.deps.log.error({ plugin: name, err }, 'plugin failed to start; it stays off');
        this.refuse(state, err instanceof PluginError ? err : pluginErrors.setupFailed(name, err));
        continue;
      }
      const clash = this.clashOf(name, instance, commands, tools);
      if (clash) {
        this.refuse(state, clash);
        await Promise.resolve(instance.stop?.()).catch((err) => this.deps.log.warn({ plugin: name, err }, 'plugin stop failed'));
        continue;
      }
      // A clash with a core plugin (loaded first) names the core: `.help` is the core's, whichever plugin answers it.
      const owner = state.core ? 'the core' : `plugin "${name}"`;
      for (const key of commandKeys(instance)) commands.set(key, owner);
      for (const tool of instance.tools) tools.set(tool.name, owner);
      state.instance = instance;
      state.started = true;
    }
  }

  /** Stops every started plugin; one failing to stop is logged and the others still stop. */
  async stop(): Promise<void> {
    for (const state of this.states) {
      try {
        await state.instance?.stop?.();
      } catch (err) {
        this.deps.log.warn({ plugin: state.plugin.name, err }, 'plugin stop failed');
      }
    }
  }

  /** The first command or tool of `instance` that an earlier plugin (or the core) already has. */
  private clashOf(name: string, instance: PluginInstance, commands: Map<string, string>, tools: Map<string, string>): PluginError | undefined {
    const { capabilities } = this.deps;
    for (const key of commandKeys(instance)) {
      const owner = commands.get(key);
      if (owner) {
        const word = key.startsWith('command:') ? `${this.deps.config().prefix}${key.slice('command:'.length)}` : key.slice('literal:'.length);
        return pluginErrors.duplicateCommand(name, word, owner);
      }
    }
    for (const entry of [...instance.handlers, ...instance.observers]) {
      const unknown = (entry.needs ?? []).find((need) => !capabilities.known(need));
      if (unknown) return pluginErrors.unknownNeed(name, unknown, capabilities.names());
    }
    for (const tool of instance.tools) {
      const unknown = (tool.needs ?? []).find((need) => !capabilities.known(need));
      if (unknown) return pluginErrors.unknownNeed(name, unknown, capabilities.names());
      const owner = tools.get(tool.name);
      if (owner) return pluginErrors.duplicateTool(name, tool.name, owner);
    }
    return undefined;
  }
}

function isEnabledIn(plugin: Plugin, config: BotConfig, core: CoreRule | undefined): boolean {
  // A core plugin the owner cannot turn off stays on whatever config.json says (the start log warns about it).
  if (core && !core.canTurnOff) return true;
  return config.plugins[plugin.name]?.enabled ?? plugin.enabledByDefault ?? true;
}

/** A trigger as other plugins see it: no code, a fresh frozen object. */
function listingOf(t: Trigger, needs: readonly string[]): TriggerListing {
  if ('command' in t) return Object.freeze({ kind: 'command', command: t.command, help: t.help, usage: t.usage, needs });
  if ('literal' in t) return Object.freeze({ kind: 'literal', literal: t.literal, help: t.help, usage: t.usage, needs });
  if ('media' in t) return Object.freeze({ kind: 'media', media: [t.media].flat(), help: t.help, needs });
  return Object.freeze({ kind: 'predicate', help: t.help, usage: t.usage, needs });
}

function commandKeys(instance: PluginInstance): string[] {
  return instance.handlers.flatMap(({ trigger }) =>
    'command' in trigger ? [`command:${trigger.command.toLowerCase()}`] : 'literal' in trigger ? [`literal:${trigger.literal.toLowerCase()}`] : [],
  );
}

/** Enabled, started and running (see `PluginRegistry.active`). */
function isActive(state: PluginState): boolean {
  return Boolean(state.enabled && state.started && state.instance);
}
