import type { TurnPlan, TurnRecord } from './turn-policy.js';
import type { Static, TObject, TSchema, TUnknown } from '#typebox';
import type { PluginStore } from '../../services/store/store-api.js';
import type { StoreDeclaration } from '../../services/store/store-declarations.js';
import type { Capabilities } from '../capabilities/capabilities.js';
import type { CapabilityStatus } from '../../api/capability-status.js';
import type { BotConfig } from '../../services/config/schema.js';
import type { Logger } from '../../api/logger.js';
import type { AppendOptions, HistoryEntry } from '../../services/store/history.js';
import type { AccessDecisions, AudioKeys, HistoryView, MemoryView, PersonalData, PluginFiles, SettingsReader } from './ports.js';
import type { MemoryFact } from '../../services/store/memory.js';
import type { IncomingMedia, IncomingMessage, MediaKind, OutgoingContact, OutgoingLocation, OutgoingMedia, OutgoingPoll, QuotedMessage, SentMessage } from '../port/message.js';
import type { LegHealth, ProviderLeg } from '../../services/providers/types.js';
import type { ChatMessage, CompleteOptions, CompletionResult } from './chat-completion.js';
import type { OwnerNotifier } from '../../services/notices/owner-notifier.js';
import type { Jail } from '../../services/jail/jail.js';
import type { ReplyCost, StatusReport } from '../status/status-report.js';
import type { DataSchema } from '../../services/store/schemas.js';
import type { QuotedContentInput } from '../chat/quoted-content.js';
import type { EffectKind } from '../guard/policy.js';
import type { EffectsPort } from '../guard/types.js';

/*
 * The plugin contract, one set of types the core itself runs on: a plugin is a factory that declares what it is
 * (`PluginSpec`: name, options, needs, what it provides) and `setup(host)` returns what it offers (`PluginOffer`).
 * State lives in setup's closure, one per running bot. `definePlugin` (contract.ts) checks a spec and freezes it.
 */

export type Awaitable<T> = T | Promise<T>;

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
  /**
   * True when the message being handled was in the history and a delete (its sender's `.mydata delete`, a delete for
   * everyone) or an edit took it out since: its answer is then kept nowhere, since it may repeat the removed words.
   */
  incomingRemoved(): boolean;
}

/** The chat's memory as a plugin sees it: bound to the current chat. */
export interface ChatMemoryView {
  facts(): Promise<MemoryFact[]>;
  remember(text: string): Promise<void>;
}

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

/** A command or literal handler's context: the command word as typed and its arguments are always there. */
export interface CommandContext<O = unknown> extends MessageContext<O> {
  readonly command: CommandMatch;
  /** The rest of the line after the command word, trimmed ('' when nothing follows). */
  readonly args: string;
}

/** A media handler's context: the media the trigger matched is always there. */
export interface MediaContext<O = unknown> extends MessageContext<O> {
  readonly media: IncomingMedia;
}

/**
 * What every handler may declare besides its trigger: help lines, and the capabilities it needs on top of the
 * plugin's own `needs` (the handler is not run while one is missing; `missing` is said instead).
 */
export interface HandlerBase {
  help?: string;
  /** Capabilities this handler needs besides the plugin's (e.g. `audio` for the one handler that transcribes). */
  needs?: string[];
  /** The reply when this handler matches but one of its needs is missing. Default: the plugin's `missing`. */
  missing?: string | ((missing: string[]) => string);
}

/** `.roll` with the configured prefix; `args` holds the rest of the line. */
export interface CommandHandler<O = unknown> extends HandlerBase {
  command: string;
  /** Shown in `.help`, written with the default "." prefix (it is shown with the configured one). */
  usage?: string;
  run(ctx: CommandContext<O>): Awaitable<unknown>;
}
/** A fixed first word whatever the prefix, such as `/ws`. */
export interface LiteralHandler<O = unknown> extends HandlerBase {
  literal: string;
  usage?: string;
  run(ctx: CommandContext<O>): Awaitable<unknown>;
}
/** A message carrying media of one of these kinds. */
export interface MediaHandler<O = unknown> extends HandlerBase {
  media: MediaKind | MediaKind[];
  run(ctx: MediaContext<O>): Awaitable<unknown>;
}
/**
 * An observer that needs capabilities besides the plugin's: the core does not run it while one is missing (checked at
 * every message, so a capability lost at run time stops it and a recovered one starts it again), and the start log
 * names it with `missing`, the sentence saying what is off meanwhile.
 *
 * @example
 * observers: [{ needs: ['audio'], missing: 'voice notes are not transcribed or archived', run: (ctx) => archive(ctx) }]
 */
