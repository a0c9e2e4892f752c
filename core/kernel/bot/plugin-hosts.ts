import type { BotConfig } from '../../services/config/schema.js';
import { pluginFiles } from './plugin-files.js';
import type { Settings } from '../../services/config/settings.js';
import type { Jail } from '../../services/jail/jail.js';
import type { Logger } from '../../services/log/logger.js';
import type { OwnerNotifier } from '../../services/notices/owner-notifier.js';
import type { KeyPool } from '../../services/providers/key-pool.js';
import type { HistoryStore } from '../../services/store/history.js';
import type { MemoryStore } from '../../services/store/memory.js';
import { PluginStores } from '../../services/store/plugin-store.js';
import type { PrivacyRegistry } from '../../services/store/privacy.js';
import type { DailySweeps } from '../../services/store/retention.js';
import type { AccessControl } from '../access/access-control.js';
import type { Capabilities } from '../capabilities/capabilities.js';
import type { EffectGuard } from '../guard/effect-guard.js';
import { isOwnerId } from '../plugin/access.js';
import type { PluginRegistry, PluginState } from '../plugin/registry.js';
import type { AiService, PluginHost } from '../plugin/message-context.js';
import type { SiteDeclaration } from '../plugin/site.js';
import { findChatsOf } from '../port/transport.js';
import type { StatusSource } from '../status/status-report.js';
import type { StartedMessages } from './started-messages.js';
import type { TransportLink } from './transport-link.js';

export interface PluginHostsDeps {
  settings: Settings;
  /** The config.json file (plugins find the owner's files beside it). */
  configFile: string;
  config: () => BotConfig;
  log: Logger;
  capabilities: Capabilities;
  ai: AiService;
  histories: HistoryStore;
  memories: MemoryStore;
  notices: OwnerNotifier;
  privacy: PrivacyRegistry;
  jail: Jail;
  audioKeys: KeyPool;
  access: AccessControl;
  registry: PluginRegistry;
  link: TransportLink;
  effects: EffectGuard;
  started: StartedMessages;
  /** The app's daily retention pass, which each plugin's stores join; unset: they are swept at start only. */
  dailySweeps?: DailySweeps;
  /** A turn no one typed now (`PluginHost.promptAs`). */
  promptAs(chatId: string, senderId: string, text: string, system?: string, hidden?: boolean): Promise<string>;
}

/**
 * How long a plugin's document gathers its changes before one write (as its JSON file did before the store database).
 * The profiles plugin changes the money spent and the chat's `.why` record with every answer: written at once, that
 * was an upsert of each whole document per message, ~4 % of the console's time under a stream of messages.
 */
export const DOC_WRITE_PAUSE_MS = 25;

/**
 * What each plugin is handed: its `PluginHost` (made once per plugin name), its declared stores, the listeners it
 * set for being switched on or off, and the sites it serves.
 */
export class PluginHosts {
  /** Where `.status` and the dashboard get the running picture (set by the app, which owns the chain and usage). */
  statusSource: StatusSource | undefined;
  private readonly hosts = new Map<string, PluginHost>();
  /** Takes each plugin's stores out of the daily retention pass (at stop). */
  private readonly leaveDailySweeps: Array<() => void> = [];
  /** Each plugin's `host.store`, by plugin name (flushed at stop). */
  private readonly stores = new Map<string, PluginStores>();
  /** Listeners of plugins that want to hear when the owner switches them on or off, by plugin name. */
  private readonly enabledListeners = new Map<string, Set<(enabled: boolean) => void | Promise<void>>>();
  private readonly siteList: Array<SiteDeclaration & { plugin: string }> = [];

  constructor(private readonly deps: PluginHostsDeps) {}

