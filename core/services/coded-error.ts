/**
 * Every error a plugin can catch from the core carries a stable `code` (`PLUGIN_…`), so a plugin tells them apart
 * without matching message words, and docs/reference/errors.md explains each code: its cause and the fix.
 *
 * @example
 * try { await host.jail.run(job); } catch (err) { if (err instanceof CodedError && err.code === 'PLUGIN_JAIL_REFUSED') … }
 */
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
  | 'PLUGIN_PROMPT_REFUSED';

/** The base of the core's errors a plugin can catch: `code` is stable, `message` says what happened in plain words. */
export abstract class CodedError extends Error {
  abstract readonly code: PluginErrorCode;
}