export interface ObserverHandler<O = unknown> {
  needs?: string[];
  /** What is off while a need is missing, for the start log (e.g. 'voice notes are not archived'). */
  missing?: string;
  run(ctx: MessageContext<O>): Awaitable<unknown>;
}

/** Any predicate (e.g. "this user has a workspace open"); `usage` puts it in `.help` (e.g. `usage: '(photo)'`). */
export interface PredicateHandler<O = unknown> extends HandlerBase {
  when(ctx: MessageContext<O>): boolean;
  usage?: string;
  run(ctx: MessageContext<O>): Awaitable<unknown>;
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
 * What `setup(host)` returns. Within a plugin, handlers are tried in this order: commands, literals, media,
 * predicates; the first that matches handles the message. (There are no `patterns`: a predicate testing `ctx.text`
 * does what one did, and a plugin still offering them is refused with PLUGIN_REMOVED_PART.)
 */
export interface PluginOffer<O = unknown> {
  commands?: CommandHandler<O>[];
  literals?: LiteralHandler<O>[];
  media?: MediaHandler<O>[];
  predicates?: PredicateHandler<O>[];
  /**
   * See every message of a chat the bot takes part in, addressed to it or not, before routing (never one of a group no
   * owner opened, a paused chat or a held stranger); never stop other plugins from running. A plain
   * function, or `{ needs, missing, run }` for one that needs capabilities besides the plugin's.
   */
  observers?: Array<((ctx: MessageContext<O>) => Awaitable<unknown>) | ObserverHandler<O>>;
  /**
   * Tools offered to the main model: a list, or a function giving the tools for one message (for tools found at
   * run time, or offered only to some senders or chats). A function's tools are not checked at registration: one
   * whose name another plugin (or the core) already offers is left out of that message, with a log line.
   */
  tools?: Tool<any>[] | ((ctx: MessageContext<O>) => Tool<any>[]);
  /**
   * Puts a quoted message of these media kinds into words for the model. When any AI turn (`ctx.ai.respond`, from any
   * plugin or the core's free-text answer) replies to a message of such a kind, the core asks the first active plugin
   * offering that kind (its `needs` met, the sender allowed to use it) and gives the model the words as quoted content,
   * marked as never instructions; they are not written to the chat's history. A quote of a message deleted for
   * everyone never reaches `read`: the turn is answered with the one sentence that says so. Asked once per message.
   *
   * @example
   * quotedWords: [{ media: ['voice', 'audio'], read: async (ctx, quoted) => ({ words: await transcriptOf(ctx.chatId, quoted.id) }) }]
   */
  quotedWords?: QuotedWordsReader<O>[];
  /**
   * A read-only watch of chats the owner chose (`.watch`): `isWatched(chatId)` names them, and `keep(message)` gets
   * each message of a watched chat — anyone's, the owner's own typing included — and of no other chat. The core
   * answers nothing in a watched chat and never offers a message of one to handlers, observers or the model; the
   * account's own "Message yourself" chat is never watched. A failing `keep` is logged, never told in the chat.
   */
  watch?: ChatWatch;
  /**
   * Puts media of a watched chat into words (a voice note's transcript) for the plugin that keeps the chat, when it
   * asks (`keep(message, media)` → `media.words()`). The core asks the first active plugin offering that kind, its
   * `needs` met. What it costs is the owner's: they chose to watch the chat and to have its media put into words.
   *
   * @example
   * watchedWords: [{ media: ['voice', 'audio'], needs: ['audio'], read: async (message) => (await transcribe(await message.media.download())).text }]
   */
  watchedWords?: WatchedWordsReader[];
  /**
   * The plugin's panel on the dashboard's Plugins view (owners only, behind the dashboard's login): tables of what it
   * keeps, read each time the page is shown, and actions of one text field each (watching a chat from the dashboard,
   * say). Nothing of it reaches a chat; an action answers the sentence the page shows after it.
   *
   * @example
   * panel: { read: async () => [{ caption: 'Watched chats', columns: ['chat'], rows: names.map((n) => [n]) }], actions: [{ name: 'unwatch', label: 'Stop watching', field: 'chat name', run: (name) => unwatch(name) }] }
   */
  panel?: PluginPanel;
  /**
   * Core plugins only (another plugin's is ignored): the owner's rules around every AI turn — the chat's profile
   * (model, tools, answer length), money caps, and the record of what each turn was. See `TurnPolicy`.
   */
  turnPolicy?: TurnPolicy;
  /** Timers and resources to release when the bot stops. */
  stop?(): Awaitable<void>;
}

/** See `PluginOffer.watch`. */
export interface ChatWatch {
  isWatched(chatId: string): boolean;
  keep(message: IncomingMessage, media: WatchedMedia): Awaitable<void>;
}

/** What `ChatWatch.keep` may ask the core about a watched message's media. */
export interface WatchedMedia {
  /**
   * The media's words from the plugin that offers them for its kind (`watchedWords`), asked now: undefined when the
   * message has no media, no active plugin offers its kind (or its `needs` are unmet), or the reader found none or failed.
   */
  words(): Promise<string | undefined>;
}

/** See `PluginOffer.panel`. */
export interface PluginPanel {
  read(): Awaitable<PanelTable[]>;
  actions?: PanelAction[];
}

/** One table of a plugin's dashboard panel: plain text cells (escaped when shown). */
export interface PanelTable {
  caption: string;
  columns: string[];
  rows: string[][];
  /** Shown instead of an empty table. */
  empty?: string;
}

/** One action of a plugin's dashboard panel: a button with one text field; `run` answers the sentence shown after it. */
export interface PanelAction {
  /** Its id in the form (letters, digits, `-`). */
  name: string;
  /** The button's words ("Watch"). */
  label: string;
  /** What the text field asks for ("chat name or number"). */
  field: string;
  run(value: string): Awaitable<string>;
}

/** See `PluginOffer.watchedWords`. */
export interface WatchedWordsReader {
  media: MediaKind | MediaKind[];
  /** Capabilities the reader needs besides the plugin's; while one is missing, it is not asked. */
  needs?: string[];
  /** The words of the message's media, or undefined when it cannot say them (too long, no longer served). */
  read(message: IncomingMessage & { media: IncomingMedia }): Awaitable<string | undefined>;
}

/**
 * A plugin's offer to put quoted messages of some media kinds into words (a voice note's transcript, say), for any AI
 * turn that replies to one. `ctx` is the turn's context seen through this plugin (its host and options).
 */
export interface QuotedWordsReader<O = unknown> {
  media: MediaKind | MediaKind[];
  /** Capabilities the reader needs besides the plugin's; while one is missing, it is not asked. */
  needs?: string[];
  read(ctx: MessageContext<O>, quoted: QuotedMessage & { media: IncomingMedia }): Awaitable<QuotedWords>;
}

/**
 * What a reader found for a quoted message: its `words` (and a `notice` put before the answer, such as "I listened to
 * it just now"); or `unavailable`, the sentence the sender gets instead of an answer (it was erased, it cannot be
 * heard now), without asking the model; or undefined when it has nothing to add (the turn goes on as it is).
 */
export type QuotedWords = { words: string; notice?: string } | { unavailable: string } | undefined;

/**
 * A capability a plugin owns: detected at start for the one start-log table, needed by name by any plugin.
 * `detect` answers true/false or `{ ok, detail }`; when it is not ok without a detail, `missing` is the sentence shown.
 */
export interface CapabilityDeclaration {
  name: string;
  detect(host: PluginHost<any, any>): Awaitable<boolean | CapabilityStatus>;
  /** Re-checked when used, for capabilities that change at run time (keys exhausted). */
  live?(): CapabilityStatus;
  missing: string;
  /** For owners: how to get it when it is missing, in plain words (the start report prints it next to "off"). */
  fix?: string;
}

/** An environment setting a plugin reads; the start log says whether it is set (never its value). */
export interface SettingDeclaration {
  name: string;
  description: string;
}

/**
 * A kind of data file a plugin's `stores` stand for (each declaration's, and the `earlierFiles` of layouts it was
 * converted from): the backup manifest names its version (a backup made by a newer version is refused at restore),
 * `npm run doctor` checks the files, and, for a path without placeholders in its folder, the temporary files an
 * interrupted write left there are swept at start.
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
  /**
   * What the plugin keeps through `host.store` (made with `Store.chatDoc`, `Store.doc`, `Store.chatLog`): the core
   * writes, checks, backs up and flushes them, and answers `.mydata`, deletes and chat moves for them.
   */
  stores?: StoreDeclaration[];
  /** A top-level section of config.json the plugin owns (see `ConfigSectionDeclaration`). */
  configSection?: ConfigSectionDeclaration<C>;
  /** Whether the plugin is on when config.json does not mention it. Default true. */
  enabledByDefault?: boolean;
  /**
   * The plugin answers free text that no other plugin claims (the core's `chat` plugin does, with the main model; a
   * plugin of yours may instead, e.g. with the chat plugin turned off). `.help` reads it to say whether anything
   * besides the commands is answered. Give such a plugin a late `order` so it comes after the commands.
   */
  answersFreeText?: boolean;
  /** Lower is tried earlier among plugins whose handlers match. Default 100. */
  order?: number;
  setup(host: PluginHost<Static<S>, Static<C>>): Awaitable<PluginOffer<Static<S>>>;
}

