import type { IncomingMedia, MediaKind, QuotedMessage } from '../port/message.js';
import type { TurnPlan, TurnRecord } from './turn-policy.js';
import type { Awaitable } from './awaitable.js';
import type { CommandHandler, LiteralHandler, MediaHandler, ObserverHandler, PredicateHandler } from './handlers.js';
import type { MessageContext, Tool } from './message-context.js';
import type { PluginPanel } from './panel.js';
import type { ChatWatch, WatchedWordsReader } from './watch.js';

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
 * The owner's rules around each AI turn. `before` runs ahead of every model turn (a refusal there stops it); `after`
 * runs once the answer is made, before it is sent. Both run for turns of scheduled tasks (`host.promptAs`) too.
 */
export interface TurnPolicy {
  before(ctx: MessageContext, turn: { premium: boolean }): Promise<TurnPlan> | TurnPlan;
  after(ctx: MessageContext, record: TurnRecord): Promise<void> | void;
}
