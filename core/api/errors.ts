/**
 * Every error a plugin can catch from the core, and the constants plugins share, in one leaf module: it imports
 * nothing of the kernel's machinery or of the services (the services and the kernel import it), so the plugin API
 * package carries these without carrying what throws them. Each error has a stable `code` (`PLUGIN_…`), so a plugin
 * tells them apart without matching message words, and docs/reference/errors.md explains each code: its cause and
 * the fix. Compare `err.code` rather than `instanceof` where a plugin may hold another copy of this module.
 *
 * @example
 * try { await host.jail.run(job); } catch (err) { if (err instanceof CodedError && err.code === 'PLUGIN_JAIL_REFUSED') … }
 */
import type { MediaKind } from './media-kind.js';

export type PluginErrorCode =
  // Registration and start of a plugin (PluginError).
  | 'PLUGIN_BAD_DEFINITION'
  | 'PLUGIN_REMOVED_PART'
  | 'PLUGIN_NOT_FOUND'
  | 'PLUGIN_NOT_IMPORTABLE'
  | 'PLUGIN_NOT_A_PLUGIN'
  | 'PLUGIN_BAD_OPTION_DEFAULT'
  | 'PLUGIN_DUPLICATE_NAME'
  | 'PLUGIN_UNKNOWN_NEED'
  | 'PLUGIN_DUPLICATE_CAPABILITY'
  | 'PLUGIN_DUPLICATE_TOOL'
  | 'PLUGIN_DUPLICATE_COMMAND'
  | 'PLUGIN_CONFIG_KEY_TAKEN'
  | 'PLUGIN_SETUP_FAILED'
  // The services a plugin calls through its host.
  | 'PLUGIN_ALL_PROVIDERS_FAILED'
  | 'PLUGIN_CONTEXT_TOO_LONG'
  | 'PLUGIN_UPSTREAM_FAILED'
  | 'PLUGIN_BAD_ANSWER'
  | 'PLUGIN_KEYS_EXHAUSTED'
  | 'PLUGIN_PROVIDER_DOWN'
  | 'PLUGIN_REQUEST_REJECTED'
  | 'PLUGIN_JAIL_REFUSED'
  | 'PLUGIN_MEDIA_REFUSED'
  | 'PLUGIN_MEDIA_TOO_LARGE'
  | 'PLUGIN_MEMORY_FULL'
  | 'PLUGIN_DATA_NOT_SAVED'
  | 'PLUGIN_STORE_WRITE_FAILED'
  | 'PLUGIN_SEND_CLOSED'
  | 'PLUGIN_POLL_REFUSED'
  | 'PLUGIN_PROMPT_REFUSED'
  | 'PLUGIN_RECIPIENT_REFUSED';

/** The base of the core's errors a plugin can catch: `code` is stable, `message` says what happened in plain words. */
export abstract class CodedError extends Error {
  abstract readonly code: PluginErrorCode;
}

// ---- Registration ---------------------------------------------------------------------------------------------

/**
 * A plugin that cannot be registered; `message` starts with the code, says which plugins clash and what to change.
 * The bot stays up: the plugin that caused the error stays off, and the start log and the dashboard say why.
 *
 * @example
 * try { definePlugin(spec); } catch (err) { if (err instanceof PluginError && err.code === 'PLUGIN_BAD_OPTION_DEFAULT') … }
 */
export class PluginError extends CodedError {
  constructor(
    readonly code: PluginErrorCode,
    readonly plugin: string,
    detail: string,
  ) {
    super(`${code}: ${detail}`);
    this.name = 'PluginError';
  }
}

// ---- The provider chain and upstreams -------------------------------------------------------------------------

/** Thrown when every leg failed; `message` is safe to show a user. */
export class AllProvidersFailedError extends CodedError {
  constructor(message = 'I cannot reach any AI provider right now. Please try again in a few minutes.', readonly causes: string[] = []) {
    super(message);
  }
  get code(): PluginErrorCode {
    return 'PLUGIN_ALL_PROVIDERS_FAILED';
  }
}

