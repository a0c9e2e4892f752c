import path from 'node:path';
import type { Capabilities } from './capabilities/capabilities.js';
import type { BotConfig, PluginSection } from './config/schema.js';
import type { Settings } from './config/settings.js';
import type { Logger } from './log/logger.js';
import { mentionsBot, stripBotMentions } from './mentions/mentions-bot.js';
import { botAnswers, isOwnerId, mayUse, senderIds } from './plugin/access.js';
import type Router from '@koa/router';
import { pluginErrors, PluginError } from './plugin/errors.js';
import { instantiate, type HandlerEntry, type PluginInstance } from './plugin/instance.js';
import { resolveOptions } from './plugin/options.js';
import type { BotContext, Plugin, PluginHost, ToolDefinition } from './plugin/types.js';
import { compose, type Middleware } from './pipeline/compose.js';
import { firstWord, looksBinary, matchTrigger, splitLongText, type TriggerHit } from './pipeline/match.js';
import type { AiService } from './plugin/ai.js';
import { AllProvidersFailedError } from './providers/types.js';
import type { HistoryStore } from './store/history.js';
import { historyParticipant, memoryParticipant, PrivacyRegistry } from './store/privacy.js';
import type { MemoryStore } from './store/memory.js';
import type { IncomingMessage, OutgoingMedia, SentMessage } from './transport/message.js';
import type { Transport } from './transport/transport.js';
import { logOnlyNotifier, type OwnerNotifier } from './notices/owner-notifier.js';
import { Jail } from './jail/jail.js';
import type { StatusReport, StatusSource } from './status/status-report.js';
import type { SessionState } from './transport/transport.js';

/** Where `host.send` / `host.sendMedia` go: the paced outbox (core/sending/outbox.ts). */
export interface BotInitiatedSender {
  sendText(chatId: string, text: string): Promise<SentMessage>;
  sendMedia(chatId: string, media: OutgoingMedia): Promise<SentMessage>;
}

/** Longest text the bot will read; longer messages get a clear refusal instead of a silent cut. */
export const MAX_INBOUND_CHARS = 16_000;

export interface PluginState {
  plugin: Plugin;
  enabled: boolean;
  started: boolean;
  /** Why the plugin is not (fully) active, for the start log and the dashboard. */
  problem?: string;
  /** Refused at registration (a coded PluginError): it stays off whatever config.json says. */
  refused?: PluginError;
  /** What the plugin offers once started (handlers, observers, tools, routes, stop). */
  instance?: PluginInstance;
}

/** Names the core itself answers or offers; a plugin cannot take them. */
const CORE_COMMANDS = ['help'];
const CORE_LITERALS = ['/help'];
const CORE_TOOLS = ['remember'];

/** A plugin that could not be loaded or registered, for the start log and the dashboard. */
export interface PluginFailure {
  source: string;
  reason: string;
}

export interface BotDeps {
  settings: Settings;
  config: BotConfig;
  log: Logger;
  plugins: Plugin[];
  capabilities: Capabilities;
  histories: HistoryStore;
  memories: MemoryStore;
  /** Owner notices; default: log only. */
  notices?: OwnerNotifier;
  /** The jail for helper programs; default: one run as uid 65534. */
  jail?: Jail;
  /** The safe-sending limiter for messages the bot starts on its own; default: straight to the transport. */
  outbox?: BotInitiatedSender;
  /** Where registration failures are reported (shared with the app's `pluginFailures`). */
  failures?: PluginFailure[];
  /** The config.json file (plugins find the owner's files beside it); default `config.json` in the working folder. */
  configFile?: string;
  /** Builds the AI service once the bot exists (it needs the bot's tools). */
  createAi: (tools: (ctx: BotContext) => ToolDefinition[]) => AiService;
}

/**
 * The bot: a per-chat ordered queue feeding a Koa-style middleware pipeline
 * (junk filter → who-the-bot-answers → observers → addressed? → plugin routing → unknown command → AI chat).
 *
 * @example
 * const bot = new Bot(deps);
 * await bot.start(new MemoryTransport());
 */
