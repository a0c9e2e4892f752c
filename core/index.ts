/**
 * The one public entry for plugin authors — ours and third parties' alike — and the front door of a tiered API: what
 * every plugin needs is here (definePlugin, defineTool, Type, the narrowed contexts, the host, the coded errors);
 * the media and jail helpers are behind `wa-assistant-bot/media`, the data-file helpers behind
 * `wa-assistant-bot/storage`, and the test kit behind `wa-assistant-bot/testing`. Importing it loads neither the
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
export type {
  AiService,
  Awaitable,
  CapabilityDeclaration,
  ChatHistoryView,
  ChatMemoryView,
  CommandContext,
  CommandHandler,
  CommandMatch,
  ConfigSectionDeclaration,
  DataFileDeclaration,
  HandlerBase,
  LiteralHandler,
  MediaContext,
  MediaHandler,
  MessageContext,
  ObserverHandler,
  Plugin,
  PluginHost,
  PluginOffer,
  PluginSpec,
  PredicateHandler,
  QuotedWords,
  QuotedWordsReader,
  RespondOptions,
  SettingDeclaration,
  PluginListing,
  SiteDeclaration,
  SiteHandler,
  SiteRequest,
  Tool,
  ToolCall,
  ToolEffects,
  TriggerListing,
} from './kernel/plugin/types.js';
export { PluginError, type PluginErrorCode } from './kernel/plugin/errors.js';
export { CodedError } from './services/coded-error.js';
/** The option-schema builder (TypeBox): JSON Schema at run time, a TypeScript type at compile time. */
export { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';

/*
 * The errors a plugin can catch, each with its stable `code` (PLUGIN_…, see docs/reference/errors.md): compare
 * `err.code` rather than `instanceof` where a plugin may hold another copy of this entry (its own package).
 */
export { AllProvidersFailedError } from './services/providers/types.js';
/** A scheduled turn (`host.promptAs`) that may not run now; `reason` is a sentence for the person who set it. */
export { PromptRefused } from './kernel/chat/scheduled-turn.js';
/** A poll that could not be sent (`ctx.sendPoll`): its message says why, for the model or the user. */
export { PollRefused } from './kernel/chat/polls.js';
/** The wait an upstream asked for (retry-after / retry-after-ms headers), for plugins that call an upstream of their own. */
export { BadAnswerError, retryAfterMs, UpstreamFailure } from './services/providers/failure.js';
export { KeysExhaustedError, ProviderDownError, RequestRejectedError, type KeyPool, type KeyPoolNotices } from './services/providers/key-pool.js';
export { MemoryFullError } from './services/store/memory.js';
export { DataWriteError } from './services/store/data-health.js';
export { OutboxClosedError } from './services/sending/outbox.js';

/** `.status` as text: how the bot is doing (link, provider legs, capabilities, usage), never a key. */
export { statusText, type StatusReport } from './kernel/status/status-report.js';
/** The provider chain's premium-model rule, shared by every plugin that honours an explicit premium request. */
export { DEFAULT_PREMIUM_PHRASES, premiumRequest } from './kernel/chat/premium-request.js';
/** Chat answers in WhatsApp formatting: the model's Markdown converted (ctx.ai.respond does it for its answers). */
export { toWhatsApp } from './kernel/chat/whatsapp-format.js';
/** Provenance: someone else's words framed for the model as content (see RespondOptions.content and docs/plugin-authors). */
export { quotedContent, neutralisedContent, type QuotedContentInput } from './kernel/chat/quoted-content.js';
export { TURN_FAILED } from './kernel/pipeline/progress.js';

/**
 * Storage as a host service: declare what the plugin keeps with `Store` (in `definePlugin({ stores })`), open it with
 * `host.store`. Backups, `.mydata`, deletes and chat moves follow from the declaration (docs/plugin-authors/storage.md).
 */
export { Store, type CarriedMessage, type ChatDocDeclaration, type ChatLogDeclaration, type ChatSearchLogDeclaration, type DocDeclaration, type StoreDeclaration } from './services/store/store-declarations.js';
export { StoreWriteError, type ChatStore, type PluginStore, type StoredDoc, type StoredLog, type StoredSearchLog, type SearchLogTuning } from './services/store/store-api.js';
export type { SearchHit, SearchLogItem } from './services/store/search-log/chat-search-log.js';
/** WhatsApp ids: `isLid('1@lid')`, `userPart('62811@s.whatsapp.net:3') === '62811'`, `inIdList(id, ['62811'])`. */
export { inIdList, isLid, userPart } from './kernel/port/ids.js';
export { phoneNumber } from './kernel/port/shared.js';
export { MAX_PERSONA_CHARS, type AccessControl } from './kernel/access/access-control.js';
export type { Activation, PairingRequest } from './kernel/access/access-store.js';
/** An upstream base URL in the forms users write (with or without /v1), as the SDKs want it. */
export { normalizeBaseUrl } from './services/providers/normalize.js';

export type { CapabilityStatus } from './kernel/capabilities/capabilities.js';
export { MediaTooLargeError } from './kernel/port/media-limit.js';
export type { DownloadOptions, IncomingMessage, IncomingMedia, MediaKind, OutgoingContact, OutgoingLocation, OutgoingMedia, OutgoingPoll, PollVote, QuotedMessage, SentMessage, SharedContact, SharedLocation } from './kernel/port/message.js';
export type { AppendOptions, HistoryEntry, HistoryStore, HistoryAppendListener } from './services/store/history.js';
export type { MemoryFact } from './services/store/memory.js';
/** A secret's escaped and encoded forms (JSON, URL, base64), for a plugin hiding its own credentials. */
export { secretForms } from './services/log/secret-forms.js';
export type { Logger } from './services/log/logger.js';
export type { OwnerNotifier } from './services/notices/owner-notifier.js';
export type { Jail, JailLimits } from './services/jail/jail.js';
export type { DataSchema } from './services/store/schemas.js';
export type { PrivacyParticipant, PersonIds } from './services/store/privacy.js';
export type { DataHealth } from './services/store/data-health.js';
/** For plugins that call a provider leg themselves (vision). */
export type { ProviderLeg } from './services/providers/types.js';
