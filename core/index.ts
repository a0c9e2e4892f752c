/**
 * The one public entry for plugin authors — ours and third parties' alike — and the front door of a tiered API: what
 * every plugin needs is here (definePlugin, defineTool, Type, the narrowed contexts, the host, the coded errors);
 * the media and jail helpers are behind `wa-assistant-bot/media`, and the test kit behind `wa-assistant-bot/testing`
 * (`safeFileName` and `describeWriteError`, once behind `/storage`, are here). What only the built-in plugins
 * use (the status text, WhatsApp formatting, the jailed readers, vision, the data-file engines) is in core/builtin.ts,
 * a tier of its own outside the API package. Importing it loads neither the
 * app wiring, the WhatsApp adapter (Baileys) nor the web server (a test checks that, and the count of names here).
 * A plugin in its own npm package imports it as `wa-assistant-bot/plugin` (or from the `@wa-assistant-bot/plugin-api`
 * package, which carries the same entry).
 *
 * @example
 * import { definePlugin, Type } from 'wa-assistant-bot/plugin';
 * export default definePlugin({
 *   name: 'hello',
 *   description: 'Says hello',
 *   options: Type.Object({ greeting: Type.String({ default: 'Hello' }) }),
 *   setup: (host) => ({ commands: [{ command: 'hello', run: (ctx) => ctx.reply(`${host.options().greeting}, ${ctx.args || 'you'}!`) }] }),
 * });
 */
export { definePlugin, defineTool } from './kernel/plugin/contract.js';
export type { Awaitable } from './kernel/plugin/awaitable.js';
export type { ChatHistoryView, ChatMemoryView } from './kernel/plugin/chat-views.js';
export type {
  CommandContext,
  CommandHandler,
  CommandMatch,
  HandlerBase,
  LiteralHandler,
  MediaContext,
  MediaHandler,
  ObserverHandler,
  PredicateHandler,
} from './kernel/plugin/handlers.js';
export type { PluginListing, TriggerListing } from './kernel/plugin/listing.js';
export type {
  AiService,
  MessageContext,
  PluginHost,
  RespondOptions,
  Tool,
  ToolCall,
} from './kernel/plugin/message-context.js';
export type { PluginOffer, QuotedWords, QuotedWordsReader } from './kernel/plugin/offer.js';
export type { PanelAction, PanelTable, PluginPanel } from './kernel/plugin/panel.js';
export type { SiteDeclaration, SiteHandler, SiteRequest } from './kernel/plugin/site.js';
export type {
  CapabilityDeclaration,
  ConfigSectionDeclaration,
  DataFileDeclaration,
  Plugin,
  PluginSpec,
  SettingDeclaration,
} from './kernel/plugin/spec.js';
export type { ToolEffects } from './kernel/plugin/tool-effects.js';
export type { WatchedMedia, WatchedWordsReader } from './kernel/plugin/watch.js';
/*
 * The errors a plugin can catch, each with its stable `code` (PLUGIN_…, see docs/reference/errors.md), and the shared
 * constants: one leaf module (core/api/errors.ts). Compare `err.code` rather than `instanceof` where a plugin may hold
 * another copy of this entry (its own package).
 */