export class Bot {
  readonly settings: Settings;
  readonly log: Logger;
  readonly capabilities: Capabilities;
  readonly histories: HistoryStore;
  readonly memories: MemoryStore;
  readonly ai: AiService;
  readonly notices: OwnerNotifier;
  /** What the bot keeps about people, for `.mydata`, the dashboard's delete and revoked messages. */
  readonly privacy = new PrivacyRegistry();
  readonly jail: Jail;
  private configValue: BotConfig;
  private transport: Transport | undefined;
  private readonly states: PluginState[];
  /** The same states in load order: of two clashing plugins, the later one stays off. */
  private readonly loadOrder: PluginState[];
  readonly failures: PluginFailure[];
  private readonly optionsCache = new WeakMap<BotConfig, Map<string, Record<string, unknown>>>();
  private readonly queues = new Map<string, Promise<void>>();
  private readonly extra: Middleware<BotContext>[] = [];
  private pipeline: ((ctx: BotContext) => Promise<void>) | undefined;
  private readonly hosts = new Map<string, PluginHost>();
  private inFlight = 0;
  /** Where `.status` and the dashboard get the running picture (set by the app, which owns the chain and usage). */
  statusSource: StatusSource | undefined;
  private idleWaiters: Array<() => void> = [];
  private draining = false;
  private readonly outbox: BotInitiatedSender | undefined;
  private readonly configFile: string;

  constructor(deps: BotDeps) {
    this.configFile = path.resolve(deps.configFile ?? 'config.json');
    this.settings = deps.settings;
    this.configValue = deps.config;
    this.log = deps.log;
    this.capabilities = deps.capabilities;
    this.histories = deps.histories;
    this.memories = deps.memories;
    this.notices = deps.notices ?? logOnlyNotifier(deps.log);
    this.jail = deps.jail ?? new Jail();
    this.outbox = deps.outbox;
    this.privacy.register(historyParticipant(this.histories));
    this.privacy.register(memoryParticipant(this.memories));
    this.failures = deps.failures ?? [];
    this.loadOrder = deps.plugins.map((plugin) => ({ plugin, enabled: this.isEnabledIn(plugin, deps.config), started: false }));
    this.states = [...this.loadOrder].sort((a, b) => (a.plugin.order ?? 100) - (b.plugin.order ?? 100));
    this.ai = deps.createAi((ctx) => this.toolsFor(ctx));
    this.registerCapabilities();
  }

  /** Refuses a plugin with a coded error: it stays off, the start log and the dashboard say why. */
  private refuse(state: PluginState, error: PluginError): void {
    state.refused = error;
    state.enabled = false;
    state.started = false;
    state.problem = error.message;
    this.failures.push({ source: `plugin ${state.plugin.name}`, reason: error.message });
    this.log.error({ plugin: state.plugin.name, code: error.code }, error.message);
  }

  /** Capabilities that plugins provide are declared, then every `needs` is checked against the known names. */
  private registerCapabilities(): void {
    const owners = new Map<string, string>(this.capabilities.names().map((n) => [n, 'the core']));
    for (const state of this.loadOrder) {
      for (const provided of state.plugin.provides ?? []) {
        const owner = owners.get(provided.name);
        if (owner) {
          this.refuse(state, pluginErrors.duplicateCapability(state.plugin.name, provided.name, owner));
          break;
        }
        owners.set(provided.name, `plugin "${state.plugin.name}"`);
        const host = this.host(state.plugin.name);
        this.capabilities.define(
          provided.name,
          async () => {
            const answer = (await provided.detect(host as never)) as boolean | { ok: boolean; detail: string };
            const status = typeof answer === 'boolean' ? { ok: answer, detail: '' } : answer;
            return { ok: status.ok, detail: status.detail || (status.ok ? 'available' : provided.missing) };
          },
          provided.live,
        );
      }
    }
    for (const state of this.loadOrder) {
      if (state.refused) continue;
      const unknown = (state.plugin.needs ?? []).find((need) => !this.capabilities.known(need));
      if (unknown) this.refuse(state, pluginErrors.unknownNeed(state.plugin.name, unknown, this.capabilities.names()));
    }
  }