/**
 * A failed upstream call described in the chain's terms, for a plugin that talks to its upstream with another SDK
 * than the core's (openai): the plugin translates its SDK's errors into this (its error classifier), and the chain
 * then rests the leg as it would for the same failure of a chat call.
 *
 * @example
 * throw new UpstreamFailure('http', { status: 429, headers: { 'retry-after': '5' }, body: { error: { type: 'rate_limit_error' } } });
 */
export class UpstreamFailure extends CodedError {
  get code(): PluginErrorCode {
    return 'PLUGIN_UPSTREAM_FAILED';
  }
  constructor(
    readonly kind: 'http' | 'timeout' | 'network',
    readonly details: { status?: number; headers?: unknown; body?: unknown; code?: string; message?: string } = {},
  ) {
    super(details.message ?? (kind === 'http' ? `HTTP ${details.status}` : kind));
    this.name = 'UpstreamFailure';
  }
}

/** Thrown by a leg whose answer was unusable (no content, malformed JSON). */
export class BadAnswerError extends CodedError {
  get code(): PluginErrorCode {
    return 'PLUGIN_BAD_ANSWER';
  }
}

function headerOf(headers: unknown, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | undefined>;
  return record[name] ?? record[name.toLowerCase()];
}

/**
 * The wait an upstream asked for: retry-after (seconds or HTTP date) and retry-after-ms; undefined when absent or
 * unreadable. For plugins that call an upstream of their own.
 */
