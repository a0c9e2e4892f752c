/**
 * The built-in plugins' tier: what the plugins shipped with the bot (plugins/ and the core plugins) use besides the
 * public entries, and what a plugin in its own package does not get. It is not part of `@wa-assistant-bot/plugin-api`
 * and may change with any release: the status text, WhatsApp formatting, finding ffmpeg and yt-dlp, a recording's
 * length, pinning a media file's format, the public download, the jailed document reader, vision over the gateways, and the few data-file helpers of
 * the plugins that convert files of their own. The layers rules let plugins/ and core/kernel/core-plugins/ import it.
 *
 * Every start loads this module (the core plugins and the built-in plugins import it), and none needs the document
 * reader, the recording's length or the public download before the first document, media file or link: those load
 * at their first call.
 */
import type * as Duration from './services/media/duration.js';
import type * as PublicFetch from './services/jail/public-fetch.js';
import type * as ReadDocument from './services/documents/read-document.js';

/** What a plugin makes at its first use (its handlers' modules), once, tried again after a failure. */
export { atFirstUse } from './kernel/plugin/first-use.js';
/** `.status` as text: how the bot is doing (link, provider legs, capabilities, usage), never a key. */
export { statusText, type StatusReport } from './kernel/status/status-report.js';
/** Chat answers in WhatsApp formatting: the model's Markdown converted (ctx.ai.respond does it for its answers). */
export { toWhatsApp } from './kernel/chat/whatsapp-format.js';
export { ffmpegBinary } from './kernel/capabilities/detect.js';
/** "yt-dlp <version> (<where>)", amber when that version is old (sites change; old yt-dlp fails). */
export { ytdlpStatus } from './kernel/capabilities/tool-age.js';
/** The ffmpeg input format pinned from a file's first bytes (never its name), and a recording's length. */
export { ALLOWED_CONTAINERS, inputArgs, pinFileFormat, pinFormat, type PinnedFormat } from './services/media/format.js';
/** A recording's length, by ffprobe in the jail (its module loads at the first call). */
export const mediaSeconds: typeof Duration.mediaSeconds = async (...args) => (await import('./services/media/duration.js')).mediaSeconds(...args);
/** A download from the bot's own process under the egress rules. */
export type { PublicFetchOptions } from './services/jail/public-fetch.js';
export const fetchPublic: typeof PublicFetch.fetchPublic = async (...args) => (await import('./services/jail/public-fetch.js')).fetchPublic(...args);
/** A `fetch` for SDK clients whose every answer is read up to a bound and no further. */
export { boundedFetch, MAX_PROVIDER_ANSWER_BYTES, MAX_SPEECH_ANSWER_BYTES } from './services/http/bounded-fetch.js';
/** The openai SDK, loaded at first use (every client from one copy, so the chain tells its errors apart). */
export { openaiSdk } from './services/providers/openai-sdk.js';
/** Documents read inside the jail (the kind from the bytes; PDFs by poppler, office files by a jailed node reader). */
export type { DocumentKind, DocumentText, ReadLimits } from './services/documents/read-document.js';
const documents = () => import('./services/documents/read-document.js');
export const documentKind: typeof ReadDocument.documentKind = async (...args) => (await documents()).documentKind(...args);
export const readDocument: typeof ReadDocument.readDocument = async (...args) => (await documents()).readDocument(...args);
/** The vision path: a question about one or a few images over the gateways (`/v1/messages`, else chat completions). */
export { askVision, asUpstreamFailure, DEFAULT_ANTHROPIC_VERSION, lacksMessagesEndpoint, visionLegFilter, visionPathOf, type VisionAnswer, type VisionImage, type VisionPath, type VisionRequest } from './services/providers/ask-vision.js';
/**
 * A file of a plugin's own written atomically (recall's crash marker), and the checks of the files of earlier layouts
 * a plugin converts itself. What a plugin keeps is declared in `stores`; the JSON-file and append engines are gone from
 * this tier.
 */
export { writeFileAtomicSafe as writeFileAtomic } from './services/store/atomic.js';
export { domainFor, healthFor } from './services/store/data-domain.js';
export { checkDocument } from './services/store/schemas.js';
/** A history entry's fields as the store checks them, for a log of that shape (recall's). */
export { HISTORY_ENTRY_FIELDS } from './services/store/history-entry-fields.js';
/** The per-chat search log behind `Store.chatSearchLog`, in the store database (for tools, tests and the benchmark that reach it directly). */
export { queryTerms, SqlSearchLog, type SearchLogChat, type SearchLogSetup } from './services/store/sql-search-log.js';
/** The tools the core itself offers outside any plugin (`remember`), for naming tools as `.profile tools` does. */
export { CORE_TOOLS } from './kernel/plugin/registry.js';