  /**
   * A plugin's options as its handlers, tools and routes see them. Contract v2: validated, defaults filled in
   * (cached per config, so a dashboard edit is seen at once). The old contract: its raw config.json section.
   */
  optionsOf(name: string): PluginSection {
    const plugin = this.loadOrder.find((s) => s.plugin.name === name)?.plugin;
    if (!plugin?.setup || !plugin.optionsSchema) return this.section(name);
    let perConfig = this.optionsCache.get(this.configValue);
    if (!perConfig) this.optionsCache.set(this.configValue, (perConfig = new Map()));
    let options = perConfig.get(name);
    if (!options) {
      const resolved = resolveOptions(plugin.optionsSchema, this.configValue.plugins[name]);
      if (resolved.problems.length) this.log.warn({ plugin: name, problems: resolved.problems }, 'plugin options are invalid; using the defaults');
      perConfig.set(name, (options = resolved.options));
    }
    return options as PluginSection;
  }

  /** The live config. */
  get config(): BotConfig {
    return this.configValue;
  }

  /** Applies a new config at once (dashboard edits): plugin enable/disable and access take effect on the next message. */
  setConfig(config: BotConfig): void {
    this.configValue = config;
    this.histories.maxMessages = config.history.maxMessages;
    for (const state of this.states) state.enabled = !state.refused && this.isEnabledIn(state.plugin, config);
  }

  /** Adds middleware that runs after the built-in filters and before plugin routing (grammY-style `use`). */
  use(middleware: Middleware<BotContext>): this {
    this.extra.push(middleware);
    this.pipeline = undefined;
    return this;
  }

  plugins(): readonly PluginState[] {
    return this.states;
  }

  /** The bot's own ids: config `targetUserIds` plus the ids the transport learnt at login (phone jid, LID). */
  botIds(): string[] {
    return [...this.configValue.targetUserIds, ...(this.transport?.ownIds() ?? [])];
  }

  /** The transport's session (link state), or offline before a transport is connected. */
  session(): SessionState {
    return this.transport?.session() ?? { status: 'offline', lastError: 'no transport connected yet' };
  }

  /** True when one of `userIds` is an admin of group `chatId` (false where the transport has no group roles). */
  async isGroupAdmin(chatId: string, userIds: string[]): Promise<boolean> {
    const transport = this.transport;
    if (!transport?.isGroupAdmin) return false;
    for (const id of userIds) {
      try {
        if (await transport.isGroupAdmin(chatId, id)) return true;
      } catch (err) {
        this.log.warn({ err, chat: chatId }, 'could not read the group admins');
      }
    }
    return false;
  }

  private isEnabledIn(plugin: Plugin, config: BotConfig): boolean {
    return config.plugins[plugin.name]?.enabled ?? plugin.enabledByDefault ?? true;
  }

  private section(name: string): PluginSection {
    return this.configValue.plugins[name] ?? {};
  }

  /** The host services handed to a plugin's start/routes/tools. */
  host(name: string): PluginHost {
    let host = this.hosts.get(name);
    if (host) return host;
    const bot = this;
    host = {
      name,
      settings: this.settings,
      config: () => bot.configValue,
      configFile: this.configFile,
      options: () => bot.optionsOf(name),
      setting: (variable) => bot.settings.env[variable],
      dataDir: this.settings.dataDir,
      log: this.log.child({ plugin: name }),
      capabilities: this.capabilities,
      ai: this.ai,
      histories: this.histories,
      memories: this.memories,
      // Bot-initiated: paced by the outbox (WhatsApp bans accounts that send too much too fast); replies are not.
      send: (chatId, text) => (bot.outbox ? bot.outbox.sendText(chatId, text) : bot.requireTransport().sendText(chatId, text)),
      sendMedia: (chatId, media) => (bot.outbox ? bot.outbox.sendMedia(chatId, media) : bot.requireTransport().sendMedia(chatId, media)),
      botIds: () => bot.botIds(),
      isOwner: (id) => isOwnerId([id], bot.configValue),
      isGroupAdmin: (chatId, userIds) => bot.isGroupAdmin(chatId, userIds),
      status: (): Promise<StatusReport> => {
        if (!bot.statusSource) throw new Error('no status source: the bot runs outside the app');
        return bot.statusSource();
      },
      notices: this.notices,
      privacy: this.privacy,
      jail: this.jail,
    };
    this.hosts.set(name, host);
    return host;
  }

