import path from 'node:path';
import { CORE_CONFIG_KEYS } from '../../services/config/config-file.js';
import type { BotConfig } from '../../services/config/schema.js';
import type { Settings } from '../../services/config/settings.js';
import { Jail } from '../../services/jail/jail.js';
import type { Logger } from '../../services/log/logger.js';
import { logOnlyNotifier, type OwnerNotifier } from '../../services/notices/owner-notifier.js';
import { KeyPool } from '../../services/providers/key-pool.js';
import { healthFor } from '../../services/store/data-domain.js';
import type { DataHealth } from '../../services/store/data-health.js';
import type { HistoryStore } from '../../services/store/history.js';
import type { DailySweeps } from '../../services/store/retention.js';
import type { MemoryStore } from '../../services/store/memory.js';
import type { DocDeclaration } from '../../services/store/store-declarations.js';
import { PrivacyRegistry } from '../../services/store/privacy.js';
import { SetAsideFiles } from '../../services/store/set-aside-files.js';
import { AccessControl } from '../access/access-control.js';
import { accessDocument } from '../access/access-document.js';
import { AutomationDesk } from '../automation/desk.js';
import type { Capabilities } from '../capabilities/capabilities.js';
import { PollBook, POLL_BOOK_STORE } from '../chat/polls.js';
import { quotedWordsReaderFor } from '../chat/quoted-words.js';
import { runScheduledTurn } from '../chat/scheduled-turn.js';
import { ToolOffers, toolsFor } from '../chat/tool-assembly.js';
import { EffectGuard, type HoldsDoc } from '../guard/effect-guard.js';
import { guardedTool, heldToolEffect, runHeldTool } from '../guard/guarded-tools.js';
import { EFFECT_KINDS, policyOf } from '../guard/policy.js';
import { BurstTurns, BURST_TURNS_STORE } from '../pipeline/burst-turns.js';
import { ChatQueue } from '../pipeline/chat-queue.js';
import { DeletedMessages, DELETED_MESSAGES_STORE } from '../pipeline/deleted-messages.js';
import { isOwnerId } from '../plugin/access.js';
import type { QuotedWordsEntry } from '../plugin/instance.js';
import { PluginRegistry, type CoreRule, type PluginFailure } from '../plugin/registry.js';
import type { AiService, MessageContext, Tool } from '../plugin/message-context.js';
import type { TurnPolicy } from '../plugin/offer.js';
import type { Plugin } from '../plugin/spec.js';
import type { IncomingMessage } from '../port/message.js';
import { privateChatIdOf } from '../port/transport.js';
import { ChatChanges } from './chat-changes.js';
import { coreStores } from './core-stores.js';
import { Intake } from './intake.js';
import { PluginHosts } from './plugin-hosts.js';
import { PollVotes } from './poll-votes.js';
import { StartedMessages, type BotInitiatedSender } from './started-messages.js';
import { TransportLink } from './transport-link.js';

/**
 * The core plugins the kernel itself works with (core/kernel/core-plugins), handed in by the composition root like the
 * other plugins, so the kernel never reaches up to them.
 */
export interface CorePluginParts {
  /** How the core treats one of its own plugins, or undefined for any other. */
  rule(plugin: Plugin): CoreRule | undefined;
  /** The plugin that answers free text (the `chat` core plugin). */
  fallback: Plugin;
  /** The guard's core plugin, whose declared store keeps the held actions. */
  guard: { name: string; holds: DocDeclaration<HoldsDoc> };
}

