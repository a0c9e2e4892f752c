import type { PrivacyRegistry } from '../../services/store/privacy.js';
import type { PluginStore } from '../../services/store/plugin-store.js';
import type { StoreDeclaration } from '../../services/store/store-declarations.js';
import type Koa from 'koa';
import type { Capabilities, CapabilityStatus } from '../capabilities/capabilities.js';
import type { PluginSection, BotConfig } from '../../services/config/schema.js';
import type { Settings } from '../../services/config/settings.js';
import type { Logger } from '../../services/log/logger.js';
import type { AppendOptions, HistoryStore, HistoryEntry } from '../../services/store/history.js';
import type { MemoryStore, MemoryFact } from '../../services/store/memory.js';
import type { IncomingMessage, MediaKind, OutgoingMedia, SentMessage } from '../port/message.js';
import type { ChatMessage, CompleteOptions, CompletionResult, LegHealth, ProviderLeg } from '../../services/providers/types.js';
import type { OwnerNotifier } from '../../services/notices/owner-notifier.js';
import type { Jail } from '../../services/jail/jail.js';
import type { KeyPool } from '../../services/providers/key-pool.js';
import type { StatusReport } from '../status/status-report.js';
import type { DataSchema } from '../../services/store/schemas.js';
import type { AccessControl } from '../access/access-control.js';

/**
 * What one handler of a running plugin reacts to (the core's shape of the handlers a plugin's `setup` offers).
 * - `{ command: 'ping' }`: the word after the configured prefix (`.ping`); `args` holds the rest of the line.
 * - `{ literal: '/ws' }`: a fixed word whatever the prefix (first word of the text).
 * - `{ media: 'voice' }` or `{ media: ['image', 'sticker'] }`: a message carrying that media.
 * - `{ pattern: /regex/ }`: a text pattern (matched on the text without leading bot mentions).
 * - `{ when: (ctx) => boolean }`: any predicate (e.g. "this user has a workspace open"); `help`/`usage` put it in
 *   `.help` (e.g. `usage: '(photo)'`).
 */
export type Trigger =
  | { command: string; help?: string; usage?: string }
  | { literal: string; help?: string; usage?: string }
  | { media: MediaKind | MediaKind[]; help?: string }
  | { pattern: RegExp; help?: string }
  | { when: (ctx: BotContext) => boolean; help?: string; usage?: string };

/** The command a message invoked, when a command or literal trigger matched. */
export interface CommandMatch {
  /** The command as typed, e.g. `.ping` or `/ws`. */
  word: string;
  /** The rest of the text after the command word, trimmed. */
  args: string;
}

/** The chat's history as a plugin sees it: bound to the current chat. */
export interface ChatHistoryView {
  recent(limit?: number): Promise<HistoryEntry[]>;
  /** Adds an entry (see `HistoryStore.append`: `writeAfterIo` writes it while an upstream request is out). */
  append(entry: HistoryEntry, options?: AppendOptions): Promise<void>;
  /**
   * Records the message being handled in the chat's history, as `text` (a voice note's transcript, say) — once:
   * the core then does not record it again (in a group, a message not addressed to the bot is kept as context).
   *
   * @example
   * await ctx.history.recordIncoming(transcript, { media: 'voice' });
   */
  recordIncoming(text: string, extra?: { media?: string }): Promise<void>;
  /** True once the message being handled is in the history (by `recordIncoming`). */
  incomingRecorded(): boolean;
}

/** The chat's memory as a plugin sees it: bound to the current chat. */
export interface ChatMemoryView {
  facts(): Promise<MemoryFact[]>;
  remember(text: string): Promise<void>;
}

/**
 * One message as the core handles it. Plugins see it through `MessageContext` (contract.ts), narrowed per trigger.
 */
