/**
 * Tells the openai SDK's errors apart without loading the SDK: it loads at the first request (openai-sdk.ts) and
 * hands its error classes here; before that no client exists, so no error can be one of them. Kept apart from
 * openai-sdk.ts so the key pool (part of the plugin API's types) names no SDK type.
 */
export interface SdkErrorClasses {
  APIError: abstract new (...args: never[]) => Error;
  APIConnectionError: abstract new (...args: never[]) => Error;
  APIConnectionTimeoutError: abstract new (...args: never[]) => Error;
}

/** What the chain and the key pool read of an SDK error. */
export interface SdkError extends Error {
  status?: number;
  headers?: unknown;
  error?: unknown;
}

let classes: SdkErrorClasses | undefined;

/** Called once the SDK is loaded. */
export function rememberSdkErrors(loaded: SdkErrorClasses): void {
  classes = loaded;
}

/**
 * Learns the SDK's error classes when no client of ours has loaded the SDK yet: a plugin's own `openai` client (the
 * key pool's `run` around it) can fail before any request of the core needed the SDK (chat completions do not use it).
 * The same module instance as the plugin's (one `node_modules/openai`), so `instanceof` holds. Not `openaiSdk()`:
 * importing openai-sdk.ts here would put the SDK's types into the packed plugin API (plugin-package.test.ts).
 */
export async function knowSdkErrors(): Promise<void> {
  if (!classes) rememberSdkErrors(await import('openai'));
}

/**
 * True when `err` is the SDK's `kind` (or a subclass: a timeout is also a connection error and an APIError).
 *
 * @example if (isSdkError(err, 'APIError') && err.status === 429) …
 */
export function isSdkError(err: unknown, kind: keyof SdkErrorClasses): err is SdkError {
  return classes !== undefined && err instanceof classes[kind];
}
