import type { Static, TObject, TSchema } from '#typebox';
import type { PluginStore } from '../../services/store/store-api.js';
import type { Capabilities } from '../capabilities/capabilities.js';
import type { BotConfig } from '../../services/config/schema.js';
import type { Logger } from '../../api/logger.js';
import type { AccessDecisions, AudioKeys, HistoryView, MemoryView, PersonalData, PluginFiles, SettingsReader } from './ports.js';
import type { IncomingMessage, OutgoingContact, OutgoingLocation, OutgoingMedia, OutgoingPoll, SentMessage } from '../port/message.js';
import type { LegHealth, ProviderLeg } from '../../services/providers/types.js';
import type { ChatMessage, CompleteOptions, CompletionResult } from './chat-completion.js';
import type { OwnerNotifier } from '../../services/notices/owner-notifier.js';
import type { Jail } from '../../services/jail/jail.js';
import type { ReplyCost, StatusReport } from '../status/status-report.js';
import type { QuotedContentInput } from '../chat/quoted-content.js';
import type { EffectsPort } from '../guard/types.js';
import type { Awaitable } from './awaitable.js';
import type { ChatHistoryView, ChatMemoryView } from './chat-views.js';
import type { PluginListing } from './listing.js';
import type { SiteDeclaration } from './site.js';
import type { ToolEffects } from './tool-effects.js';

/*
 * One message as a handler receives it, and what it reaches through it: the plugin's host, the AI service and the
 * tools a plugin offers the model. They refer to each other (a context has its host and the AI, the AI answers a
 * context and takes tools, a tool call carries the context), so they live in one module: apart they would form a circle.
 */

/**
 * One message as the core handles it and every handler receives it, seen through one plugin (`host` and `log` are
 * that plugin's). `O` types `ctx.host.options()`; the narrowed contexts add what their trigger guarantees.
 *
 * @example
 * observers: [(ctx) => ctx.log.debug({ text: ctx.text }, 'seen')]
 */
export interface MessageContext<O = unknown> {
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
  /**
   * Sends a poll to the chat (2–12 options). Votes come back into the chat's history as context the model reads at
   * the next turn ("Ann voted on the poll "…": mango tart"); with `answerOnVote` a vote is handled as a turn of the
   * voter, so the model answers it (a poll that settles a question). Rejects with `PollRefused` (its message says
   * why) for a bad poll or a network without polls.
   */
  sendPoll(poll: OutgoingPoll, options?: { answerOnVote?: boolean }): Promise<SentMessage>;
  /** Sends a location to the chat. Rejects, saying so, on a network without locations. */
  sendLocation(location: OutgoingLocation, options?: { quote?: boolean }): Promise<SentMessage>;
  /** Sends a contact card to the chat. Rejects, saying so, on a network without contact cards. */
  sendContact(contact: OutgoingContact, options?: { quote?: boolean }): Promise<SentMessage>;
  /** Edits a message the bot sent; returns false where the transport cannot edit. */
  edit(sent: SentMessage, text: string): Promise<boolean>;
  typing(on: boolean): Promise<void>;
  /**
   * Says what the turn is doing now, in a few words ("downloading the video…"): shown in the status message a turn
   * gets when it runs longer than `conversation.progressAfterSeconds` (and by an edit of it when it is out already).
   * The core sets it for each tool call (the tool's `progress`); a plugin handler that works long sets its own.
   */
  progress(phrase: string): void;
  /**
   * When the message this one replies to was deleted for everyone, tells the sender so ("That photo was deleted for
   * everyone, so I no longer have it.") and resolves true; otherwise says nothing and resolves false. A handler that
   * works on a quoted message asks first, so nothing deleted is worked on and every plugin says it the same way.
   * `what` names the thing; by default the quoted media's kind (photo, video, voice note, audio file, document,
   * sticker), or "message".
   *
   * @example
   * if (await ctx.replyIfQuotedDeleted()) return;
   */
  replyIfQuotedDeleted(what?: string): Promise<boolean>;
  readonly history: ChatHistoryView;
  readonly memory: ChatMemoryView;
  readonly ai: AiService;
  /** The host of the plugin handling the message (the same as `setup` got). */
  readonly host: PluginHost<O>;
  readonly log: Logger;
  /** Scratch space for this one message, shared by the core's middleware and the plugins that handle it. */
  readonly state: Record<string, unknown>;
}

/** What the core binds into every tool call: the model can never choose the chat or user. */
export interface ToolCall<O = unknown> {
  chatId: string;
  senderId: string;
  senderAltId?: string;
  isOwner: boolean;
  ctx: MessageContext<O>;
  /**
   * Names sources (short links) the answer rests on. When the model's final answer shows none of them, the core
   * appends them as a "Sources:" list, so an answer built on a web search always says where it came from.
   */
  cite(links: string[]): void;
}