export interface BotContext {
  readonly message: IncomingMessage;
  /** The text with leading bot mentions removed and trimmed. */
  readonly text: string;
  readonly chatId: string;
  readonly senderId: string;
  /** True in a private chat, or in a group when the bot is mentioned or replied to. */
  readonly addressed: boolean;
  readonly isOwner: boolean;
  /**
   * Sends `text` to the chat: a text longer than about 4,000 characters goes as several messages, cut at paragraph
   * boundaries (never inside a word, a code block or a link); an empty text sends nothing. Resolves with the last part.
   */
  reply(text: string, options?: { quote?: boolean }): Promise<SentMessage>;
  react(emoji: string): Promise<void>;
  sendMedia(media: OutgoingMedia, options?: { quote?: boolean }): Promise<SentMessage>;
  /** Edits a message the bot sent; returns false where the transport cannot edit. */
  edit(sent: SentMessage, text: string): Promise<boolean>;
  typing(on: boolean): Promise<void>;
  readonly history: ChatHistoryView;
  readonly memory: ChatMemoryView;
  readonly ai: AiService;
  /** This plugin's section of config.json (live: reflects dashboard edits). Empty outside a plugin. */
  readonly options: PluginSection;
  readonly host: PluginHost;
  readonly log: Logger;
  /** Scratch space shared by middleware for this one message. */
  readonly state: Record<string, unknown>;
}

/** Arguments the core binds into every tool call: the model can never choose the chat or user. */
export interface ToolCall {
  chatId: string;
  senderId: string;
  senderAltId?: string;
  isOwner: boolean;
  ctx: BotContext;
  /**
   * Names sources (short links) the answer rests on. When the model's final answer shows none of them, the core
   * appends them as a "Sources:" list, so an answer built on a web search always says where it came from.
   */
  cite(links: string[]): void;
}

/**
 * A function offered to the main model for tool calling.
 *
 * @example
 * { name: 'roll_die', description: 'Roll a die', parameters: { type: 'object', properties: {} },
 *   run: async () => String(1 + Math.floor(Math.random() * 6)) }
 */
export interface ToolDefinition {
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
  /** What the tool brings into a turn and what it acts on; undeclared counts as `UNDECLARED_EFFECTS` (see below). */
  effects?: ToolEffects;
  run(args: Record<string, unknown>, call: ToolCall): Promise<unknown> | unknown;
}

/**
 * What a tool brings into a turn and what it acts on. The core reads it to keep two kinds of tool out of one turn: a
 * tool that reads or changes one person's own files (`acts: 'ownFiles'`) is never offered together with a tool that
 * brings in text someone else wrote (`outsideText`) or one that acts on chats (`acts: 'chats'`) — otherwise a planted
 * instruction in a past message or a web page could make the model delete the person's files or post them in a group.
 * When a turn holds an `ownFiles` tool, the others are left out of it (and the log says which).
 *
 * @example
 * effects: { outsideText: true, acts: 'nothing' } // web search: reads pages others wrote, changes nothing
 */
export interface ToolEffects {
  /**
   * The tool brings in text that neither the person asking nor the bot wrote: other people's past messages, voice-note
   * transcripts, web pages, another program's answers (every MCP tool).
   */
  outsideText: boolean;
  /**
   * What it acts on besides answering: `'nothing'` (looks something up); `'ownFiles'` (reads, writes, deletes, runs or
   * publishes one person's own files — reading counts, since what it reads can be posted where others see it);
   * `'chats'` (schedules or sends messages, reaches other chats, or changes what a chat keeps, such as its memory).
   */
  acts: 'nothing' | 'ownFiles' | 'chats';
}

/**
 * The effects of a tool that declares none: the unsafe side on both counts it can be mixed on — it may bring in
 * outside text and may act on chats — so it is never offered next to a tool that touches someone's own files. (A
 * tool touching files must say `acts: 'ownFiles'`: only then does the core keep outside text away from it.)
 */
export const UNDECLARED_EFFECTS: Readonly<ToolEffects> = Object.freeze({ outsideText: true, acts: 'chats' });