export function retryAfterMs(headers: unknown, now = Date.now()): number | undefined {
  const ms = Number(headerOf(headers, 'retry-after-ms'));
  if (Number.isFinite(ms) && ms > 0) return ms;
  const raw = headerOf(headers, 'retry-after');
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(raw);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

/** Thrown when no key can serve a request now; `message` is safe to show a user. */
export class KeysExhaustedError extends CodedError {
  get code(): PluginErrorCode {
    return 'PLUGIN_KEYS_EXHAUSTED';
  }
}

/** Thrown when the provider cannot be reached or keeps failing (not a key problem); safe to show a user. */
export class ProviderDownError extends CodedError {
  get code(): PluginErrorCode {
    return 'PLUGIN_PROVIDER_DOWN';
  }
}

/** Thrown when the provider refused the request itself (bad or too large file): another key would not help. */
export class RequestRejectedError extends CodedError {
  constructor(message: string, readonly status: number, readonly providerMessage: string) {
    super(message);
  }
  get code(): PluginErrorCode {
    return 'PLUGIN_REQUEST_REJECTED';
  }
}

// ---- Chat turns, polls and sending ----------------------------------------------------------------------------

/**
 * A scheduled turn that did not run, and why, as a sentence for the person who set it ("you are over today's AI
 * budget"). Not a failure of the bot: the caller tells the person (once) and tries again at the next time.
 */
export class PromptRefused extends CodedError {
  /** On the prototype, as every coded error's, so the code is known without an instance. */
  get code() {
    return 'PLUGIN_PROMPT_REFUSED' as const;
  }
  /**
   * `transient`: refused for a while only (not connected yet, WhatsApp reconnecting): the same prompt can run once the
   * bot is linked again, so a caller that keeps work (a scheduled task) keeps it and tries again.
   */
  constructor(
    readonly reason: string,
    readonly transient = false,
  ) {
    super(reason);
    this.name = 'PromptRefused';
  }
}

/** A poll that cannot be sent (bad shape, or a network without polls): `message` says why. */
export class PollRefused extends CodedError {
  /** On the prototype, as every coded error's, so the code is known without an instance. */
  get code() {
    return 'PLUGIN_POLL_REFUSED' as const;
  }
  constructor(message: string) {
    super(message);
    this.name = 'PollRefused';
  }
}

/** Thrown for a send that was still waiting when the bot stopped. */
export class OutboxClosedError extends CodedError {
  constructor() {
    super('the bot is stopping: this message was not sent');
  }
  get code(): PluginErrorCode {
    return 'PLUGIN_SEND_CLOSED';
  }
}

// ---- Data -----------------------------------------------------------------------------------------------------

/**
 * A sentence a user or owner understands for a failed write: "the server's disk is full" rather than ENOSPC.
 *
 * @example describeWriteError(Object.assign(new Error('x'), { code: 'ENOSPC' })) // "the server's disk is full"
 */
export function describeWriteError(err: unknown): string {
  const raw = (err as NodeJS.ErrnoException | undefined)?.code;
  // An extended I/O code (SQLITE_IOERR_WRITE) says no more to a user than the basic one.
  const code = raw?.startsWith('SQLITE_IOERR') ? 'SQLITE_IOERR' : raw;
  switch (code) {
    // The store database's own codes for the same causes (libsql names them SQLITE_*).
    case 'SQLITE_FULL':
    case 'ENOSPC':
      return "the server's disk is full";
    case 'EDQUOT':
      return "the server's disk quota is used up";
    case 'EACCES':
    case 'EPERM':
      return "the server's data folder is not writable (permission denied)";
    case 'SQLITE_READONLY':
    case 'EROFS':
      return "the server's data folder is on a read-only file system";
    case 'SQLITE_IOERR':
    case 'EIO':
      return "the server's disk reported an input/output error";
    default:
      // The code only: the message names server paths, and this sentence may go to a chat.
      return `the server could not write its data${code ? ` (${code})` : ''}`;
  }
}

/** Thrown by a store's `flush()` when some of its files could not be written; names them. */
export class DataWriteError extends CodedError {
  constructor(readonly files: string[], override readonly cause: unknown) {
    super(`could not save ${files.join(', ')}: ${describeWriteError(cause)}`);
    this.name = 'DataWriteError';
  }
  get code(): PluginErrorCode {
    return 'PLUGIN_DATA_NOT_SAVED';
  }
}

/** A change that is not on disk. Its message is safe to tell the user ("could not save the reminders: the server's disk is full"). */
export class StoreWriteError extends CodedError {
  get code(): PluginErrorCode {
    return 'PLUGIN_STORE_WRITE_FAILED';
  }
  constructor(what: string, readonly reason: string, override readonly cause?: unknown) {
    super(`could not save the ${what}: ${reason}`);
    this.name = 'StoreWriteError';
  }
}

/** Thrown by `remember` when the chat's memory and its archive are both full: nothing is pushed out. */
export class MemoryFullError extends CodedError {
  constructor(readonly maxFacts: number) {
    super(`this chat's memory is full (${maxFacts} facts and as many again archived); an admin can remove some with .forget`);
    this.name = 'MemoryFullError';
  }
  get code(): PluginErrorCode {
    return 'PLUGIN_MEMORY_FULL';
  }
}

// ---- Media, downloads and the jail ----------------------------------------------------------------------------

/** What a media kind is called in a sentence to a user. */
const KIND_WORDS: Record<MediaKind, string> = { voice: 'voice note', audio: 'audio file', image: 'photo', video: 'video', document: 'file', sticker: 'sticker' };

/** Bytes as a user reads them: "20 MB", "1.5 MB", "800 KB" (1 MB = 1024 × 1024 bytes, as the settings count). */
export function sizeInWords(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  if (mb >= 1) return `${Number(mb.toFixed(mb < 10 ? 1 : 0))} MB`;
  return `${Math.max(1, Math.round(bytes / 1024))} KB`;
}

/**
 * A media download stopped (or never started) because the media is larger than the limit for its kind: the bytes
 * actually received passed it, or the size WhatsApp declared is over it already. `message` is a sentence for the user.
 *
 * @example
 * try { bytes = await media.download({ maxBytes: 5_000_000 }); }
 * catch (err) { if (err instanceof MediaTooLargeError) return ctx.reply(err.message); throw err; }
 */
export class MediaTooLargeError extends CodedError {
  get code(): 'PLUGIN_MEDIA_TOO_LARGE' {
    return 'PLUGIN_MEDIA_TOO_LARGE';
  }

  constructor(
    readonly kind: MediaKind,
    /** The limit that applied, in bytes. */
    readonly limitBytes: number,
  ) {
    super(`That ${KIND_WORDS[kind] ?? 'file'} is too large for me: the limit is ${sizeInWords(limitBytes)}.`);
    this.name = 'MediaTooLargeError';
  }
}

/** Media refused before any decoder sees it; the message is a complete sentence for the user. */
export class MediaRefused extends CodedError {
  get code(): PluginErrorCode {
    return 'PLUGIN_MEDIA_REFUSED';
  }
}

/** A job the jail refuses (untrusted code without bubblewrap); the message is for the user. */
export class JailRefused extends CodedError {
  get code(): PluginErrorCode {
    return 'PLUGIN_JAIL_REFUSED';
  }
}

/** A download the egress check refused or that broke its limits; the message fits a user. */
export class DownloadRefused extends Error {}

/** A document the bot will not read; `message` is a complete sentence for the user. */
export class DocumentRefused extends Error {}

// ---- Shared constants -----------------------------------------------------------------------------------------

/** Longest persona (a chat's own instructions), in characters. */
export const MAX_PERSONA_CHARS = 2000;

/** `ctx.state` key: set when the core told the user the turn failed (the ❌ reaction, the failed status). */
export const TURN_FAILED = 'turnFailed';

/** Thrown by a bot-started send (`host.send`, `host.sendMedia`) to a chat the recipient rule does not allow: nothing was sent. */
export class RecipientRefused extends CodedError {
  constructor(readonly chatId: string, readonly reason: string) {
    super(`not sent to ${chatId}: ${reason}`);
  }
  get code(): PluginErrorCode {
    return 'PLUGIN_RECIPIENT_REFUSED';
  }
}

// ---- The local HTTP API (`/api/v1`, tokens) -------------------------------------------------------------------

/**
 * The codes of the local HTTP API's errors (`{ "error": { "code", "message" } }`) and of a bad token scope, each
 * explained in docs/reference/errors.md with its cause and fix.
 */
export type ApiErrorCode =
  | 'API_TOKEN_MISSING'
  | 'API_TOKEN_INVALID'
  | 'API_SCOPE_REFUSED'
  | 'API_BAD_SCOPE'
  | 'API_BAD_REQUEST'
  | 'API_BAD_MEDIA'
  | 'API_BAD_POLL'
  | 'API_BODY_TOO_LARGE'
  | 'API_NOT_FOUND'
  | 'API_RECIPIENT_REFUSED'
  | 'API_GUARD_DENIED'
  | 'API_PROMPT_REFUSED'
  | 'API_UNAVAILABLE'
  | 'API_UPSTREAM_FAILED'
  | 'API_INTERNAL';

/**
 * An API request (or a token's scope) refused: `code` is stable, `status` the HTTP status it is answered with,
 * `message` a sentence for the caller naming what to change. Never carries a token's secret.
 *
 * @example throw new ApiError('API_SCOPE_REFUSED', 403, 'this token may not send to 4477…@s.whatsapp.net (its scopes: read:…)');
 */
export class ApiError extends Error {
  constructor(
    readonly code: ApiErrorCode,
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/**
 * The shape of an API token (`wabot_<12 hex id>_<43 base64url secret>`): the logger redacts anything of this shape,
 * whoever wrote it, since no process keeps the secrets to redact them by value (only their hashes are stored).
 */
export const API_TOKEN_SHAPE = /wabot_[0-9a-f]{12}_[A-Za-z0-9_-]{43}/g;

// ---- Inbound hooks (POST /hooks/<name>) --------------------------------------------------------------------------

/**
 * The codes of the JSON errors `POST /hooks/<name>` answers, as `{ "error": { "code": "HOOK_…", "message": "…" } }`;
 * docs/reference/errors.md explains each (cause and fix). A refused request never delivers anything.
 */
export type HookErrorCode = 'HOOK_UNKNOWN' | 'HOOK_BAD_SIGNATURE' | 'HOOK_STALE' | 'HOOK_REPLAYED' | 'HOOK_TOO_LARGE' | 'HOOK_BAD_PAYLOAD' | 'HOOK_REFUSED' | 'HOOK_NOT_DELIVERED';

/** The HTTP status of each hook error. */
export const HOOK_ERROR_STATUS: Readonly<Record<HookErrorCode, number>> = {
  HOOK_UNKNOWN: 404,
  HOOK_BAD_SIGNATURE: 401,
  HOOK_STALE: 401,
  HOOK_REPLAYED: 409,
  HOOK_TOO_LARGE: 413,
  HOOK_BAD_PAYLOAD: 400,
  HOOK_REFUSED: 403,
  HOOK_NOT_DELIVERED: 503,
};
