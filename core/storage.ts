/**
 * The data-file helpers (`wa-assistant-bot/storage`, `@wa-assistant-bot/plugin-api/storage`): a file name an id
 * cannot escape with, a write failure in words, and the privacy helpers of `.mydata`. A plugin's data belongs in
 * `host.store`; the data-file engines the built-in plugins still use (JsonFile, atomic and append writers, the
 * search-log engine) are their tier (core/builtin.ts), not part of the API package.
 *
 * @example
 * import { safeFileName } from 'wa-assistant-bot/storage';
 * const file = path.join(dir, safeFileName(ctx.chatId) + '.json');
 */
export { safeFileName } from './api/file-name.js';
export { describeWriteError } from './api/errors.js';
export type { DataHealth } from './services/store/data-health.js';
export type { DataSchema } from './services/store/schemas.js';
export { changeableBy, isPrivateChatOf, writtenBy } from './services/store/privacy.js';
export type { PersonIds, PrivacyParticipant } from './kernel/port/privacy-participant.js';
