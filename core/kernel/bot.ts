import { answerCall } from './calls/incoming-calls.js';
import path from 'node:path';
import type { Capabilities } from './capabilities/capabilities.js';
import { toolsFor } from './chat/tool-assembly.js';
import { quotedWordsReaderFor } from './chat/quoted-words.js';
import type { TurnPolicy } from './plugin/types.js';
import type { QuotedWordsEntry } from './plugin/instance.js';
import { runScheduledTurn } from './chat/scheduled-turn.js';
import { PollBook } from './chat/polls.js';
import type { BotConfig, PluginSection } from '../services/config/schema.js';
import type { Settings } from '../services/config/settings.js';
import type { Logger } from '../services/log/logger.js';
import { logOnlyNotifier, type OwnerNotifier } from '../services/notices/owner-notifier.js';
import { BurstTurns } from './pipeline/burst-turns.js';
import { DeletedMessages } from './pipeline/deleted-messages.js';
import { ChatQueue } from './pipeline/chat-queue.js';
import type { ContextDeps } from './pipeline/context.js';
import { boundDownloads } from './pipeline/media-bounds.js';
import { AccessControl } from './access/access-control.js';
import { accessDocument } from './access/access-store.js';
import { isBlocked, isOwnerId } from './plugin/access.js';
import { PluginRegistry, type PluginFailure, type PluginState } from './plugin/registry.js';
import type { AiService, MessageContext, Plugin, PluginHost, SiteDeclaration, Tool } from './plugin/types.js';
import { corePluginRule, FALLBACK_PLUGIN, GUARD_HOLDS, GUARD_PLUGIN } from './core-plugins/index.js';
import { EffectGuard, type Reaction } from './guard/effect-guard.js';
import { AutomationDesk } from './automation/desk.js';
import { EFFECT_KINDS, policyOf } from './guard/policy.js';
import { guardedTool, heldToolEffect, runHeldTool } from './guard/guarded-tools.js';
import type { StatusSource } from './status/status-report.js';
import { Jail } from '../services/jail/jail.js';
import { KeyPool } from '../services/providers/key-pool.js';
import { storedMessages, type HistoryStore } from '../services/store/history.js';
import { SetAsideFiles } from '../services/store/set-aside-files.js';
import { domainFor, healthFor } from '../services/store/data-domain.js';
import type { DataHealth } from '../services/store/data-health.js';
import { historyParticipant, memoryParticipant, PrivacyRegistry, summaryParticipant } from '../services/store/privacy.js';
import type { MemoryStore } from '../services/store/memory.js';
import type { IncomingMessage, OutgoingMedia, PollVote, SentMessage } from './port/message.js';
import { userPart } from './port/ids.js';
import { ChatChanges } from './bot/chat-changes.js';
import { StartedMessages, type BotInitiatedSender } from './bot/started-messages.js';
import { Intake } from './bot/intake.js';
import { PluginHosts } from './bot/plugin-hosts.js';
import { TransportLink } from './bot/transport-link.js';
import { privateChatIdOf, type SessionState, type Transport } from './port/transport.js';
import { CORE_CONFIG_KEYS } from '../services/config/config-file.js';
import type { SectionRule } from './plugin/options.js';


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
  /** The audio keys' pool, shared with the provider chain; default: a pool of the settings' audio keys. */
  audioKeys?: KeyPool;
  /** The safe-sending limiter for messages the bot starts on its own; default: straight to the transport. */
  outbox?: BotInitiatedSender;
  /** Where registration failures are reported (shared with the app's `pluginFailures`). */
  failures?: PluginFailure[];
  /** The config.json file (plugins find the owner's files beside it); default `config.json` in the working folder. */
  configFile?: string;
  /** The data folder's health: it tells of each file set aside, for the index of set-aside files; default: found by path. */
  dataHealth?: DataHealth;
  /** Builds the AI service once the bot exists (it needs the bot's tools). */
  createAi: (tools: (ctx: MessageContext) => Tool[], quotedReader: (ctx: MessageContext) => QuotedWordsEntry | undefined, turnPolicy: () => TurnPolicy | undefined) => AiService;
}