/** Static files a plugin serves through the web server (see `PluginHost.serveSite`). */
export interface SiteDeclaration {
  /** What is served, for the start log: e.g. `workspace sites` ("workspace sites served on port 8081 (SITE_PORT)"). */
  label: string;
  /** Koa middleware for GET/HEAD `/<name>/…`; `next()` for anything it does not serve. */
  handler: Koa.Middleware;
}

/** The core's services for one plugin; plugins see them typed as `Host` (contract.ts) in `setup(host)`. */
export interface PluginHost {
  readonly name: string;
  readonly settings: Settings;
  /** The live config.json (after dashboard edits). */
  config(): BotConfig;
  /** Where config.json is; files the owner keeps beside it (such as `mcp.json`) are found from here. */
  readonly configFile: string;
  /** This plugin's live options section (validated, with defaults). */
  options(): PluginSection;
  /** This plugin's own top-level section of config.json (`configSection`): validated, else its default. */
  section(): unknown;
  /** An environment setting (`.env` under the real environment). */
  setting(name: string): string | undefined;
  readonly dataDir: string;
  readonly log: Logger;
  readonly capabilities: Capabilities;
  readonly ai: AiService;
  readonly histories: HistoryStore;
  readonly memories: MemoryStore;
  /** Tells the owners about an incident once, and once when it recovers. */
  /**
   * What the plugin keeps, scoped to it and to a chat: the documents and logs it declares in `stores`. Atomic,
   * checked on load, held during a backup, flushed at stop, and in `.mydata`, deletes and chat moves by declaration.
   */
  readonly store: PluginStore;
  /** The privacy controls (`.mydata`, revoked messages): register what the plugin keeps about people. */
  readonly privacy: PrivacyRegistry;
  readonly notices: OwnerNotifier;
  /** Runs helper programs (ffmpeg, yt-dlp, python) on untrusted bytes or code, isolated (core/jail). */
  readonly jail: Jail;
  /**
   * Serves static files through the web server and its guards (Host check, security headers), so no plugin runs an
   * HTTP server of its own: on the main server, or, with SITE_PORT set, only on a site server the web layer owns
   * (its own origin, away from the dashboard). `handler` gets `/<name>/…` paths and calls `next()` for names it
   * does not serve.
   */
  serveSite(site: SiteDeclaration): void;
  /**
   * The core's one pool of the audio provider's keys (rotation and cooldowns), shared with the provider chain's
   * audio legs: a key parked or rejected by one user is skipped by all.
   */
  readonly audioKeys: KeyPool;
  /**
   * True while the owner has this plugin enabled (config.json `plugins.<name>.enabled`, the dashboard's toggle). A
   * disabled plugin's handlers and tools are not reached; work it starts on its own (timers) should check this.
   */
  enabled(): boolean;
  /**
   * Calls `listener` each time the owner enables or disables this plugin while the bot runs (a dashboard save), so
   * work held while it was off can resume. Returns a function that removes the listener.
   */
  onEnabledChange(listener: (enabled: boolean) => void | Promise<void>): () => void;
  /** Sends a text to a chat outside a message's handling (timers, jobs). */
  send(chatId: string, text: string): Promise<SentMessage>;
  sendMedia(chatId: string, media: OutgoingMedia): Promise<SentMessage>;
  /** The bot's ids: config targetUserIds plus those learnt at login. */
  botIds(): string[];
  /** True when `id` is an owner (config `owners`). */
  isOwner(id: string): boolean;
  /**
   * Who the bot answers and how, as the owners decide it (pairing codes, `.activation`, personas, paused chats).
   * Check `ctx.isOwner` before changing anything for someone.
   */
  readonly access: AccessControl;
  /** True when one of `userIds` is an admin of group `chatId`; false where the transport knows no group roles. */
  isGroupAdmin(chatId: string, userIds: string[]): Promise<boolean>;
  /** How the bot is doing now (link, provider legs, capabilities, usage today, uptime, version). Never a key. */
  status(): Promise<StatusReport>;
  /**
   * Every plugin of the bot (the core plugins too), in routing order, as `.help` and the dashboard show them: name,
   * description, whether it is on, its commands and triggers with their help. Read-only; nothing a plugin keeps.
   */
  plugins(): readonly PluginListing[];
}

