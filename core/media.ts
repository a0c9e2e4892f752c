/**
 * The media and jail helpers (`wa-assistant-bot/media`, `@wa-assistant-bot/plugin-api/media`), for plugins that
 * handle untrusted media or run helper programs through `host.jail`: these refuse images whose header declares too
 * many pixels, check an address against the egress rule, read an upstream's answer up to a bound, and name the errors
 * the jail and the media checks throw. Small and free of the bot's services: pinning a file's format from its bytes,
 * the jailed document reader, the public download, vision and finding ffmpeg are the built-in plugins' tier
 * (core/builtin.ts), not part of the API package.
 *
 * @example
 * import { isPrivateAddress } from 'wa-assistant-bot/media';
 * if (isPrivateAddress(address)) return ctx.reply('That is a private network address.');
 */
export { DocumentRefused, DownloadRefused, JailRefused, MediaRefused } from './api/errors.js';
export type { Jail, JailLimits } from './services/jail/jail.js';
export type { EgressPolicy } from './services/jail/egress-proxy.js';
export { assertPixelBudget, DEFAULT_MAX_IMAGE_PIXELS } from './services/media/image-size.js';
/** The egress check's address rule. */
export { isPrivateAddress } from './services/jail/private-address.js';
/** Every upstream answer read up to a bound and no further (the rest is never received). */
export { readBodyUpTo, readJsonUpTo } from './services/http/bounded-body.js';
