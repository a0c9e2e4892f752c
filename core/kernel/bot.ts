import { answerCall } from './calls/incoming-calls.js';
import type { Capabilities } from './capabilities/capabilities.js';
import type { BotConfig, PluginSection } from '../services/config/schema.js';
import type { Settings } from '../services/config/settings.js';
import type { Logger } from '../services/log/logger.js';
import type { OwnerNotifier } from '../services/notices/owner-notifier.js';
import type { AccessControl } from './access/access-control.js';
import type { AutomationDesk } from './automation/desk.js';
import { isBlocked } from './plugin/access.js';
import type { PluginFailure, PluginState } from './plugin/registry.js';
import type { AiService, MessageContext, PluginHost, Tool } from './plugin/message-context.js';
import type { SiteDeclaration } from './plugin/site.js';
import type { EffectGuard, Reaction } from './guard/effect-guard.js';
import type { StatusSource } from './status/status-report.js';
import type { Jail } from '../services/jail/jail.js';
import type { KeyPool } from '../services/providers/key-pool.js';
import { storedMessages, type HistoryStore } from '../services/store/history.js';
import { domainFor } from '../services/store/data-domain.js';
import type { PrivacyRegistry } from '../services/store/privacy.js';
import type { MemoryStore } from '../services/store/memory.js';
import type { IncomingMessage, OutgoingMedia, PollVote, SentMessage } from './port/message.js';
import { composeKernel, type BotDeps, type Kernel } from './bot/compose.js';
import type { SessionState, Transport } from './port/transport.js';
import type { SectionRule } from './plugin/options.js';