  /** The host services handed to a plugin's setup (and seen as `ctx.host` by its handlers and tools). */
  host(name: string): PluginHost {
    let host = this.hosts.get(name);
    if (host) return host;
    const { settings, config, registry, link, effects, started, log } = this.deps;
    host = {
      name,
      store: this.storeOf(name),
      settings,
      config,
      configFile: this.deps.configFile,
      options: () => registry.optionsOf(name),
      section: () => registry.sectionOf(name).value,
      setting: (variable) => settings.env[variable],
      files: pluginFiles(settings.dataDir, name),
      log: log.child({ plugin: name }),
      capabilities: this.deps.capabilities,
      ai: this.deps.ai,
      histories: this.deps.histories,
      memories: this.deps.memories,
      enabled: () => registry.states.some((s) => s.plugin.name === name && s.enabled),
      onEnabledChange: (listener) => {
        let listeners = this.enabledListeners.get(name);
        if (!listeners) this.enabledListeners.set(name, (listeners = new Set()));
        listeners.add(listener);
        return () => void listeners.delete(listener);
      },
      promptAs: (chatId, senderId, text, options) => this.deps.promptAs(chatId, senderId, text, options?.system, options?.hidden),
      // Bot-initiated: paced by the outbox (WhatsApp bans accounts that send too much too fast); replies are not.
      // A long text goes as several messages, cut at paragraphs, as `ctx.reply` does (a scheduled task's answer).
      send: (chatId, text) => started.text(chatId, text),
      sendMedia: (chatId, media) => started.media(chatId, media),
      effects: {
        declare: (effect, kind, run) => effects.declare(name, effect, kind, run),
        act: (request, by) => effects.act(name, request, by),
        answer: (id, approve, by) => effects.answer(id, approve, by),
        pending: () => effects.pending(),
      },
      botIds: () => link.botIds(),
      findChats: (chatName) => findChatsOf(link.transport, chatName),
      ownIds: () => link.ownIds(),
      isOwner: (id) => isOwnerId([id], config()) || link.isOperator(id),
      access: this.deps.access,
      isGroupAdmin: (chatId, userIds) => link.isGroupAdmin(chatId, userIds),
      status: () => {
        if (!this.statusSource) throw new Error('no status source: the bot runs outside the app');
        return this.statusSource();
      },
      plugins: () => registry.listings(),
      notices: this.deps.notices,
      personalData: { exportFor: (person) => this.deps.privacy.exportFor(person), deleteFor: (person) => this.deps.privacy.deleteFor(person) },
      jail: this.deps.jail,
      audioKeys: this.deps.audioKeys,
      serveSite: (site) => void this.siteList.push({ ...site, plugin: name }),
    };
    this.hosts.set(name, host);
    return host;
  }

  /**
   * The plugin's `host.store`: its declared stores under DATA_DIR. Made with the host, so what it keeps from an earlier
   * run is in `.mydata`, deletes and chat moves whether or not the plugin opens it this time.
   */
  storeOf(name: string): PluginStores {
    let stores = this.stores.get(name);
    if (stores) return stores;
    const { registry, privacy, settings, log } = this.deps;
    const declarations = registry.states.find((s) => s.plugin.name === name)?.plugin.stores ?? [];
    stores = new PluginStores(name, settings.dataDir, declarations, log.child({ plugin: name }), (decl) => (decl.options.perMessage ? this.deps.config().data.flushIntervalMs : DOC_WRITE_PAUSE_MS));
    this.stores.set(name, stores);
    privacy.adopt(stores);
    stores.sweepLogged();
    const joined = stores;
    const leave = this.deps.dailySweeps?.add(`plugin ${name}`, () => joined.sweep());
    if (leave) this.leaveDailySweeps.push(leave);
    return stores;
  }

  /** The static sites plugins serve (mounted by the web server, see `PluginHost.serveSite`). */
  sites(): ReadonlyArray<SiteDeclaration & { plugin: string }> {
    return this.siteList;
  }

  /** Tells the plugins switched on or off since `before` (each plugin's enabled state then) through their listeners. */
  tellSwitched(before: ReadonlyMap<string, boolean>, states: readonly PluginState[]): void {
    for (const state of states) {
      if (before.get(state.plugin.name) === state.enabled) continue;
      for (const listener of this.enabledListeners.get(state.plugin.name) ?? []) {
        // One listener failing never stops the config from applying nor the other listeners.
        Promise.resolve()
          .then(() => listener(state.enabled))
          .catch((err: unknown) => this.deps.log.error({ err, plugin: state.plugin.name }, `plugin ${state.plugin.name} failed to handle being switched ${state.enabled ? 'on' : 'off'}`));
      }
    }
  }

  /** Every plugin's stores' writes, closed (at stop). */
  closeStores(): Array<Promise<void>> {
    for (const leave of this.leaveDailySweeps.splice(0)) leave();
    return [...this.stores.values()].map((s) => s.close());
  }

  /** Resolves once every plugin's retention sweep under way is done. */
  async whenSwept(): Promise<void> {
    await Promise.all([...this.stores.values()].map((stores) => stores.whenSwept()));
  }
}
