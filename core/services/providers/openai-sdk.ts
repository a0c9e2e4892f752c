import type * as OpenAISdk from 'openai';
import { rememberSdkErrors } from './sdk-errors.js';

/**
 * The openai SDK, loaded at the first request instead of at start: it is ~150 modules, a fifth of what a start
 * loaded before the console was ready, and nothing needs it until a model is asked. Every client in the bot is made
 * from this one copy, so its error classes are the ones `isSdkError` checks.
 */
let sdk: typeof OpenAISdk | undefined;

/**
 * The SDK, loading it on first use.
 *
 * @example const { default: OpenAI } = await openaiSdk();
 */
export async function openaiSdk(): Promise<typeof OpenAISdk> {
  if (!sdk) {
    const loaded = await import('openai');
    rememberSdkErrors(loaded);
    sdk = loaded;
  }
  return sdk;
}