/**
 * The bot: a thin face over the kernel's named collaborators (bot/compose.ts makes and wires them): the transport
 * link, the intake (bursts and a per-chat ordered queue feeding the message path, pipeline/message-path.ts), the
 * messages the bot starts, the chat changes (deletes, edits, chat moves), poll votes and the plugin hosts, over the
 * plugins of a plugin/registry. core/kernel/README.md maps the whole kernel.
 *
 * @example
 * const bot = new Bot(deps);
 * await bot.startPlugins();
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
  readonly privacy: PrivacyRegistry;
  readonly jail: Jail;
  readonly audioKeys: KeyPool;
  readonly failures: PluginFailure[];
  /** Who the bot answers and how, as the owners decided it: pairing, group activation, personas, paused chats. */
  readonly access: AccessControl;
  /** The one guard every effect passes (core/kernel/guard): allow, hold for the owner's 👍, or deny. */
  readonly effects: EffectGuard;
  /** Deliveries from outside the chats (hooks, API, MCP), through the guard, and the bot's events for webhooks. */
  readonly automation: AutomationDesk;
  private configValue: BotConfig;
  private readonly k: Kernel;

  constructor(deps: BotDeps) {
    this.configValue = deps.config;
    const k = (this.k = composeKernel(deps, () => this.configValue));
    ({ settings: this.settings, log: this.log, capabilities: this.capabilities, histories: this.histories, memories: this.memories, ai: this.ai, notices: this.notices } = k);
    ({ privacy: this.privacy, jail: this.jail, audioKeys: this.audioKeys, failures: this.failures, access: this.access, effects: this.effects, automation: this.automation } = k);
  }

  /**
   * The top-level config.json sections plugins own (`configSection`), for the dashboard: key, owning plugin, its
   * rule, and the value and problems the plugin sees now.
   */
  configSections(): Array<{ key: string; plugin: string; rule: SectionRule; raw: unknown; problems: string[] }> {
    const { registry } = this.k;
    return registry.configSections().map(({ plugin, rule }) => ({ key: rule.key, plugin, rule, raw: this.configValue.sections?.[rule.key], problems: registry.sectionOf(plugin).problems }));
  }

  /** A plugin's options as `host.options()` gives them (validated, with defaults). */
  optionsOf(name: string): PluginSection {
    return this.k.registry.optionsOf(name);
  }

  /** Where `.status` and the dashboard get the running picture (set by the app, which owns the chain and usage). */
  get statusSource(): StatusSource | undefined {
    return this.k.hosts.statusSource;
  }

  set statusSource(source: StatusSource | undefined) {
    this.k.hosts.statusSource = source;
  }

  /** The live config. */
  get config(): BotConfig {
    return this.configValue;
  }

  /**
   * Applies a new config at once (dashboard edits): plugin enable/disable and access take effect on the next message,
   * and plugins that were switched on or off hear it (`host.onEnabledChange`).
   */
  setConfig(config: BotConfig): void {
    const { registry, hosts } = this.k;
    const before = new Map(registry.states.map((s) => [s.plugin.name, s.enabled]));
    this.configValue = config;
    this.histories.maxMessages = storedMessages(config.history);
    registry.applyConfig(config);
    hosts.tellSwitched(before, registry.states);
  }

  plugins(): readonly PluginState[] {
    return this.k.registry.states;
  }

  /** The bot's own ids: config `targetUserIds` plus the ids the transport learnt at login (phone jid, LID). */
  botIds(): string[] {
    return this.k.link.botIds();
  }

  /** The transport's session (link state), or offline before a transport is connected. */
  session(): SessionState {
    return this.k.link.session();
  }

  /** True when one of `userIds` is an admin of group `chatId` (false where the transport has no group roles). */
  isGroupAdmin(chatId: string, userIds: string[]): Promise<boolean> {
    return this.k.link.isGroupAdmin(chatId, userIds);
  }

  /** The host services handed to a plugin's setup (and seen as `ctx.host` by its handlers and tools). */
  host(name: string): PluginHost {
    return this.k.hosts.host(name);
  }

  /** Starts every plugin in load order (see PluginRegistry.start): failures and clashes stay off, the rest go on. */
  startPlugins(): Promise<void> {
    return this.k.registry.start();
  }

  /** The static sites plugins serve (mounted by the web server, see `PluginHost.serveSite`). */
  sites(): ReadonlyArray<SiteDeclaration & { plugin: string }> {
    return this.k.hosts.sites();
  }

  /** Connects a transport and starts handling its messages. Call `startPlugins()` first. */
  async start(transport: Transport): Promise<void> {
    const { link, setAsideFiles, changes, started } = this.k;
    link.attach(transport);
    // Files set aside in an earlier run: found once now, beside the start (later ones come from the data health).
    void setAsideFiles.load();
    const transportStores = transport.declaredStores?.();
    if (transportStores) this.privacy.adopt(transportStores);
    await this.access.load();
    transport.onRevoke?.((chatId, messageId, by) => changes.revoke(chatId, messageId, by));
    await transport.start((message) => this.handle(message), {
      onRevoke: (chatId, messageId, by) => changes.revoke(chatId, messageId, by),
      onEdit: (chatId, messageId, text, by) => changes.edit(chatId, messageId, text, by),
      onChatIdChange: (from, to) => changes.moveChat(from, to),
      onPollVote: (vote) => this.pollVote(vote),
      onCall: (call) => answerCall(this.configValue.calls, call, (text) => started.tellOwners(text).then(() => undefined)),
      onReaction: (reaction) => this.reaction(reaction),
      onSessionChange: (status, previous) => this.automation.events.emit('link.changed', { status, previous }),
    });
    link.connectedNow();
    // Holds kept from an earlier run lapse on time (and those that lapsed while down are told now).
    void this.effects.resumeLapses().catch((err: unknown) => this.log.warn({ err }, "could not resume the held actions' expiry"));
  }

  /** A private chat is known as `to` from now on instead of `from`: see `ChatChanges.moveChat`. Never rejects. */
  moveChat(from: string, to: string): Promise<void> {
    return this.k.changes.moveChat(from, to);
  }

  /** A vote on a poll the bot sent: see `PollVotes.vote`. Never rejects. */
  pollVote(vote: PollVote): Promise<void> {
    return this.k.pollVotes.vote(vote);
  }

  /**
   * Stops taking new messages and waits, at most `timeoutMs`, for those being handled to finish. Resolves with how
   * many were still being handled when the time was up (0: all finished).
   */
  drain(timeoutMs: number): Promise<number> {
    this.k.link.stoppingNow();
    this.k.intake.bursts.flushAll();
    return this.k.queue.drain(timeoutMs);
  }

  /** Drains (see `drain`, default 10 s), stops the plugins and the transport, and flushes the chat stores. */
  async stop(graceMs = 10_000): Promise<void> {
    const { registry, link, burstTurns, deletedMessages, polls, setAsideFiles, hosts } = this.k;
    const unfinished = await this.drain(graceMs);
    if (unfinished) this.log.warn({ unfinished }, `${unfinished} message(s) were still being handled when the stop's grace time was up; stopping anyway`);
    // A chat summary being made writes the history file when done: it gets the grace time too, before the stores flush.
    let graceTimer: NodeJS.Timeout | undefined;
    await Promise.race([this.ai.idle?.(), new Promise<void>((resolve) => (graceTimer = setTimeout(resolve, graceMs)))]);
    clearTimeout(graceTimer);
    this.ai.stop?.();
    this.effects.stop();
    await registry.stop();
    await link.transport?.stop();
    // A store that cannot write rejects; the app's data health lists it and the stop reports it (never silently).
    await Promise.allSettled([this.histories.flush(), this.memories.flush(), this.access.flush(), burstTurns.flush(), deletedMessages.flush(), polls.flush(), setAsideFiles.close(), ...hosts.closeStores()]);
  }

  /** Resolves when no message is being handled. */
  async idle(): Promise<void> {
    await this.k.intake.bursts.settled();
    await this.k.queue.idle();
    await this.ai.idle?.();
    // The status messages of long turns take their last state.
    await this.k.intake.turnsSettled();
  }

  /**
   * Resolves once no message is being handled (`idle`) and the data work behind the replies is done too: history
   * folds, the writes scheduled after their pause, the plugins' retention sweeps. Nothing is forced (a flush would
   * hide that work): a test awaits this to see what the bot does in the background, instead of sleeping.
   */
  async whenStoresIdle(): Promise<void> {
    await this.idle();
    await this.k.hosts.whenSwept();
    await this.histories.whenIdle();
    await domainFor(this.settings.dataDir).whenIdle();
  }

  /** Handles one inbound message: see `Intake.handle`. Never rejects. */
  handle(message: IncomingMessage): Promise<void> {
    return this.k.intake.handle(message);
  }

  /** The context of one inbound message (see pipeline/context). */
  private createContext(message: IncomingMessage, rawText: string): MessageContext {
    return this.k.intake.context(message, rawText);
  }

  /** A text the bot starts (not a reply in the chat that asked): see `StartedMessages.text`. */
  startText(chatId: string, text: string): Promise<SentMessage> {
    return this.k.started.text(chatId, text);
  }

  /** Media the bot starts: see `StartedMessages.media`. */
  startMedia(chatId: string, media: OutgoingMedia): Promise<SentMessage> {
    return this.k.started.media(chatId, media);
  }

  /** A reaction someone put on a message: an owner's 👍/👎 on a held action's message answers it. Never rejects. */
  reaction(reaction: Reaction): Promise<void> {
    if (isBlocked([reaction.senderId, ...(reaction.senderAltId ? [reaction.senderAltId] : [])], this.configValue)) return Promise.resolve();
    if (this.k.link.isOperator(reaction.senderId)) reaction = { ...reaction, fromOperator: true };
    return this.effects.onReaction(reaction).then(
      () => undefined,
      (err: unknown) => this.log.error({ err, chat: reaction.chatId }, 'could not handle a reaction'),
    );
  }

  /** A turn of `senderId` in `chatId` that no one typed now (a scheduled task): see `PluginHost.promptAs`. */
  promptAs(chatId: string, senderId: string, text: string, system?: string, hidden = false): Promise<string> {
    return this.k.turns.promptAs(chatId, senderId, text, system, hidden);
  }

  /** Tools offered to the model for this message: from enabled, started plugins whose needs are met. */
  toolsFor(ctx: MessageContext): Tool[] {
    return this.k.tools(ctx);
  }
}