  private requireTransport(): Transport {
    if (!this.transport) throw new Error('The bot has no transport yet: call bot.start(transport) first');
    return this.transport;
  }

  /**
   * Starts every plugin (v2: `setup(host)`; the old contract: `start(host)`) in load order. One that throws is
   * reported and left inactive; one whose commands or tools clash with an earlier one is refused; the others go on.
   */
  async startPlugins(): Promise<void> {
    const commands = new Map<string, string>([...CORE_COMMANDS.map((c) => [`command:${c}`, 'the core'] as const), ...CORE_LITERALS.map((l) => [`literal:${l}`, 'the core'] as const)]);
    const tools = new Map<string, string>(CORE_TOOLS.map((t) => [t, 'the core']));
    for (const state of this.loadOrder) {
      if (state.refused) continue;
      const name = state.plugin.name;
      let instance: PluginInstance;
      try {
        instance = await instantiate(state.plugin, { host: this.host(name), view: (ctx) => this.contextFor(ctx, name) });
      } catch (err) {
        state.started = false;
        state.problem = `start failed: ${(err as Error).message}`;
        this.log.error({ plugin: name, err }, 'plugin failed to start; it stays off');
        continue;
      }
      const clash = this.clashOf(name, instance, commands, tools);
      if (clash) {
        this.refuse(state, clash);
        await Promise.resolve(instance.stop?.()).catch((err) => this.log.warn({ plugin: name, err }, 'plugin stop failed'));
        continue;
      }
      for (const key of this.commandKeys(instance)) commands.set(key, `plugin "${name}"`);
      for (const tool of instance.tools) tools.set(tool.name, `plugin "${name}"`);
      state.instance = instance;
      state.started = true;
    }
  }

  private commandKeys(instance: PluginInstance): string[] {
    return instance.handlers.flatMap(({ trigger }) =>
      'command' in trigger ? [`command:${trigger.command.toLowerCase()}`] : 'literal' in trigger ? [`literal:${trigger.literal.toLowerCase()}`] : [],
    );
  }

  /** The first command or tool of `instance` that an earlier plugin (or the core) already has. */
  private clashOf(name: string, instance: PluginInstance, commands: Map<string, string>, tools: Map<string, string>): PluginError | undefined {
    for (const key of this.commandKeys(instance)) {
      const owner = commands.get(key);
      if (owner) {
        const word = key.startsWith('command:') ? `${this.configValue.prefix}${key.slice('command:'.length)}` : key.slice('literal:'.length);
        return pluginErrors.duplicateCommand(name, word, owner);
      }
    }
    for (const tool of instance.tools) {
      const unknown = (tool.needs ?? []).find((need) => !this.capabilities.known(need));
      if (unknown) return pluginErrors.unknownNeed(name, unknown, this.capabilities.names());
      const owner = tools.get(tool.name);
      if (owner) return pluginErrors.duplicateTool(name, tool.name, owner);
    }
    return undefined;
  }

  /** Mounts the routes of every started plugin on the web server's router. */
  mountRoutes(router: Router): void {
    for (const state of this.states) {
      if (!state.instance?.routes) continue;
      try {
        state.instance.routes(router);
      } catch (err) {
        this.log.error({ err, plugin: state.plugin.name }, 'plugin routes could not be mounted');
      }
    }
  }