/**
 * One plugin as another plugin may see it (`host.plugins()`), e.g. to list commands as `.help` does.
 *
 * @example
 * for (const p of host.plugins()) if (p.active && p.mayUse(ctx.message)) lines.push(...p.triggers.map((t) => t.help ?? p.description));
 */
export interface PluginListing {
  readonly name: string;
  readonly description: string;
  /** Switched on in config.json (or by default); false for one the owner turned off, or one refused at registration. */
  readonly enabled: boolean;
  /** Enabled and started: its handlers are matched and its tools offered. */
  readonly active: boolean;
  /** One of the core's own plugins (core/kernel/core-plugins). */
  readonly core: boolean;
  /** Its handlers in routing order (empty for one that did not start). */
  readonly triggers: readonly TriggerListing[];
  /** True when this sender may use the plugin (its `access` in config.json). */
  mayUse(message: Pick<IncomingMessage, 'senderId' | 'senderAltId' | 'fromOperator'>): boolean;
}

/** One handler's trigger as `host.plugins()` shows it: the word or media it answers and its help, no code. */
export type TriggerListing =
  | { kind: 'command'; command: string; help?: string; usage?: string }
  | { kind: 'literal'; literal: string; help?: string; usage?: string }
  | { kind: 'media'; media: MediaKind[]; help?: string }
  | { kind: 'pattern'; help?: string }
  | { kind: 'predicate'; help?: string; usage?: string };

/**
 * A plugin as the core keeps it: what `definePlugin` (core/kernel/plugin/contract.ts) checked and froze. Made only by
 * `definePlugin`; the core tells one from anything else by `__plugin`.
 */
export interface Plugin {
  readonly name: string;
  readonly description: string;
  /** Capabilities the plugin needs (see the start-log report); checked before a handler runs. */
  readonly needs?: readonly string[];
  /** The reply when a handler matches but a needed capability is missing. Default: names what is missing. */
  readonly missing?: string | ((missing: string[]) => string);
  /** JSON schema of this plugin's options in config.json (besides `enabled` and `access`). */
  readonly optionsSchema: Record<string, unknown>;
  /** Whether the plugin is on when config.json does not mention it. Default true. */
  readonly enabledByDefault?: boolean;
  /** Lower runs earlier among plugins whose handlers match. Default 100. */
  readonly order?: number;
  /** The factory returning what the plugin offers (see `PluginOffer` in contract.ts). */
  readonly setup: (host: never) => unknown;
  /** Capabilities this plugin owns (see `CapabilityDeclaration` in contract.ts). */
  readonly provides?: ReadonlyArray<{ name: string; detect(host: never): unknown; live?(): CapabilityStatus; missing: string }>;
  /** Environment settings this plugin reads. */
  readonly settings?: ReadonlyArray<{ name: string; description: string }>;
  /**
   * Options that moved from config.json to environment settings because they can run code or open a hole (option →
   * setting name). The core drops them from an old config.json with a start-log warning naming them (start-up never
   * fails on it); the dashboard refuses them, naming the setting; their values show there read-only.
   */
  readonly movedToEnv?: Readonly<Record<string, string>>;
  /** A top-level section of config.json it owns (key, schema, check), see `ConfigSectionDeclaration`. */
  readonly configSection?: { readonly key: string; readonly schema: object; check?(value: unknown): string | undefined };
  /** The kinds of data files it keeps under DATA_DIR (path relative to it, schema); includes those of `stores`. */
  readonly dataFiles?: ReadonlyArray<{ path: string; schema: DataSchema }>;
  /** What it keeps through `host.store` (see `Store` in services/store/store-declarations.ts). */
  readonly stores?: readonly StoreDeclaration[];
  readonly __plugin: true;
}