/**
 * A function offered to the main model. `parameters` is a TypeBox schema of the arguments object; the core checks
 * the model's arguments against it (defaults filled in) before `run`, and answers the model the problems instead.
 *
 * @example
 * defineTool({ name: 'roll_dice', description: 'Roll dice', parameters: Type.Object({ sides: Type.Integer({ minimum: 2, default: 6 }) }),
 *   effects: { outsideText: false, acts: 'nothing' }, run: ({ sides }) => String(1 + Math.floor(Math.random() * sides)) })
 */
export interface Tool<P extends TSchema = TObject> {
  name: string;
  description: string;
  /** The arguments object's schema (TypeBox, `Type.Object({ … })`): the model is shown it, and `args` are checked against it. */
  parameters: P;
  /** Capabilities the tool needs; it is not offered while one is missing. */
  needs?: string[];
  /**
   * The tool checks live information (news, prices, weather…). While no offered tool has it, the model is told it
   * cannot check live information, so it says so instead of guessing.
   */
  live?: boolean;
  /**
   * What the tool brings into a turn and what it acts on. A tool that declares nothing is taken to bring in outside
   * text and to act on chats (`UNDECLARED_EFFECTS`), so it is never offered in a turn that touches someone's own files.
   *
   * @example
   * effects: { outsideText: false, acts: 'nothing' } // a dice roll
   */
  effects?: ToolEffects;
  /**
   * A few words shown in a long turn's status message while the tool runs, lower case, ending in "…"
   * ("searching the web…"). Default "working on it…".
   */
  progress?: string;
  run(args: Static<P>, call: ToolCall): Awaitable<unknown>;
}

/**
 * The core's services for one plugin, handed to `setup(host)` (and on every context as `ctx.host`): its typed options,
 * settings, stores, the AI, sending, the jail, a logger. `O` is the plugin's options type, `C` its config section's.
 *
 * @example
 * setup(host) { const timer = setInterval(() => host.log.info({ sides: host.options().sides }), 60_000); … }
 */