/**
 * A plugin as the core keeps it: the spec `definePlugin` checked and froze (options erased to `any`: each plugin's own
 * are checked against its schema by the core). The core tells one from anything else by its brand (`isPlugin` in
 * contract.ts), which is kept out of this type on purpose: two copies of the API (the bot's and a plugin's package)
 * must describe the same type.
 */
export interface Plugin extends Readonly<Omit<PluginSpec<TObject, TSchema>, 'options' | 'setup' | 'configSection' | 'provides' | 'stores'>> {
  /** What it keeps through `host.store` (see `Store` in services/store/store-declarations.ts). */
  readonly stores?: readonly StoreDeclaration[];
  /** The kinds of data files its `stores` stand for (see `DataFileDeclaration`). */
  readonly dataFiles: readonly DataFileDeclaration[];
  /** JSON schema of this plugin's options in config.json (besides `enabled` and `access`). */
  readonly optionsSchema: TObject;
  readonly provides?: readonly CapabilityDeclaration[];
  /** A top-level section of config.json it owns, see `ConfigSectionDeclaration`. */
  readonly configSection?: ConfigSectionDeclaration;
  /** The factory returning what the plugin offers. */
  setup(host: PluginHost<any, any>): Awaitable<PluginOffer<any>>;
}

/**
 * What one handler of a running plugin reacts to (the core's routing shape of the handlers a plugin offers).
 */
