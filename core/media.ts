/**
 * The media and jail helpers, for plugins that handle untrusted media or run helper programs (`wa-assistant-bot/media`):
 * `host.jail` is the bot's jail; these pin a file's format before ffmpeg reads it, refuse images whose header declares
 * too many pixels, measure a recording's length, and find ffmpeg and yt-dlp.
 *
 * @example
 * import { ffmpegBinary, inputArgs, pinFileFormat } from 'wa-assistant-bot/media';
 * const ffmpeg = ffmpegBinary(host.settings).path;
 * const args = [...inputArgs(await pinFileFormat(file, 'sound')), '-i', 'in/a', 'out/a.mp3'];
 * await host.jail.run({ kind: 'media', program: ffmpeg, args, inputs: { a: file }, outputTo: dir, limits });
 */
export { JailRefused, type Jail, type JailLimits } from './services/jail/jail.js';
export type { EgressPolicy } from './services/jail/egress-proxy.js';
export { ffmpegBinary } from './kernel/capabilities/detect.js';
/** "yt-dlp <version> (<where>)", amber when that version is old (sites change; old yt-dlp fails). */
export { ytdlpStatus } from './kernel/capabilities/tool-age.js';
export { ALLOWED_CONTAINERS, assertPixelBudget, DEFAULT_MAX_IMAGE_PIXELS, inputArgs, MediaRefused, mediaSeconds, pinFileFormat, pinFormat, type PinnedFormat } from './services/media/index.js';
/** The egress check's address rule and a download from the bot's own process under the same rules. */
export { isPrivateAddress } from './services/jail/private-address.js';
export { DownloadRefused, fetchPublic, type PublicFetchOptions } from './services/jail/public-fetch.js';
/** Every upstream answer read up to a bound and no further (the rest is never received). */
export { readBodyUpTo, readJsonUpTo } from './services/http/bounded-body.js';
/** Documents read inside the jail (the kind from the bytes; PDFs by poppler, office files by a jailed node reader). */
export { DocumentRefused, documentKind, readDocument, type DocumentKind, type DocumentText, type ReadLimits } from './services/documents/read-document.js';
/** The vision path: a question about one or a few images over the gateways (`/v1/messages`, else chat completions). */
export { askVision, asUpstreamFailure, DEFAULT_ANTHROPIC_VERSION, lacksMessagesEndpoint, visionLegFilter, visionPathOf, visionPaths, type VisionAnswer, type VisionImage, type VisionPath, type VisionRequest } from './services/providers/ask-vision.js';
