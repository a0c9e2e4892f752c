import { randomBytes } from 'node:crypto';
import { audioKeysFrom, DEFAULT_AUDIO_BASE_URL, DEFAULT_AUDIO_CHAT_MODEL } from '../../core/services/config/settings.js';
import { configSchema } from '../../core/services/config/schema.js';
import type { EnvFile } from './env-file.js';

/** The access modes this build's config.json schema accepts (read from the schema, so set-up never writes another). */
export const ACCESS_MODES: readonly string[] = configSchema.properties.access.properties.mode.enum;

/** The mode set-up suggests: strangers get a pairing code an owner approves, when this build has it. */
export const DEFAULT_ACCESS_MODE = ACCESS_MODES.includes('pairing') ? 'pairing' : 'allowList';

/** Which gateway variables set-up edits: the primary's, unless only the second gateway is configured. */
export type GatewaySlot = 'primary' | 'second';

const VARIABLES: Record<GatewaySlot, { key: string; url: string; model: string }> = {
  primary: { key: 'PRIMARY_GATEWAY_API_KEY', url: 'PRIMARY_GATEWAY_BASE_URL', model: 'PRIMARY_GATEWAY_MODEL' },
  second: { key: 'API_KEY', url: 'BASE_URL', model: 'MODEL' },
};

/** What the account has now (from its `.env` and `config.json`), offered as the defaults. */
export interface Current {
  slot: GatewaySlot;
  baseUrl: string;
  apiKey: string;
  model: string;
  audioKeys: string[];
  audioBaseUrl: string;
  audioChatModel: string;
  searchKey: string;
  searchBaseUrl: string;
  owners: string[];
  accessMode: string;
  configToken: string;
  pairingPhone: string;
  port: number;
}

/** What set-up writes. Everything else in both files stays as it is. */
export interface Answers {
  baseUrl: string;
  apiKey: string;
  model: string;
  audioKeys: string[];
  audioBaseUrl: string;
  searchKey: string;
  searchBaseUrl: string;
  owners: string[];
  accessMode: string;
  /** keep the dashboard token as it is, make a new one, or turn the dashboard off. */
  dashboard: 'keep' | 'new' | 'off';
  pairingPhone: string;
}

export function readCurrent(env: EnvFile, config: Record<string, unknown>): Current {
  const values = env.values();
  const get = (name: string) => (values[name] ?? '').trim();
  const slot: GatewaySlot = !get('PRIMARY_GATEWAY_API_KEY') && get('API_KEY') ? 'second' : 'primary';
  const vars = VARIABLES[slot];
  const access = (config.access ?? {}) as { mode?: unknown };
  return {
    slot,
    baseUrl: get(vars.url),
    apiKey: get(vars.key),
    model: get(vars.model),
    audioKeys: audioKeysFrom(values),
    audioBaseUrl: get('AUDIO_BASE_URL') || DEFAULT_AUDIO_BASE_URL,
    audioChatModel: get('AUDIO_CHAT_MODEL') || DEFAULT_AUDIO_CHAT_MODEL,
    searchKey: get('SEARCH_API_KEY'),
    searchBaseUrl: get('SEARCH_BASE_URL'),
    owners: Array.isArray(config.owners) ? config.owners.filter((o): o is string => typeof o === 'string') : [],
    accessMode: typeof access.mode === 'string' ? access.mode : '',
    configToken: get('CONFIG_TOKEN'),
    pairingPhone: get('PAIRING_PHONE'),
    port: typeof config.port === 'number' ? config.port : 3000,
  };
}

/** Thrown for an answer set-up cannot use; the message says what to give instead. */
export class AnswerError extends Error {}

/** A phone number as config.json keeps it: digits only (`+62 812-3456-7890` → `6281234567890`). */
export function phoneDigits(raw: string): string {
  const digits = raw.replace(/[\s+()\-.]/g, '');
  if (!/^[0-9]{6,15}$/.test(digits)) throw new AnswerError(`"${raw}" is not a phone number in international form (country code first, digits only, e.g. 6281234567890)`);
  return digits;
}

/** A comma-separated list of owner numbers; empty gives none. */
export function ownersFrom(raw: string): string[] {
  return [...new Set(raw.split(',').map((s) => s.trim()).filter(Boolean).map(phoneDigits))];
}

/** Comma-separated keys, trimmed, without duplicates. */
export function keysFrom(raw: string): string[] {
  return [...new Set(raw.split(',').map((s) => s.trim()).filter(Boolean))];
}

export function accessModeFrom(raw: string): string {
  const mode = raw.trim();
  if (!ACCESS_MODES.includes(mode)) throw new AnswerError(`access mode must be one of ${ACCESS_MODES.join(', ')}; got "${raw}"`);
  return mode;
}

export function baseUrlFrom(raw: string): string {
  const url = raw.trim().replace(/\/+$/, '');
  if (!/^https?:\/\/[^\s/]+/i.test(url)) throw new AnswerError(`the base URL must be an http(s) address such as https://gateway.example.com/v1; got "${raw}"`);
  return url;
}

/**
 * Puts the answers into the two files (in memory; the caller writes them). Returns the new dashboard token when one
 * was made, to be shown once.
 */
export function applyAnswers(env: EnvFile, config: Record<string, unknown>, current: Current, answers: Answers): { newToken?: string } {
  const vars = VARIABLES[current.slot];
  env.set(vars.url, answers.baseUrl);
  env.set(vars.key, answers.apiKey);
  env.set(vars.model, answers.model);
  if (answers.audioKeys.join(',') !== current.audioKeys.join(',')) {
    env.set('AUDIO_API_KEYS', answers.audioKeys.join(','));
    // The numbered forms are read too: left set, a key removed here would still be used.
    for (const name of Object.keys(env.values())) if (/^AUDIO_API_KEY(_FALLBACK)?_\d+$/.test(name)) env.set(name, '');
  }
  if (answers.audioBaseUrl !== current.audioBaseUrl) env.set('AUDIO_BASE_URL', answers.audioBaseUrl);
  if (answers.searchKey !== current.searchKey) env.set('SEARCH_API_KEY', answers.searchKey);
  if (answers.searchBaseUrl !== current.searchBaseUrl) env.set('SEARCH_BASE_URL', answers.searchBaseUrl);
  if (answers.pairingPhone !== current.pairingPhone) env.set('PAIRING_PHONE', answers.pairingPhone);
  let newToken: string | undefined;
  if (answers.dashboard === 'new') {
    newToken = randomBytes(32).toString('hex');
    env.set('CONFIG_TOKEN', newToken);
  } else if (answers.dashboard === 'off' && current.configToken) {
    env.set('CONFIG_TOKEN', '');
  }
  config.owners = answers.owners;
  const access = config.access && typeof config.access === 'object' ? (config.access as Record<string, unknown>) : {};
  config.access = { ...access, mode: answers.accessMode };
  return { newToken };
}