export interface BotDeps {
  /** The core plugins' parts the kernel works with (core/kernel/core-plugins `CORE_PARTS`). */
  core: CorePluginParts;
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
  /** The app's daily retention pass (retention.ts), which the plugins' stores join; default: swept at start only. */
  dailySweeps?: DailySweeps;
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

/** The kernel's collaborators, made and wired once (see `composeKernel`). */
export type Kernel = ReturnType<typeof composeKernel>;

/**
 * Makes the kernel's collaborators and hands each the others it works with, as objects. A few are made after those
 * that call them (the access rules and the guard tell the owners through the started messages; the registry and the
 * guard ask for plugin hosts): those calls go through a name bound below, never through the bot.
 */
export function composeKernel(deps: BotDeps, config: () => BotConfig) {
  const { settings, log, capabilities, histories, memories } = deps;
  const configFile = path.resolve(deps.configFile ?? 'config.json');
  const notices = deps.notices ?? logOnlyNotifier(log);
  const jail = deps.jail ?? new Jail();
  const audioKeys = deps.audioKeys ?? new KeyPool(settings.audio.keys, log.child({ part: 'audio-keys' }));
  const failures = deps.failures ?? [];
  const link = new TransportLink(config, log);
  const queue = new ChatQueue(log);
  const setAsideFiles = new SetAsideFiles(settings.dataDir, deps.dataHealth ?? healthFor(settings.dataDir));
  const privacy = new PrivacyRegistry(setAsideFiles);
  const core = coreStores(settings.dataDir, { histories, memories });
  const burstTurns = new BurstTurns(core.record(BURST_TURNS_STORE));
  const deletedMessages = new DeletedMessages(core.record(DELETED_MESSAGES_STORE));
  const polls = new PollBook(core.record(POLL_BOOK_STORE));
  let started: StartedMessages | undefined;
  let hosts: PluginHosts | undefined;
  let intake: Intake | undefined;
  const tellOwners = (text: string) => started!.tellOwners(text);
  const hostOf = (name: string) => hosts!.host(name);
  const access = new AccessControl({ file: accessDocument(settings.dataDir, core), config, log: log.child({ part: 'access' }), histories, tellOwners: (text) => tellOwners(text).then(() => undefined), redeliver: (message) => intake!.handle(message) });
  privacy.adopt(core);
  const registry = new PluginRegistry({ plugins: deps.plugins, capabilities, log, config, failures, host: hostOf, view: (ctx, name) => intake!.view(ctx, name), coreRule: deps.core.rule });
  const effects: EffectGuard = new EffectGuard({
    policy: () => policyOf(config().guard),
    holds: () => hostOf(deps.core.guard.name).store.doc(deps.core.guard.holds),
    ownerChat: (chatId) => link.isOwnerChat(chatId),
    isOwner: (ids, fromOperator) => fromOperator === true || isOwnerId(ids, config()) || ids.some((id) => link.isOperator(id)),
    askOwners: tellOwners,
    tell: async (chatId, text) => void (await started!.text(chatId, text).catch((err: unknown) => log.warn({ err, chat: chatId }, 'could not tell the owner what became of a held action'))),
    prefix: () => config().prefix,
    log: log.child({ part: 'guard' }),
    held: (hold) => automation.events.emit('approval.requested', hold),
  });
  /** Tools offered to the model for a message: from enabled, started plugins whose needs are met; an effect kind asks the guard. */
  const offers = new ToolOffers(registry, capabilities, config, (tool) => guardedTool(tool, effects), log);
  const tools = (ctx: MessageContext): Tool[] => offers.for(ctx);
  const ai = deps.createAi(
    tools,
    (ctx) => quotedWordsReaderFor(registry, capabilities, ctx),
    // Only a core plugin's (the owner's profiles and money rules); no installed plugin can set them.
    () => registry.active().find((s) => s.instance?.turnPolicy && deps.core.rule(s.plugin))?.instance?.turnPolicy,
  );
  const turns = {
    /** A turn of `senderId` in `chatId` that no one typed now (a scheduled task): see `PluginHost.promptAs`. */
    async promptAs(chatId: string, senderId: string, text: string, system?: string, hidden = false): Promise<string> {
      await link.ready();
      const inChatQueue = async (chat: string, job: () => Promise<void>) => {
        let taken = false;
        await queue.push(chat, () => ((taken = true), job()));
        return taken;
      };
      const context = (message: IncomingMessage) => intake!.context(message, message.text);
      return runScheduledTurn({ config, access, ai, transport: () => link.transport, context, inChatQueue, stopping: () => queue.isDraining }, chatId, senderId, text, system, hidden);
    },
  };
  const automation: AutomationDesk = new AutomationDesk({
    effects,
    startText: (chatId, text) => started!.text(chatId, text),
    startOwn: (chatId, send) => started!.own(chatId, send),
    startPoll: (chatId, poll) => started!.poll(chatId, poll),
    mediaDir: path.join(settings.dataDir, 'generated'),
    promptAs: (chatId, senderId, text, system) => turns.promptAs(chatId, senderId, text, system),
    chatIdOf: (to) => (to.includes('@') ? to : privateChatIdOf(link.transport, to.replace(/^\+/, ''))),
    promptOwner: () => {
      const owner = config().owners[0];
      return owner ? privateChatIdOf(link.transport, owner) : link.transport?.operatorChatId?.();
    },
    log: log.child({ part: 'automation' }),
  });
  started = new StartedMessages({ config, link, outbox: deps.outbox, access, effects, histories, polls, log });
  hosts = new PluginHosts({ settings, configFile, config, log, capabilities, ai, histories, memories, notices, privacy, jail, audioKeys, access, registry, link, effects, started, dailySweeps: deps.dailySweeps, promptAs: turns.promptAs });
  const contexts = { config, log, ai, histories, memories, botIds: () => link.botIds(), host: hostOf, polls, ...(deps.outbox?.answer ? { answer: deps.outbox.answer.bind(deps.outbox) } : {}) };
  const changes = new ChatChanges({ queue, bursts: { flushChat: (chatId) => intake!.bursts.flushChat(chatId) }, privacy, burstTurns, deletedMessages, link, log });
  intake = new Intake({ config, log, queue, link, registry, capabilities, access, effects, events: automation.events, burstTurns, deletedMessages, contexts, started, moves: changes, fallback: deps.core.fallback });
  const pollVotes = new PollVotes({ config, polls, histories, queue, link, intake, log });
  registry.registerConfigSections(CORE_CONFIG_KEYS);
  registry.registerCapabilities();
  // A tool call held for the owner runs, once approved, as its person in its chat (with the tools they have there).
  for (const kind of EFFECT_KINDS) {
    effects.declare('core', heldToolEffect(kind), kind, (data, run) => {
      const message: IncomingMessage = { id: `held-${Date.now()}`, chatId: run.chat, senderId: run.actor.id, isGroup: link.isGroup(run.chat), text: '', mentions: [], timestamp: Date.now(), scheduled: true };
      if (link.isOperator(run.actor.id)) message.fromOperator = true;
      return runHeldTool(data, intake!.context(message, ''), (ctx) => toolsFor(registry, capabilities, ctx, log));
    });
  }
  return { settings, log, capabilities, histories, memories, notices, jail, audioKeys, failures, link, queue, setAsideFiles, privacy, burstTurns, deletedMessages, polls, access, registry, effects, tools, ai, turns, automation, started, hosts, changes, intake, pollVotes };
}