export type Trigger =
  | { command: string; help?: string; usage?: string }
  | { literal: string; help?: string; usage?: string }
  | { media: MediaKind | MediaKind[]; help?: string }
  | { when: (ctx: MessageContext) => boolean; help?: string; usage?: string };

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
  /**
   * The effect a call causes, for the core's effect guard (config.json `guard`): every call then asks it first —
   * allowed it runs, held it waits for the owner's 👍, denied the model is told why. E.g. `'deleteFiles'`, `'publish'`.
   */
  kind?: EffectKind;
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
  /** Serves GET/HEAD `/<name>/…`; calls `next()` for anything it does not serve. */
  handler: SiteHandler;
}

/**
 * One web request as a site handler sees it: the part of the web server's request context that serving files needs.
 * The web server hands in its Koa context, which has these members (and more); declared here so that the plugin API
 * carries no web-server types.
 */
export interface SiteRequest {
  readonly method: string;
  /** The request path, without the query. */
  readonly path: string;
  status: number;
  /** The Content-Type (a full value such as `text/html; charset=utf-8`, or an extension). */
  type: string;
  /** The Content-Length in bytes. */
  length: number;
  /** A string, a Buffer or a readable stream. */
  body: unknown;
  /** Sets a response header. */
  set(field: string, value: string): void;
  redirect(url: string): void;
}

/**
 * A site's request handler, middleware-style: answers by setting `ctx.status`/`ctx.body`, or calls `next()` to let
 * the web server go on (a 404 in the end).
 *
 * @example
 * const handler: SiteHandler = async (ctx, next) => { if (ctx.path !== '/hello/') return next(); ctx.type = 'text/plain'; ctx.body = 'hi'; };
 */
export type SiteHandler = (ctx: SiteRequest, next: () => Promise<unknown>) => unknown;

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
  /** It declares that it answers free text no other plugin claims (`answersFreeText`). */
  readonly answersFreeText: boolean;
  /** The names of the tools it offers to the model, when it lists them up front (empty for one that did not start). */
  readonly tools: readonly string[];
  /** It chooses its tools per message (`tools` given as a function): `tools` cannot name them in advance. */
  readonly toolsPerMessage: boolean;
  /** True when this sender may use the plugin (its `access` in config.json). */
  mayUse(message: Pick<IncomingMessage, 'senderId' | 'senderAltId' | 'fromOperator'>): boolean;
}

/** One handler's trigger as `host.plugins()` shows it: the word or media it answers and its help, no code. */
export type TriggerListing = (
  | { kind: 'command'; command: string; help?: string; usage?: string }
  | { kind: 'literal'; literal: string; help?: string; usage?: string }
  | { kind: 'media'; media: MediaKind[]; help?: string }
  | { kind: 'predicate'; help?: string; usage?: string }
) & {
  /** The capabilities the handler needs (the plugin's and its own): `host.capabilities.missing(needs)` says what is off now. */
  needs: readonly string[];
};

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

/**
 * The owner's rules around each AI turn. `before` runs ahead of every model turn (a refusal there stops it); `after`
 * runs once the answer is made, before it is sent. Both run for turns of scheduled tasks (`host.promptAs`) too.
 */
export interface TurnPolicy {
  before(ctx: MessageContext, turn: { premium: boolean }): Promise<TurnPlan> | TurnPlan;
  after(ctx: MessageContext, record: TurnRecord): Promise<void> | void;
}