export interface PluginHost<O = unknown, C = unknown> {
  readonly name: string;
  readonly settings: SettingsReader;
  /** The live config.json (after dashboard edits). */
  config(): BotConfig;
  /** Where config.json is; files the owner keeps beside it (such as `mcp.json`) are found from here. */
  readonly configFile: string;
  /**
   * This plugin's options, validated, with defaults filled in — the one way a plugin reads them, in setup, handlers,
   * tools and timers alike (live: a dashboard edit is seen at the next call, so call it where the value is used).
   */
  options(): O;
  /**
   * The value of the plugin's own top-level section of config.json (`configSection`), validated, its default when
   * the key is absent or its value invalid (live: reflects dashboard edits).
   */
  section(): C;
  /** An environment setting (`.env` under the real environment), e.g. one the plugin declared in `settings`. */
  setting(name: string): string | undefined;
  /** Folders of the plugin's files that are not records, and work folders for one job (see `PluginFiles`). */
  readonly files: PluginFiles;
  readonly log: Logger;
  readonly capabilities: Capabilities;
  readonly ai: AiService;
  readonly histories: HistoryView;
  readonly memories: MemoryView;
  /**
   * What the plugin keeps, scoped to it and to a chat: the documents and logs it declares in `stores`. Atomic,
   * checked on load, held during a backup, flushed at stop, and in `.mydata`, deletes and chat moves by declaration.
   */
  readonly store: PluginStore;
  /**
   * A person's data across the bot (the core's and every plugin's declared stores), as `.mydata` gives and deletes it:
   * `exportFor(ids)` by section, `deleteFor(ids)` the count removed per section. Only for acting on that person's own
   * request (the core's `mydata` plugin).
   */
  readonly personalData: PersonalData;
  /** Tells the owners about an incident once, and once when it recovers. */
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
  readonly audioKeys: AudioKeys;
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
  /**
   * Runs `text` through the main model in chat `chatId` as a turn of `senderId` made now — for work a person set to
   * run later (a scheduled task). It runs as that person: their access decides (blocked, no longer answered, the chat
   * paused or a group switched off: refused), the tools offered are those they may use in that chat, their AI budget
   * is spent, and the turn is kept in the chat's history. `system` adds instructions for this turn. Nothing is sent:
   * resolves with the answer (WhatsApp formatting; empty when the model chose silence) for the caller to send.
   * Rejects with `PromptRefused` (its `reason` a sentence for the person) when it may not run now (also over the
   * person's AI budget, while WhatsApp is not linked, and once the bot began to stop), and with
   * `AllProvidersFailedError` when no provider answered. `hidden`: the prompt is the bot's own (a check-in's pass),
   * not the person's words: it is not kept in the history (an answer the caller sends is, as the bot's).
   */
  promptAs(chatId: string, senderId: string, text: string, options?: { system?: string; hidden?: boolean }): Promise<string>;
  /**
   * Sends a text to a chat outside a message's handling (timers, jobs). A message the bot starts goes only to an
   * owner, a chat that wrote to the bot and is let in, or a recipient the owner approved; anyone else's rejects with
   * `RecipientRefused` (nothing is sent).
   */
  send(chatId: string, text: string): Promise<SentMessage>;
  sendMedia(chatId: string, media: OutgoingMedia): Promise<SentMessage>;
  /**
   * The effect guard: declare each effect the plugin can cause (`effects.declare(name, kind, run)` in setup) and
   * ask for it with `effects.act` — allowed it runs now, held it waits for the owner's 👍, denied it does nothing.
   */
  readonly effects: EffectsPort;
  /** The bot's ids: config targetUserIds plus those learnt at login. */
  botIds(): string[];
  /**
   * The chats named `name` (case aside: WhatsApp's group subjects; the console's group names), for an owner naming a
   * chat in words. Empty when none matches.
   */
  findChats(name: string): Promise<Array<{ id: string; name: string }>>;
  /** The account's own ids as the transport learnt them at login (phone jid, LID): its "Message yourself" chat. */
  ownIds(): string[];
  /** True when `id` is an owner (config `owners`, or the person at the console). */
  isOwner(id: string): boolean;
  /**
   * Who the bot answers and how, as the owners decide it (pairing codes, `.activation`, personas, paused chats).
   * Check `ctx.isOwner` before changing anything for someone.
   */
  readonly access: AccessDecisions;
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

/** How `ai.respond` answers one turn. */
export interface RespondOptions {
  /** The user's text (defaults to ctx.text). */
  text?: string;
  premium?: boolean;
  /** Extra system prompt lines for this turn (a plugin's instructions). */
  system?: string;
  /** Tools offered in addition to those of enabled plugins. */
  extraTools?: Tool[];
  /** Offer only these tools (plus extraTools), instead of every enabled plugin's. */
  onlyTools?: string[];
  /** Skip writing the user's text to history (the caller already did). */
  userAlreadyInHistory?: boolean;
  /** The text is the bot's own prompt (a check-in's hidden pass): asked as the last message, never kept in the history. */
  notInHistory?: boolean;
  /**
   * Someone else's words for this turn only (a document's text, a page, a card): the core frames each with
   * `quotedContent` (what it is, who it is from, markers its text cannot close) in a user-role message just before
   * the question, never in a system message and never in the history. A turn carrying content runs no tool that acts
   * (`effects.acts` other than `'nothing'`): such a call is refused, so words planted in it cannot act as the asker.
   * Never put such words in `system`.
   */
  content?: QuotedContentInput[];
  /**
   * The caller puts the quoted message's content in this turn itself (the documents plugin: the quoted document's
   * text in `content`), so the core adds nothing about the quote — neither a reader's words nor the line telling the
   * model that the quoted content is not available.
   */
  quotedInPrompt?: boolean;
  /**
   * Only these senders' turns (and the bot's answers to them) reach the model, and the chat's memory is left out:
   * for a turn whose tools act for one person (an open workspace in a group), so that other members' text —
   * addressed to the bot or not — cannot steer them. Ids are jids or bare numbers, phone or LID.
   */
  onlyTurnsOf?: string[];
  /**
   * When the sender is over an AI budget: `'answer'` (default) resolves with the sentence that says so, as the turn's
   * answer; `'throw'` rejects with `PromptRefused` carrying it (a scheduled turn tells its person once, not each run).
   */
  overBudget?: 'answer' | 'throw';
}

/**
 * The AI services plugins use. Every call goes through the provider chain: failover, cooldowns, usage accounting.
 *
 * @example
 * const answer = await ctx.ai.respond(ctx, { text: transcript });
 * await ctx.reply(answer);
 */
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
  respond(ctx: MessageContext<any>, options?: RespondOptions): Promise<string>;
  /** Resolves once the work `respond` left running after its answer (folding older turns into a summary) is done. */
  idle?(): Promise<void>;
  /** The bot stops: work `respond` left running writes nothing from now on (a summary being made is dropped). */
  stop?(): void;
  /** What the last answer of `respond` cost in tokens, over all its requests (tool rounds included). */
  lastReply?(): ReplyCost | undefined;
  /**
   * Checks the sender's AI budget (requests per minute, tokens per day, premium budget) for a call that does not go
   * through `respond` (vision, say). Returns the sentence to tell the user when over a limit; owners are exempt.
   */
  budget(ctx: MessageContext<any>, premium?: boolean): Promise<string | undefined>;
  /** Records token usage of a call made through `failover`, for the usage ledger and the sender's budget. */
  recordUsage(leg: string, model: string, premium: boolean, usage: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } } | undefined, userId?: string): void;
  /**
   * The models the gateway legs list (`GET /v1/models`, asked once per leg and kept), for checking a chat's model;
   * undefined when no leg lists its models.
   */
  models?(): Promise<string[] | undefined>;
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