/**
 * The bot: a thin composition. Bursts and a per-chat ordered queue feed the message path (pipeline/message-path.ts,
 * read top-down: access, observers, filters, plugin handlers — the core plugins of core-plugins/ among them — and what
 * no plugin took), over the plugins of a plugin/registry. core/kernel/README.md maps the whole kernel.
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
  /** The transport, once `start` attached it, and whether the bot connected or began to stop. */
  private readonly link: TransportLink;
  private readonly registry: PluginRegistry;
  private readonly queue: ChatQueue;
  /** Inbound messages: bursts, the per-chat queue, watched chats, the message path. */
  private readonly intake: Intake;
  private readonly burstTurns: BurstTurns;
  /** Messages deleted for everyone (ids only): a later quote of one never brings it back. */
  private readonly deletedMessages: DeletedMessages;
  /** Deletes for everyone, edits and chat moves applied to what the bot kept. */
  private readonly changes: ChatChanges;
  /** Each plugin's host, stores, on/off listeners and sites. */
  private readonly hosts: PluginHosts;
  /** Messages the bot starts on its own: the recipient rule, then the outbox's pacing. */
  private readonly started: StartedMessages;
  private readonly configFile: string;
  /** Files the stores set aside as unreadable (followed by .mydata and chat moves), indexed. */
  private readonly setAsideFiles: SetAsideFiles;
  private readonly polls: PollBook;

  constructor(deps: BotDeps) {
    this.configFile = path.resolve(deps.configFile ?? 'config.json');
    this.settings = deps.settings;
    this.configValue = deps.config;
    this.log = deps.log;
    this.link = new TransportLink(() => this.configValue, deps.log);
    this.capabilities = deps.capabilities;
    this.histories = deps.histories;
    this.memories = deps.memories;
    this.notices = deps.notices ?? logOnlyNotifier(deps.log);
    this.jail = deps.jail ?? new Jail();
    this.audioKeys = deps.audioKeys ?? new KeyPool(deps.settings.audio.keys, deps.log.child({ part: 'audio-keys' }));
    this.setAsideFiles = new SetAsideFiles(deps.settings.dataDir, deps.dataHealth ?? healthFor(deps.settings.dataDir));
    this.privacy = new PrivacyRegistry(this.setAsideFiles);
    this.privacy.register(historyParticipant(this.histories));
    this.privacy.register(summaryParticipant(this.histories));
    this.privacy.register(memoryParticipant(this.memories));
    this.failures = deps.failures ?? [];
    this.queue = new ChatQueue(deps.log);
    const config = () => this.configValue;
    // Made below, once the access rules and the guard it asks exist; both tell the owners through it.
    let started: StartedMessages | undefined;
    const tellOwners = (text: string) => started!.tellOwners(text);
    // Made last, once every service a host hands out exists; the registry, the guard and the contexts ask for hosts.
    let hosts: PluginHosts | undefined;
    let intake: Intake | undefined;
    const hostOf = (name: string) => hosts!.host(name);
    this.burstTurns = new BurstTurns(deps.settings.dataDir);
    this.privacy.register(this.burstTurns.privacyParticipant());
    this.deletedMessages = new DeletedMessages(deps.settings.dataDir);
    this.privacy.register(this.deletedMessages.privacyParticipant());
    this.polls = new PollBook(deps.settings.dataDir);
    this.privacy.register(this.polls.privacyParticipant());
    this.access = new AccessControl({
      file: accessDocument(deps.settings.dataDir),
      config,
      log: deps.log.child({ part: 'access' }),
      histories: deps.histories,
      tellOwners: (text) => tellOwners(text).then(() => undefined),
      redeliver: (message) => this.handle(message),
    });
    this.privacy.register(this.access.privacyParticipant());
    this.registry = new PluginRegistry({
      plugins: deps.plugins,
      capabilities: deps.capabilities,
      log: deps.log,
      config,
      failures: this.failures,
      host: hostOf,
      view: (ctx, name) => intake!.view(ctx, name),
      coreRule: corePluginRule,
    });
    this.ai = deps.createAi(
      (ctx) => this.toolsFor(ctx),
      (ctx) => quotedWordsReaderFor(this.registry, this.capabilities, ctx),
      // Only a core plugin's (the owner's profiles and money rules); no installed plugin can set them.
      () => this.registry.active().find((s) => s.instance?.turnPolicy && corePluginRule(s.plugin))?.instance?.turnPolicy,
    );
    const contexts: ContextDeps = {
      config,
      log: deps.log,
      ai: this.ai,
      histories: deps.histories,
      memories: deps.memories,
      botIds: () => this.botIds(),
      host: hostOf,
      polls: this.polls,
      ...(deps.outbox?.answer ? { answer: deps.outbox.answer.bind(deps.outbox) } : {}),
    };
    this.effects = new EffectGuard({
      policy: () => policyOf(this.configValue.guard),
      holds: () => hostOf(GUARD_PLUGIN.name).store.doc(GUARD_HOLDS),
      ownerChat: (chatId) => this.link.isOwnerChat(chatId),
      isOwner: (ids, fromOperator) => fromOperator === true || isOwnerId(ids, this.configValue) || ids.some((id) => this.link.isOperator(id)),
      askOwners: tellOwners,
      tell: async (chatId, text) => void (await started!.text(chatId, text).catch((err: unknown) => this.log.warn({ err, chat: chatId }, 'could not tell the owner what became of a held action'))),
      prefix: () => this.configValue.prefix,
      log: deps.log.child({ part: 'guard' }),
      held: (hold) => this.automation.events.emit('approval.requested', hold),
    });
    this.automation = new AutomationDesk({
      effects: this.effects,
      startText: (chatId, text) => started!.text(chatId, text),
      promptAs: (chatId, senderId, text, system) => this.promptAs(chatId, senderId, text, system),
      chatIdOf: (to) => (to.includes('@') ? to : privateChatIdOf(this.link.transport, to.replace(/^\+/, ''))),
      promptOwner: () => {
        const owner = this.configValue.owners[0];
        return owner ? privateChatIdOf(this.link.transport, owner) : this.link.transport?.operatorChatId?.();
      },
      log: deps.log.child({ part: 'automation' }),
    });
    this.started = started = new StartedMessages({ config, link: this.link, outbox: deps.outbox, access: this.access, effects: this.effects, histories: deps.histories, log: deps.log });
    this.hosts = hosts = new PluginHosts({
      ...{ settings: this.settings, configFile: this.configFile, config, log: deps.log, capabilities: this.capabilities, ai: this.ai, histories: this.histories, memories: this.memories },
      ...{ notices: this.notices, privacy: this.privacy, jail: this.jail, audioKeys: this.audioKeys, access: this.access, registry: this.registry, link: this.link, effects: this.effects, started },
      promptAs: (chatId, senderId, text, system, hidden) => this.promptAs(chatId, senderId, text, system, hidden),
    });
    this.intake = intake = new Intake({
      ...{ config, log: deps.log, queue: this.queue, link: this.link, registry: this.registry, capabilities: this.capabilities, access: this.access, effects: this.effects },
      ...{ events: this.automation.events, burstTurns: this.burstTurns, deletedMessages: this.deletedMessages, contexts, started, fallback: FALLBACK_PLUGIN },
    });
    this.changes = new ChatChanges({ queue: this.queue, bursts: intake.bursts, privacy: this.privacy, burstTurns: this.burstTurns, deletedMessages: this.deletedMessages, link: this.link, log: deps.log });
    this.registry.registerConfigSections(CORE_CONFIG_KEYS);
    this.registry.registerCapabilities();
    // A tool call held for the owner runs, once approved, as its person in its chat (with the tools they have there).
    for (const kind of EFFECT_KINDS) {
      this.effects.declare('core', heldToolEffect(kind), kind, (data, run) => {
        const message: IncomingMessage = { id: `held-${Date.now()}`, chatId: run.chat, senderId: run.actor.id, isGroup: this.link.isGroup(run.chat), text: '', mentions: [], timestamp: Date.now(), scheduled: true };
        if (this.link.isOperator(run.actor.id)) message.fromOperator = true;
        return runHeldTool(data, this.createContext(message, ''), (ctx) => toolsFor(this.registry, this.capabilities, ctx, this.log));
      });
    }
  }

  /**
   * The top-level config.json sections plugins own (`configSection`), for the dashboard: key, owning plugin, its
   * rule, and the value and problems the plugin sees now.
   */
  configSections(): Array<{ key: string; plugin: string; rule: SectionRule; raw: unknown; problems: string[] }> {
    return this.registry.configSections().map(({ plugin, rule }) => ({ key: rule.key, plugin, rule, raw: this.configValue.sections?.[rule.key], problems: this.registry.sectionOf(plugin).problems }));
  }

  /** A plugin's options as `host.options()` gives them (validated, with defaults). */
  optionsOf(name: string): PluginSection {
    return this.registry.optionsOf(name);
  }

  /** Where `.status` and the dashboard get the running picture (set by the app, which owns the chain and usage). */
  get statusSource(): StatusSource | undefined {
    return this.hosts.statusSource;
  }

  set statusSource(source: StatusSource | undefined) {
    this.hosts.statusSource = source;
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
    const before = new Map(this.registry.states.map((s) => [s.plugin.name, s.enabled]));
    this.configValue = config;
    this.histories.maxMessages = storedMessages(config.history);
    this.registry.applyConfig(config);
    this.hosts.tellSwitched(before, this.registry.states);
  }

  plugins(): readonly PluginState[] {
    return this.registry.states;
  }

  /** The bot's own ids: config `targetUserIds` plus the ids the transport learnt at login (phone jid, LID). */
  botIds(): string[] {
    return this.link.botIds();
  }

  /** The transport's session (link state), or offline before a transport is connected. */
  session(): SessionState {
    return this.link.session();
  }

  /** True when one of `userIds` is an admin of group `chatId` (false where the transport has no group roles). */
  isGroupAdmin(chatId: string, userIds: string[]): Promise<boolean> {
    return this.link.isGroupAdmin(chatId, userIds);
  }

  /** The host services handed to a plugin's setup (and seen as `ctx.host` by its handlers and tools). */
  host(name: string): PluginHost {
    return this.hosts.host(name);
  }

  /** Starts every plugin in load order (see PluginRegistry.start): failures and clashes stay off, the rest go on. */
  startPlugins(): Promise<void> {
    return this.registry.start();
  }

  /** The static sites plugins serve (mounted by the web server, see `PluginHost.serveSite`). */
  sites(): ReadonlyArray<SiteDeclaration & { plugin: string }> {
    return this.hosts.sites();
  }

  /** Connects a transport and starts handling its messages. Call `startPlugins()` first. */
  async start(transport: Transport): Promise<void> {
    this.link.attach(transport);
    // Files set aside in an earlier run: found once now, beside the start (later ones come from the data health).
    void this.setAsideFiles.load();
    for (const participant of transport.privacyParticipants?.() ?? []) this.privacy.register(participant);
    await this.access.load();
    transport.onRevoke?.((chatId, messageId, by) => this.changes.revoke(chatId, messageId, by));
    await transport.start((message) => this.handle(message), {
      onRevoke: (chatId, messageId, by) => this.changes.revoke(chatId, messageId, by),
      onEdit: (chatId, messageId, text, by) => this.changes.edit(chatId, messageId, text, by),
      onChatIdChange: (from, to) => this.changes.moveChat(from, to),
      onPollVote: (vote) => this.pollVote(vote),
      onCall: (call) => answerCall(this.configValue.calls, call, (text) => this.started.tellOwners(text).then(() => undefined)),
      onReaction: (reaction) => this.reaction(reaction),
    });
    this.link.connectedNow();
    // Holds kept from an earlier run lapse on time (and those that lapsed while down are told now).
    void this.effects.resumeLapses().catch((err: unknown) => this.log.warn({ err }, "could not resume the held actions' expiry"));
  }

  /** A private chat is known as `to` from now on instead of `from`: see `ChatChanges.moveChat`. Never rejects. */
  moveChat(from: string, to: string): Promise<void> {
    return this.changes.moveChat(from, to);
  }

  /**
   * A vote on a poll the bot sent: on a poll sent to settle a question (`answerOnVote`), a turn of the voter the model
   * answers; on any other, a line in the chat's history the model reads at the next turn. A voter on the block list is
   * ignored; a turn still goes through who-is-answered like any message. Never rejects.
   */
  pollVote(vote: PollVote): Promise<void> {
    const cfg = this.configValue;
    if (isBlocked([vote.voterId], cfg)) return Promise.resolve();
    const name = vote.voterName?.trim() || userPart(vote.voterId) || 'someone';
    const text = vote.selected.length ? `${name} voted on the poll "${vote.question}": ${vote.selected.join(', ')}` : `${name} took back their vote on the poll "${vote.question}"`;
    const at = Date.now();
    const id = `vote-${vote.pollId}-${userPart(vote.voterId)}-${at}`;
    const answered = vote.selected.length ? this.polls.answersOnVote(vote.chatId, vote.pollId) : Promise.resolve(false);
    return answered.then((answer) => (answer ? this.answerVote(vote, id, text, at) : this.keepVote(vote, id, text, at)));
  }

  /** A vote on a poll sent to settle a question: a turn of the voter. */
  private answerVote(vote: PollVote, id: string, text: string, at: number): Promise<void> {
    const bot = this.botIds()[0] ?? '';
    const message: IncomingMessage = { id, chatId: vote.chatId, senderId: vote.voterId, senderName: vote.voterName, isGroup: this.link.isGroup(vote.chatId), text, mentions: [], timestamp: at, quoted: { id: vote.pollId, senderId: bot, text: vote.question, fromBot: true }, noChatMessage: true };
    // The person at the console votes as the owner they are when they type.
    if (this.link.isOperator(vote.voterId)) message.fromOperator = true;
    return this.handle(message);
  }

  /** A vote kept as context the model reads at the chat's next turn. */
  private keepVote(vote: PollVote, id: string, text: string, at: number): Promise<void> {
    return this.queue.behind(
      vote.chatId,
      () => this.histories.append(vote.chatId, { id, role: 'user', senderId: vote.voterId, senderName: vote.voterName, text, at }),
      (err) => this.log.error({ err, chat: vote.chatId }, 'could not keep a poll vote in the history'),
    );
  }

  /**
   * Stops taking new messages and waits, at most `timeoutMs`, for those being handled to finish. Resolves with how
   * many were still being handled when the time was up (0: all finished).
   */
  drain(timeoutMs: number): Promise<number> {
    this.link.stoppingNow();
    this.intake.bursts.flushAll();
    return this.queue.drain(timeoutMs);
  }

  /** Drains (see `drain`, default 10 s), stops the plugins and the transport, and flushes the chat stores. */
  async stop(graceMs = 10_000): Promise<void> {
    const unfinished = await this.drain(graceMs);
    if (unfinished) this.log.warn({ unfinished }, `${unfinished} message(s) were still being handled when the stop's grace time was up; stopping anyway`);
    // A chat summary being made writes the history file when done: it gets the grace time too, before the stores flush.
    let graceTimer: NodeJS.Timeout | undefined;
    await Promise.race([this.ai.idle?.(), new Promise<void>((resolve) => (graceTimer = setTimeout(resolve, graceMs)))]);
    clearTimeout(graceTimer);
    this.ai.stop?.();
    this.effects.stop();
    await this.registry.stop();
    await this.link.transport?.stop();
    // A store that cannot write rejects; the app's data health lists it and the stop reports it (never silently).
    await Promise.allSettled([this.histories.flush(), this.memories.flush(), this.access.flush(), this.burstTurns.flush(), this.deletedMessages.flush(), this.polls.flush(), this.setAsideFiles.close(), ...this.hosts.closeStores()]);
  }

  /** Resolves when no message is being handled. */
  async idle(): Promise<void> {
    await this.intake.bursts.settled();
    await this.queue.idle();
    await this.ai.idle?.();
    // The status messages of long turns take their last state.
    await this.intake.turnsSettled();
  }

  /**
   * Resolves once no message is being handled (`idle`) and the data work behind the replies is done too: history
   * folds, the writes scheduled after their pause, the plugins' retention sweeps. Nothing is forced (a flush would
   * hide that work): a test awaits this to see what the bot does in the background, instead of sleeping.
   */
  async whenStoresIdle(): Promise<void> {
    await this.idle();
    await this.hosts.whenSwept();
    await this.histories.whenIdle();
    await domainFor(this.settings.dataDir).whenIdle();
  }

  /**
   * Handles one inbound message. Messages of one chat are handled strictly in order; different chats in parallel; a
   * sender's burst of free text within `conversation.debounceMs` is one turn (pipeline/bursts). Never rejects: a
   * failure is logged and, where the user expects an answer, told in a short sentence.
   */
  handle(message: IncomingMessage): Promise<void> {
    boundDownloads(message, (kind) => Math.floor(this.configValue.media.maxDownloadMB[kind] * 1024 * 1024));
    // The move is finished first, so the message's own writes never race it. (It never rejects.)
    const movedFrom = this.changes.unfinishedMoveTo(message.chatId);
    if (movedFrom) return this.moveChat(movedFrom, message.chatId).then(() => this.intake.offer(message));
    return this.intake.offer(message);
  }

  /** The context of one inbound message (see pipeline/context). */
  private createContext(message: IncomingMessage, rawText: string): MessageContext {
    return this.intake.context(message, rawText);
  }

  /** A text the bot starts (not a reply in the chat that asked): see `StartedMessages.text`. */
  startText(chatId: string, text: string): Promise<SentMessage> {
    return this.started.text(chatId, text);
  }

  /** Media the bot starts: see `StartedMessages.media`. */
  startMedia(chatId: string, media: OutgoingMedia): Promise<SentMessage> {
    return this.started.media(chatId, media);
  }

  /** A reaction someone put on a message: an owner's 👍/👎 on a held action's message answers it. Never rejects. */
  reaction(reaction: Reaction): Promise<void> {
    if (isBlocked([reaction.senderId, ...(reaction.senderAltId ? [reaction.senderAltId] : [])], this.configValue)) return Promise.resolve();
    if (this.link.isOperator(reaction.senderId)) reaction = { ...reaction, fromOperator: true };
    return this.effects.onReaction(reaction).then(
      () => undefined,
      (err: unknown) => this.log.error({ err, chat: reaction.chatId }, 'could not handle a reaction'),
    );
  }

  /** A turn of `senderId` in `chatId` that no one typed now (a scheduled task): see `PluginHost.promptAs`. */
  async promptAs(chatId: string, senderId: string, text: string, system?: string, hidden = false): Promise<string> {
    await this.link.ready();
    return runScheduledTurn(
      {
        config: () => this.configValue,
        access: this.access,
        ai: this.ai,
        transport: () => this.link.transport,
        context: (message) => this.createContext(message, message.text),
        inChatQueue: async (chatId, job) => {
          let taken = false;
          await this.queue.push(chatId, () => {
            taken = true;
            return job();
          });
          return taken;
        },
        stopping: () => this.queue.isDraining,
      },
      chatId,
      senderId,
      text,
      system,
      hidden,
    );
  }

  /** Tools offered to the model for this message: from enabled, started plugins whose needs are met. */
  toolsFor(ctx: MessageContext): Tool[] {
    // A tool that declares an effect kind asks the guard at each call.
    return toolsFor(this.registry, this.capabilities, ctx, this.log).map((tool) => guardedTool(tool, this.effects));
  }
}
