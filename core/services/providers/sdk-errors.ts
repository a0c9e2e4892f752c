/**
 * Tells the openai SDK's errors apart without loading the SDK: it loads at the first request of ours that needs it
 * (openai-sdk.ts) and hands its error classes here; a plugin's own client failing before that has the key pool load
 * it. Kept apart from openai-sdk.ts so the key pool's types (part of the plugin API's) name no SDK type.
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
 * True when `err` is the SDK's `kind` (or a subclass: a timeout is also a connection error and an APIError).
 *
 * @example if (isSdkError(err, 'APIError') && err.status === 429) …
 */
export function isSdkError(err: unknown, kind: keyof SdkErrorClasses): err is SdkError {
  return classes !== undefined && err instanceof classes[kind];
}