  /** Connects a transport and starts handling its messages. Call `startPlugins()` first. */
  async start(transport: Transport): Promise<void> {
    this.transport = transport;
    transport.onRevoke?.((chatId, messageId) => this.revoke(chatId, messageId));
    await transport.start((message) => this.handle(message), { onRevoke: (chatId, messageId) => this.revoke(chatId, messageId) });
  }

  /**
   * A message deleted for everyone: removed from history, memory, the voice archive and its index (every privacy
   * participant). Queued behind the chat's messages, so a delete that arrives while its message is being handled
   * still finds it. Never rejects.
   */
  revoke(chatId: string, messageId: string): Promise<void> {
    const previous = this.queues.get(chatId) ?? Promise.resolve();
    const run = previous.then(async () => {
      const removed = await this.privacy.revoke(chatId, messageId);
      this.log.info({ chat: chatId, messageId, removed }, 'a message deleted for everyone was removed from the stored data');
    });
    const tail = run.catch((err) => this.log.error({ err, chat: chatId, messageId }, 'could not remove a message deleted for everyone'));
    this.queues.set(chatId, tail);
    return tail.finally(() => {
      if (this.queues.get(chatId) === tail) this.queues.delete(chatId);
    });
  }

  /**
   * Stops taking new messages and waits, at most `timeoutMs`, for those being handled to finish. Resolves with how
   * many were still being handled when the time was up (0: all finished).
   */
  async drain(timeoutMs: number): Promise<number> {
    this.draining = true;
    let timer: NodeJS.Timeout | undefined;
    const timeUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([this.idle(), timeUp]);
    clearTimeout(timer);
    return this.inFlight;
  }

  /** Drains (see `drain`, default 10 s), stops the plugins and the transport, and flushes the chat stores. */
  async stop(graceMs = 10_000): Promise<void> {
    const unfinished = await this.drain(graceMs);
    if (unfinished) this.log.warn({ unfinished }, `${unfinished} message(s) were still being handled when the stop's grace time was up; stopping anyway`);
    for (const state of this.states) {
      try {
        await state.instance?.stop?.();
      } catch (err) {
        this.log.warn({ plugin: state.plugin.name, err }, 'plugin stop failed');
      }
    }
    await this.transport?.stop();
    // A store that cannot write rejects; the app's data health lists it and the stop reports it (never silently).
    await Promise.allSettled([this.histories.flush(), this.memories.flush()]);
  }

