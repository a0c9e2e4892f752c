/**
 * The data-file helpers for plugins that keep files of their own under `host.dataDir` (`wa-assistant-bot/storage`):
 * atomic writes, a JSON file with a schema and corruption handling, append-only files that wait while a backup holds
 * the writes, the data folder's health, and the privacy helpers of `.mydata`.
 *
 * @example
 * import { JsonFile } from 'wa-assistant-bot/storage';
 * const stats = new JsonFile(path.join(host.dataDir, 'dice/stats.json'), () => ({ rolls: 0 }));
 */
export { appendToFile, releaseAppendHandle, safeFileName, writeFileAtomicSafe, writeFileAtomicSafe as writeFileAtomic, writeJsonAtomic } from './services/store/atomic.js';
export { flushWithStores, JsonFile, type JsonFileOptions } from './services/store/json-file.js';
export { describeWriteError, type DataHealth } from './services/store/data-health.js';
export { healthFor } from './services/store/data-domain.js';
export { checkDocument, type DataSchema } from './services/store/schemas.js';
export { changeableBy, isPrivateChatOf, writtenBy, type PersonIds, type PrivacyParticipant } from './services/store/privacy.js';
/** The per-chat search-log engine behind `Store.chatSearchLog` (for tools and tests that reach its files directly). */
export { queryTerms, SearchLogs, type ChatSearchLog, type SearchLogEvents, type SearchLogFormat } from './services/store/search-log/chat-search-log.js';