export {
  AllProvidersFailedError,
  BadAnswerError,
  CodedError,
  DataWriteError,
  KeysExhaustedError,
  MAX_PERSONA_CHARS,
  MediaTooLargeError,
  MemoryFullError,
  OutboxClosedError,
  PluginError,
  /** A poll that could not be sent (`ctx.sendPoll`): its message says why, for the model or the user. */
  PollRefused,
  /** A scheduled turn (`host.promptAs`) that may not run now; `reason` is a sentence for the person who set it. */
  PromptRefused,
  ProviderDownError,
  RequestRejectedError,
  /** The wait an upstream asked for (retry-after / retry-after-ms headers), for plugins that call an upstream of their own. */
  retryAfterMs,
  StoreWriteError,
  describeWriteError,
  TURN_FAILED,
  UpstreamFailure,
  type PluginErrorCode,
} from './api/errors.js';
/** A file name an id (a chat id, a username) cannot escape its folder with. */
export { safeFileName } from './api/file-name.js';
export type { TurnFact, TurnPlan, TurnRecord, TurnToolCall } from './kernel/plugin/turn-policy.js';
export type { TurnPolicy } from './kernel/plugin/offer.js';
/** The option-schema builder (TypeBox): JSON Schema at run time, a TypeScript type at compile time. */
export { Type, type Static, type TObject, type TSchema } from '#typebox';
/** The narrow views and ports the host hands out (host.settings, host.histories, host.memories, host.audioKeys, host.access). */
export type { AccessDecisions, AudioKeys, HistoryView, MemoryView, PersonalData, PluginFiles, SettingsReader, WorkFolder } from './kernel/plugin/ports.js';
/** @deprecated The earlier names of `AudioKeys`, `HistoryView` and `AccessDecisions` (the host hands out these views, not the services). */
export type { AccessDecisions as AccessControl, AudioKeys as KeyPool, HistoryView as HistoryStore } from './kernel/plugin/ports.js';
export type { KeyPoolNotices } from './services/providers/key-pool.js';
export type { ApproveResult } from './kernel/access/access-control.js';

/** The provider chain's premium-model rule, shared by every plugin that honours an explicit premium request. */
export { DEFAULT_PREMIUM_PHRASES, premiumRequest } from './kernel/chat/premium-request.js';
/** Provenance: someone else's words framed for the model as content (see RespondOptions.content and docs/plugin-authors). */
export { quotedContent, neutralisedContent, type QuotedContentInput } from './kernel/chat/quoted-content.js';

/**
 * Storage as a host service: declare what the plugin keeps with `Store` (in `definePlugin({ stores })`), open it with
 * `host.store`. Backups, `.mydata`, deletes and chat moves follow from the declaration (docs/plugin-authors/storage.md).
 */
export { Store, type CarriedMessage, type ChatDocDeclaration, type ChatLogDeclaration, type ChatSearchLogDeclaration, type DocDeclaration, type SearchHit, type SearchLogItem, type StoreDeclaration } from './services/store/store-declarations.js';
export type { ChatStore, PluginStore, StoredDoc, StoredLog, StoredSearchLog, SearchLogTuning } from './services/store/store-api.js';
/** WhatsApp ids: `isLid('1@lid')`, `userPart('62811@s.whatsapp.net:3') === '62811'`, `inIdList(id, ['62811'])`. */
export { inIdList, isLid, isSelfChat, userPart } from './kernel/port/ids.js';
export { phoneNumber } from './kernel/port/shared.js';
export type { Activation, PairingRequest } from './kernel/access/access-store.js';
/** An upstream base URL in the forms users write (with or without /v1), as the SDKs want it. */
export { normalizeBaseUrl } from './services/providers/normalize.js';

export type { CapabilityStatus } from './api/capability-status.js';
export type { DownloadOptions, IncomingMessage, IncomingMedia, MediaKind, OutgoingContact, OutgoingLocation, OutgoingMedia, OutgoingPoll, PollVote, QuotedMessage, SentMessage, SharedContact, SharedLocation } from './kernel/port/message.js';
export type { AppendOptions, ChatSummary, HistoryEntry, HistoryAppendListener } from './services/store/history.js';
export type { MemoryFact } from './services/store/memory.js';
/** A secret's escaped and encoded forms (JSON, URL, base64), for a plugin hiding its own credentials. */
export { secretForms } from './services/log/secret-forms.js';
export type { Logger } from './api/logger.js';
export type { OwnerNotifier } from './services/notices/owner-notifier.js';
export type { Jail, JailLimits } from './services/jail/jail.js';
export type { DataSchema } from './services/store/schemas.js';
export type { PrivacyParticipant, PersonIds } from './kernel/port/privacy-participant.js';
export type { DataHealth } from './services/store/data-health.js';
/** For plugins that call a provider leg themselves (vision). */
export type { ProviderLeg } from './services/providers/types.js';