  /** Resolves when no message is being handled. */
  idle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Handles one inbound message. Messages of one chat are handled strictly in order; different chats in parallel.
   * Never rejects: a failure is logged and, where the user expects an answer, told in a short sentence.
   */
  handle(message: IncomingMessage): Promise<void> {
    if (this.draining) {
      this.log.info({ chat: message.chatId }, 'a message came in while the bot is stopping: not taken');
      return Promise.resolve();
    }
    this.inFlight++;
    const previous = this.queues.get(message.chatId) ?? Promise.resolve();
    const run = previous.then(() => this.process(message));
    const tail = run.catch((err) => this.log.error({ err, chat: message.chatId }, 'message handling failed'));
    this.queues.set(message.chatId, tail);
    return tail.finally(() => {
      if (this.queues.get(message.chatId) === tail) this.queues.delete(message.chatId);
      if (--this.inFlight === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    });
  }

  private async process(message: IncomingMessage): Promise<void> {
    if (message.fromMe) return;
    const text = typeof message.text === 'string' ? message.text : '';
    if (!text.trim() && !message.media) return;
    if (looksBinary(text)) {
      this.log.debug({ chat: message.chatId }, 'ignored a binary message');
      return;
    }
    const ctx = this.createContext(message, text);
    this.pipeline ??= compose([...this.builtInStages(), ...this.extra, this.routeStage()]);
    await this.pipeline(ctx);
  }

  private createContext(message: IncomingMessage, rawText: string, pluginName?: string): BotContext {
    const bot = this;
    const transport = this.requireTransport();
    const botIds = this.botIds();
    const ids = senderIds(message);
    // Child loggers are made on first use: most messages never log, and pino's child() is not free.
    let childLog: Logger | undefined;
    const baseLog = this.log;
    const chatId = message.chatId;
    let incomingRecorded = false;
    const ctx: BotContext = {
      message,
      text: stripBotMentions(rawText, botIds).trim(),
      chatId,
      senderId: message.senderId,
      addressed: mentionsBot(message, botIds),
      isOwner: isOwnerId(ids, this.configValue),
      async reply(replyText, options) {
        const parts = splitLongText(String(replyText));
        let sent: SentMessage = { id: '' };
        for (const [i, part] of parts.entries()) {
          sent = await transport.sendText(chatId, part, { quotedId: options?.quote && i === 0 ? message.id : undefined });
        }
        return sent;
      },
      react: (emoji) => transport.react(chatId, message.id, emoji),
      sendMedia: (media: OutgoingMedia, options) => transport.sendMedia(chatId, media, { quotedId: options?.quote ? message.id : undefined }),
      edit: (sent, newText) => transport.editText(chatId, sent.id, newText),
      typing: (on) => transport.setTyping(chatId, on),
      history: {
        recent: (limit) => bot.histories.recent(chatId, limit),
        append: (entry) => bot.histories.append(chatId, entry),
        async recordIncoming(text, extra) {
          if (incomingRecorded) return;
          incomingRecorded = true;
          await bot.histories.append(chatId, { id: message.id, role: 'user', senderId: message.senderId, senderName: message.senderName, text, at: message.timestamp, ...(extra?.media ? { media: extra.media } : {}) });
        },
        incomingRecorded: () => incomingRecorded,
      },
      memory: {
        facts: () => bot.memories.facts(chatId),
        remember: (fact) => bot.memories.remember(chatId, fact, message.senderId),
      },
      ai: this.ai,
      get options() {
        return pluginName ? bot.optionsOf(pluginName) : {};
      },
      host: pluginName ? this.host(pluginName) : this.host('core'),
      get log() {
        return (childLog ??= baseLog.child({ chat: chatId, ...(pluginName ? { plugin: pluginName } : {}) }));
      },
      state: {},
    };
    return ctx;
  }

  /** A copy of the context seen through one plugin (its options, host and logger). */
  private contextFor(ctx: BotContext, pluginName: string): BotContext {
    const bot = this;
    let log: Logger | undefined;
    return Object.create(ctx, {
      options: { get: () => bot.optionsOf(pluginName) },
      host: { value: this.host(pluginName) },
      log: { get: () => (log ??= ctx.log.child({ plugin: pluginName })) },
    }) as BotContext;
  }

  private builtInStages(): Middleware<BotContext>[] {
    return [
      // Who the bot answers at all: block list, allow list.
      async (ctx, next) => {
        if (!botAnswers(senderIds(ctx.message), this.configValue)) return;
        await next();
      },
      // Observers see every message, addressed or not; one failing never stops the others or the reply.
      async (ctx, next) => {
        for (const state of this.activeStates()) {
          if (!state.instance?.observers.length) continue;
          if (!mayUse(this.section(state.plugin.name).access, senderIds(ctx.message), this.configValue)) continue;
          if (this.capabilities.missing(state.plugin.needs ?? []).length) continue;
          try {
            for (const observe of state.instance.observers) await observe(this.contextFor(ctx, state.plugin.name));
          } catch (err) {
            ctx.log.error({ err, plugin: state.plugin.name }, 'observer plugin failed');
          }
        }
        await next();
      },
      // Groups: only messages that mention or reply to the bot go further (group context is still kept).
      async (ctx, next) => {
        const commandLike = ctx.text.startsWith(this.configValue.prefix) || /^\/\w/.test(ctx.text);
        if (!ctx.addressed && !(this.configValue.groups.commandsWithoutMention && commandLike)) {
          if (ctx.message.isGroup && ctx.text) await ctx.history.recordIncoming(ctx.text);
          return;
        }
        if (ctx.text.length > MAX_INBOUND_CHARS) {
          await ctx.reply(`That message is too long for me (${ctx.text.length} characters; the limit is ${MAX_INBOUND_CHARS}). Please send it in smaller parts.`);
          return;
        }
        await next();
      },
    ];
  }

  private activeStates(): PluginState[] {
    return this.states.filter((s) => s.enabled && s.started && s.instance);
  }

  private routeStage(): Middleware<BotContext> {
    return async (ctx) => {
      const prefix = this.configValue.prefix;
      for (const state of this.activeStates()) {
        const plugin = state.plugin;
        for (const entry of state.instance!.handlers) {
          const { trigger } = entry;
          let hit;
          try {
            // A `when` predicate may read the plugin's own options, so it sees the plugin's view of the context.
            hit = matchTrigger(trigger, 'when' in trigger ? this.contextFor(ctx, plugin.name) : ctx, prefix);
          } catch (err) {
            ctx.log.error({ err, plugin: plugin.name }, 'trigger check failed');
            continue;
          }
          if (!hit) continue;
          await this.runPlugin(state, entry, ctx, hit);
          return;
        }
      }
      const { word } = firstWord(ctx.text);
      const lower = word.toLowerCase();
      if (lower === `${prefix}help` || lower === '/help') {
        await ctx.reply(this.helpText(ctx));
        return;
      }
      const off = this.disabledPluginFor(lower, prefix);
      if (off) {
        await ctx.reply(`${word.slice(0, 40)} is turned off: the owner switched off ${off.plugin.name} (${off.plugin.description.toLowerCase()}). Try ${prefix}help for what I can do now.`);
        return;
      }
      if (word.length > prefix.length && word.startsWith(prefix) && /^[a-z0-9]/i.test(word.slice(prefix.length))) {
        await ctx.reply(`Unknown command ${word.slice(0, 40)}. Try ${prefix}help for the list of commands.`);
        return;
      }
      await this.chat(ctx);
    };
  }

  /** A plugin turned off in config.json whose command or literal is `word` (lower case). */
  private disabledPluginFor(word: string, prefix: string): PluginState | undefined {
    if (!word) return undefined;
    return this.states.find(
      (s) =>
        !s.enabled &&
        (s.instance?.handlers ?? []).some(({ trigger: t }) => ('command' in t && `${prefix}${t.command}`.toLowerCase() === word) || ('literal' in t && t.literal.toLowerCase() === word)),
    );
  }

  private async runPlugin(state: PluginState, entry: HandlerEntry, base: BotContext, hit: TriggerHit): Promise<void> {
    const plugin = state.plugin;
    const { trigger } = entry;
    const ctx = this.contextFor(base, plugin.name);
    // The old contract's `missing(names, ctx)` may read which trigger matched.
    ctx.trigger = trigger;
    if (hit.command) ctx.command = hit.command;
    if (hit.match) ctx.match = hit.match;
    if (!mayUse(this.section(plugin.name).access, senderIds(ctx.message), this.configValue)) {
      const what = 'command' in trigger ? `${this.configValue.prefix}${trigger.command}` : 'literal' in trigger ? trigger.literal : plugin.name;
      await ctx.reply(`Sorry, you are not allowed to use ${what} here.`);
      return;
    }
    const missing = this.capabilities.missing(plugin.needs ?? []);
    if (missing.length) {
      const text =
        typeof plugin.missing === 'function'
          ? plugin.missing(missing, ctx)
          : plugin.missing ?? `${plugin.name} is unavailable right now: ${missing.map((m) => `${m} (${this.capabilities.status(m).detail})`).join(', ')}.`;
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

  /** Free text nobody claimed goes to the main model. */
  private async chat(ctx: BotContext): Promise<void> {
    if (!ctx.text) {
      const help = `${this.configValue.prefix}help`;
      if (ctx.message.media) await ctx.reply(`I don't do anything with a ${ctx.message.media.kind} on its own. Send ${help} to see what I can do with media.`);
      else await ctx.reply(`Yes? Ask me anything, or send ${help} for my commands.`);
      return;
    }
    if (!this.capabilities.has('chat') || !this.ai.available()) {
      await ctx.reply(new AllProvidersFailedError().message);
      return;
    }
    try {
      const answer = await this.ai.respond(ctx);
      if (answer.trim()) await ctx.reply(answer);
    } catch (err) {
      if (err instanceof AllProvidersFailedError) {
        ctx.log.warn({ causes: err.causes }, 'every provider failed');
        await ctx.reply(err.message);
      } else {
        ctx.log.error({ err }, 'AI chat failed');
        await ctx.reply('Sorry, I could not answer that just now. Please try again.');
      }
    }
  }

  /** `.help`: the commands of the enabled plugins this sender may use. */
  helpText(ctx: BotContext): string {
    const prefix = this.configValue.prefix;
    const lines = [`*${this.configValue.botName}*: here is what I can do.`, ''];
    for (const state of this.activeStates()) {
      if (!mayUse(this.section(state.plugin.name).access, senderIds(ctx.message), this.configValue)) continue;
      for (const { trigger: t } of state.instance!.handlers) {
        // Usage lines are written with the default "." prefix; show them with the configured one.
        if ('command' in t) lines.push(`${t.usage?.replace(/^\./, prefix) ?? prefix + t.command}: ${t.help ?? state.plugin.description}`);
        else if ('literal' in t) lines.push(`${t.usage ?? t.literal}: ${t.help ?? state.plugin.description}`);
        else if ('media' in t && t.help) lines.push(`(${[t.media].flat().join('/')}): ${t.help}`);
        else if ('when' in t && t.help) lines.push(`${t.usage ?? `(${state.plugin.name})`}: ${t.help}`);
      }
    }
    lines.push(`${prefix}help: this list`, '', 'Anything else is answered by the AI' + (ctx.message.isGroup ? ' when you mention me or reply to me.' : '.'));
    return lines.join('\n');
  }

  /** Tools offered to the model for this message: from enabled, started plugins whose needs are met. */
  toolsFor(ctx: BotContext): ToolDefinition[] {
    const tools: ToolDefinition[] = [];
    for (const state of this.activeStates()) {
      const plugin = state.plugin;
      const list = state.instance!.tools;
      if (!list.length) continue;
      if (this.capabilities.missing(plugin.needs ?? []).length) continue;
      if (!mayUse(this.section(plugin.name).access, senderIds(ctx.message), this.configValue)) continue;
      for (const tool of list) if (!this.capabilities.missing(tool.needs ?? []).length) tools.push(tool);
    }
    // Tools a plugin finds at run time were never checked at registration: a name already taken is left out.
    const taken = new Map<string, string>([...CORE_TOOLS.map((t) => [t, 'the core'] as const), ...tools.map((t) => [t.name, 'a plugin'] as const)]);
    for (const state of this.activeStates()) {
      const plugin = state.plugin;
      if (!state.instance!.toolsFor) continue;
      if (this.capabilities.missing(plugin.needs ?? []).length) continue;
      if (!mayUse(this.section(plugin.name).access, senderIds(ctx.message), this.configValue)) continue;
      let found: ToolDefinition[];
      try {
        found = state.instance!.toolsFor(ctx);
      } catch (err) {
        this.log.error({ plugin: plugin.name, err }, 'plugin tools could not be listed; none of them are offered for this message');
        continue;
      }
      for (const tool of found) {
        if (this.capabilities.missing(tool.needs ?? []).length) continue;
        const owner = taken.get(tool.name);
        if (owner) {
          this.log.warn({ plugin: plugin.name, tool: tool.name, owner }, `plugin "${plugin.name}" offers a tool "${tool.name}" that ${owner} already has; it is not offered`);
          continue;
        }
        taken.set(tool.name, `plugin "${plugin.name}"`);
        tools.push(tool);
      }
    }
    return tools;
  }
}
