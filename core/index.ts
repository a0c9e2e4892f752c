/**
 * The one public entry for plugin authors — ours and third parties' alike. A plugin imports nothing else from the
 * core; a plugin in its own npm package imports it as `wa-assistant-bot/plugin`.
 *
 * @example
 * import { definePlugin, Type } from 'wa-assistant-bot/plugin';
 * export default definePlugin({
 *   name: 'hello',
 *   description: 'Says hello',
 *   options: Type.Object({ greeting: Type.String({ default: 'Hello' }) }),
 *   setup: () => ({ commands: [{ command: 'hello', run: (ctx) => ctx.reply(`${ctx.options.greeting}, ${ctx.args || 'you'}!`) }] }),
 * });
 */
export { definePlugin } from './kernel/plugin/contract.js';
export type {
  CapabilityDeclaration,
  CommandContext,
  CommandHandler,
  ConfigSectionDeclaration,
  DataFileDeclaration,
  Host as PluginHost,
  LiteralHandler,
  MediaContext,
  MediaHandler,
  MessageContext,
  PatternContext,
  PatternHandler,
  PluginAi,
  PluginOffer,
  PluginSpec,
  PluginTool,
  PredicateHandler,
  SettingDeclaration,
  ToolCallOf,
} from './kernel/plugin/contract.js';
export type { Plugin, CommandMatch, ChatHistoryView, ChatMemoryView, PluginListing, ToolEffects, TriggerListing } from './kernel/plugin/types.js';
export { PluginError, type PluginErrorCode } from './kernel/plugin/errors.js';
/** True when an id (jid, LID or bare digits) is one of a list's, compared by the user part as the core does. */
export { inIdList } from './kernel/port/ids.js';

/** The option-schema builder (TypeBox): JSON Schema at run time, a TypeScript type at compile time. */
export { Type, type Static, type TObject } from '@sinclair/typebox';

export type { CapabilityStatus } from './kernel/capabilities/capabilities.js';
export type { IncomingMessage, IncomingMedia, MediaKind, OutgoingMedia, SentMessage } from './kernel/port/message.js';
export type { AppendOptions, HistoryEntry } from './services/store/history.js';
export type { MemoryFact } from './services/store/memory.js';
export type { Logger } from './services/log/logger.js';
export type { AiService, RespondOptions } from './kernel/plugin/types.js';
export { AllProvidersFailedError } from './services/providers/types.js';
/** The wait an upstream asked for (retry-after / retry-after-ms headers), for plugins that call an upstream of their own. */
export { BadAnswerError, retryAfterMs, UpstreamFailure } from './services/providers/failure.js';
export { KeyPool, KeysExhaustedError, ProviderDownError, RequestRejectedError, type KeyPoolNotices } from './services/providers/key-pool.js';
export { statusText, type StatusReport } from './kernel/status/status-report.js';
/** The provider chain's premium-model rule, shared by every plugin that honours an explicit premium request. */
export { DEFAULT_PREMIUM_PHRASES, premiumRequest } from './kernel/chat/premium-request.js';
export { toWhatsApp } from './kernel/chat/whatsapp-format.js';

/**
 * Storage as a host service: declare what the plugin keeps with `Store` (in `definePlugin({ stores })`), open it with
 * `host.store`. Backups, `.mydata`, deletes and chat moves follow from the declaration (docs/plugin-authors/storage.md).
 */
export { Store, type ChatDocDeclaration, type ChatLogDeclaration, type DocDeclaration, type StoreDeclaration } from './services/store/store-declarations.js';
export { StoreWriteError, type ChatStore, type PluginStore, type StoredDoc, type StoredLog } from './services/store/plugin-store.js';

/*
 * Storage helpers for plugins that keep files of their own under `host.dataDir`: atomic writes, a JSON file with a
 * schema and corruption handling, the data folder's health, and the people registry of the privacy controls.
 */
export { writeJsonAtomic } from './services/store/atomic.js';
export { JsonFile } from './services/store/json-file.js';
export { healthFor } from './services/store/data-domain.js';
export { checkDocument, type DataSchema } from './services/store/schemas.js';
export type { PrivacyParticipant } from './services/store/privacy.js';
/** WhatsApp ids: `isLid('1@lid')`, `userPart('62811@s.whatsapp.net:3') === '62811'`. */
export { isLid, userPart } from './kernel/port/ids.js';
export { MAX_PERSONA_CHARS, type AccessControl } from './kernel/access/access-control.js';
export type { Activation, PairingRequest } from './kernel/access/access-store.js';


/** Append-only data files of a plugin's own (waiting while a backup holds the writes), and the history append hook. */
export { appendToFile, releaseAppendHandle, writeFileAtomicSafe as writeFileAtomic } from './services/store/atomic.js';
export { flushWithStores } from './services/store/json-file.js';
export type { DataHealth } from './services/store/data-health.js';
export type { HistoryAppendListener } from './services/store/history.js';
/** True when a chat is the private chat with the person (privacy participants). */
export { isPrivateChatOf } from './services/store/privacy.js';

/**
 * The jail and the helper programs it runs, for plugins that handle untrusted media (`host.jail` is the bot's jail).
 *
 * @example
 * import { ffmpegBinary, type Jail } from 'wa-assistant-bot/plugin';
 * const ffmpeg = ffmpegBinary(host.settings).path;
 * await host.jail.run({ kind: 'media', program: ffmpeg, args: ['-i', 'in/a', 'out/a.mp3'], inputs: { a: file }, outputTo: dir, limits });
 */
export { JailRefused, type Jail, type JailLimits } from './services/jail/jail.js';
export type { EgressPolicy } from './services/jail/egress-proxy.js';
export { ffmpegBinary } from './kernel/capabilities/detect.js';
/** "yt-dlp <version> (<where>)", amber when that version is old (sites change; old yt-dlp fails). */
export { ytdlpStatus } from './kernel/capabilities/tool-age.js';
/**
 * Untrusted media: pin a file's format before ffmpeg reads it, and refuse images whose header declares too many pixels.
 *
 * @example
 * const args = [...inputArgs(await pinFileFormat(file, 'audio-video')), '-i', file];
 */
export { assertPixelBudget, DEFAULT_MAX_IMAGE_PIXELS, inputArgs, MediaRefused, pinFileFormat, pinFormat, type PinnedFormat } from './services/media/index.js';
/** For plugins that call a provider leg themselves (vision): a leg; `BadAnswerError` above is for an unusable answer. */
export type { ProviderLeg } from './services/providers/types.js';
/*
 * More services for plugins that keep data or handle chat media: the rest of the atomic store, the privacy helpers,
 * and media length measuring.
 */
export type { JsonFileOptions } from './services/store/json-file.js';
export { safeFileName, writeFileAtomicSafe } from './services/store/atomic.js';
export { describeWriteError } from './services/store/data-health.js';
export { changeableBy, writtenBy, type PersonIds } from './services/store/privacy.js';
export type { HistoryStore } from './services/store/history.js';
export type { OwnerNotifier } from './services/notices/owner-notifier.js';
export { ALLOWED_CONTAINERS, mediaSeconds } from './services/media/index.js';
/** An upstream base URL in the forms users write (with or without /v1), as the SDKs want it. */
export { normalizeBaseUrl } from './services/providers/normalize.js';