/*
 * What plugins see of the AI, declared next to the plugin types: the core's chat service (core/kernel/chat/) implements it
 * over the provider chain (core/services/providers/), which knows nothing of plugins.
 */

export interface RespondOptions {
  /** The user's text (defaults to ctx.text). */
  text?: string;
  premium?: boolean;
  /** Extra system prompt lines for this turn (a plugin's instructions). */
  system?: string;
  /** Tools offered in addition to those of enabled plugins. */
  extraTools?: ToolDefinition[];
  /** Offer only these tools (plus extraTools), instead of every enabled plugin's. */
  onlyTools?: string[];
  /** Skip writing the user's text to history (the caller already did). */
  userAlreadyInHistory?: boolean;
  /**
   * Only these senders' turns (and the bot's answers to them) reach the model, and the chat's memory is left out:
   * for a turn whose tools act for one person (an open workspace in a group), so that other members' text —
   * addressed to the bot or not — cannot steer them. Ids are jids or bare numbers, phone or LID.
   */
  onlyTurnsOf?: string[];
}

/**
 * The AI services plugins use. Every call goes through the provider chain: failover, cooldowns, usage accounting.
 *
 * @example
 * const answer = await ctx.ai.respond(ctx, { text: transcript });
 * await ctx.reply(answer);
 */
/** The tokens one answer cost: all input (its cached part apart), output, and how many requests it took. */
export interface ReplyCost {
  prompt: number;
  cached: number;
  completion: number;
  requests: number;
  at: number;
}

export interface AiService {
  /** True when some chat leg is usable now (configured and not cooling down). */
  available(): boolean;
  /** One chat-completion request through the chain, with failover. */
  complete(messages: ChatMessage[], options?: CompleteOptions): Promise<CompletionResult>;
  /**
   * Answers a turn in the context's chat as the main model: system prompt (bot name, date), memory, history,
   * tools of enabled plugins and the tool-call loop. Records the user's text and the answer in the history.
   * The answer comes in WhatsApp formatting (the model's Markdown converted, see chat/whatsapp-format); it is empty
   * when the model chose to stay silent (`NO_REPLY_TOKEN`), and `ctx.reply('')` sends nothing.
   */
  respond(ctx: BotContext, options?: RespondOptions): Promise<string>;
  /** Resolves once the work `respond` left running after its answer (folding older turns into a summary) is done. */
  idle?(): Promise<void>;
  /** What the last answer of `respond` cost in tokens, over all its requests (tool rounds included). */
  lastReply?(): ReplyCost | undefined;
  /**
   * Checks the sender's AI budget (requests per minute, tokens per day, premium budget) for a call that does not go
   * through `respond` (vision, say). Returns the sentence to tell the user when over a limit; owners are exempt.
   */
  budget(ctx: BotContext, premium?: boolean): Promise<string | undefined>;
  /** Records token usage of a call made through `failover`, for the usage ledger and the sender's budget. */
  recordUsage(leg: string, model: string, premium: boolean, usage: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } } | undefined, userId?: string): void;
  /** The configured legs in chain order. */
  legs(): ProviderLeg[];
  /** Each leg's live state (healthy, cooling down until …, rejected, used up) and last error in words; never a key. */
  health(): LegHealth[];
  /**
   * Runs any upstream call over the legs in chain order with the chain's failover and cooldown rules
   * (vision uses it for `/v1/messages`). `filter` picks the eligible legs.
   */
  failover<T>(purpose: string, call: (leg: ProviderLeg) => Promise<T>, filter?: (leg: ProviderLeg) => boolean, userId?: string): Promise<T>;
}
