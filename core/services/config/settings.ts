import { accessSync, constants, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

// A CommonJS package, required: an ES import of one has Node parse its source for export names and wrap it (~5 ms of
// a start for each such package).
const dotenv = createRequire(import.meta.url)('dotenv') as typeof import('dotenv');

/**
 * Settings from the environment. `.env` in the working directory (or the file ENV_FILE names) is read first; real
 * environment variables win over it. Every setting is documented in `.env.example`.
 */
export interface GatewaySettings {
  apiKey: string;
  baseUrl: string;
  model: string;
  premiumModel: string;
}

export interface Settings {
  primary: GatewaySettings;
  second: GatewaySettings;
  audio: {
    keys: string[];
    baseUrl: string;
    /** The chat model of the chain's audio legs (the plugins using the audio keys read their own models). */
    chatModel: string;
  };
  publicBaseUrl: string;
  sitePort: number | undefined;
  configToken: string;
  /** METRICS_TOKEN: when set, `GET /metrics` needs `Authorization: Bearer <token>`. */
  metricsToken: string;
  dataDir: string;
  /** The .env file read (ENV_FILE, default `.env` in the working folder); it may not exist. */
  envFile: string;
  /** config.json of this account (CONFIG_FILE, default `config.json` in the working folder). */
  configFile: string;
  upstreamTimeoutMs: number;
  /**
   * `STARTUP_PROBE` (default on): at start, one tiny real request per provider leg and to the search provider checks
   * key, URL and model (`off` skips it, e.g. for keys billed per request). Its requests carry the header
   * `x-wa-bot-probe: startup`, so an upstream (or a test fake) can tell them from users' requests.
   */
  startupProbe: boolean;
  logLevel: string;
  /** `pretty` or `json`; undefined: pretty on a terminal, JSON otherwise. */
  logFormat: 'pretty' | 'json' | undefined;
  ffmpegPath: string;
  /**
   * WA_WEBSOCKET_URL (.env only): the WebSocket URL the WhatsApp socket connects to instead of WhatsApp's own (a wire
   * fake in tests, an operator's proxy). Empty: WhatsApp's own. Whatever answers there sees the whole session.
   */
  whatsappSocketUrl: string;
  /**
   * EGRESS_ALLOW_PRIVATE_HOSTS (.env only, TESTS ONLY): every fetch of an untrusted URL (links read, downloads) may
   * reach loopback and private addresses, so tests can serve pages on 127.0.0.1; the start log warns while it is on.
   * `MP3_ALLOW_PRIVATE_HOSTS`, its older name, still turns it on. `egressAllowPrivateHostsFrom` names the variable set.
   */
  egressAllowPrivateHosts: boolean;
  egressAllowPrivateHostsFrom?: 'EGRESS_ALLOW_PRIVATE_HOSTS' | 'MP3_ALLOW_PRIVATE_HOSTS';
  /** Every secret value, for the log redactor. */
  secrets: string[];
  /** The raw environment the settings came from (after .env merge). */
  env: Record<string, string | undefined>;
}

export const DEFAULT_AUDIO_BASE_URL = 'https://api.groq.com/openai/v1';
export const DEFAULT_AUDIO_CHAT_MODEL = 'llama-3.3-70b-versatile';
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 45_000;

/** Names of the settings that hold a provider key; at least one must be set. */
export const PROVIDER_KEY_VARIABLES = ['PRIMARY_GATEWAY_API_KEY', 'API_KEY', 'AUDIO_API_KEYS', 'AUDIO_API_KEY_1'];

/** Thrown when the settings cannot run the service; the message says what to set. */
export class SettingsError extends Error {}

/**
 * Audio keys from `AUDIO_API_KEYS` (comma-separated) and the numbered `AUDIO_API_KEY_<n>` /
 * `AUDIO_API_KEY_FALLBACK_<n>` forms, trimmed, duplicates dropped, in that order.
 */
export function audioKeysFrom(env: Record<string, string | undefined>): string[] {
  const keys: string[] = [];
  const add = (value: string | undefined) => {
    for (const part of (value ?? '').split(',')) {
      const key = part.trim();
      if (key && !keys.includes(key)) keys.push(key);
    }
  };
  add(env.AUDIO_API_KEYS);
  for (let n = 1; n <= 50; n++) {
    const main = env[`AUDIO_API_KEY_${n}`];
    const fallback = env[`AUDIO_API_KEY_FALLBACK_${n}`];
    if (main === undefined && fallback === undefined && n > 3) break;
    add(main);
    add(fallback);
  }
  return keys;
}

function int(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new SettingsError(`${name} must be a non-negative number, got "${raw}"`);
  return value;
}

/**
 * Reads `.env` from `cwd` (if present) under the real environment and returns the settings.
 *
 * @example
 * const settings = loadSettings(); // throws SettingsError naming the variables when no provider key is set
 */
export function loadSettings(options: { cwd?: string; env?: NodeJS.ProcessEnv; requireProviderKey?: boolean } = {}): Settings {
  const cwd = options.cwd ?? process.cwd();
  const realEnv = options.env ?? process.env;
  // ENV_FILE comes from the real environment only (it names the file everything else may come from). Named
  // explicitly, it must exist: a typo would otherwise start the account without its keys.
  const envFileSetting = (realEnv.ENV_FILE ?? '').trim();
  const envFile = path.resolve(cwd, envFileSetting || '.env');
  if (envFileSetting && !existsSync(envFile)) throw new SettingsError(`ENV_FILE names ${envFile}, which does not exist. Create it (copy .env.example) or correct ENV_FILE.`);
  let fromFile: Record<string, string> = {};
  try {
    fromFile = existsSync(envFile) ? dotenv.parse(readFileSync(envFile, 'utf8')) : {};
  } catch (err) {
    throw new SettingsError(`${envFile} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const env: Record<string, string | undefined> = { ...fromFile, ...realEnv };
  const str = (name: string, fallback = '') => (env[name] ?? '').trim() || fallback;

  const audioKeys = audioKeysFrom(env);
  const settings: Settings = {
    primary: {
      apiKey: str('PRIMARY_GATEWAY_API_KEY'),
      baseUrl: str('PRIMARY_GATEWAY_BASE_URL'),
      model: str('PRIMARY_GATEWAY_MODEL'),
      premiumModel: str('PRIMARY_GATEWAY_PREMIUM_MODEL'),
    },
    second: {
      apiKey: str('API_KEY'),
      baseUrl: str('BASE_URL'),
      model: str('MODEL'),
      premiumModel: str('PREMIUM_MODEL'),
    },
    audio: {
      keys: audioKeys,
      baseUrl: str('AUDIO_BASE_URL', DEFAULT_AUDIO_BASE_URL),
      chatModel: str('AUDIO_CHAT_MODEL', DEFAULT_AUDIO_CHAT_MODEL),
    },
    publicBaseUrl: str('PUBLIC_BASE_URL').replace(/\/+$/, ''),
    sitePort: str('SITE_PORT') ? int(env, 'SITE_PORT', 0) : undefined,
    configToken: str('CONFIG_TOKEN'),
    metricsToken: str('METRICS_TOKEN'),
    dataDir: path.resolve(cwd, str('DATA_DIR', 'data')),
    envFile,
    configFile: path.resolve(cwd, str('CONFIG_FILE', 'config.json')),
    upstreamTimeoutMs: int(env, 'UPSTREAM_TIMEOUT_MS', DEFAULT_UPSTREAM_TIMEOUT_MS) || DEFAULT_UPSTREAM_TIMEOUT_MS,
    logLevel: str('LOG_LEVEL', 'info'),
    startupProbe: true,
    logFormat: undefined,
    ffmpegPath: str('FFMPEG_PATH'),
    whatsappSocketUrl: socketUrl(str('WA_WEBSOCKET_URL')),
    egressAllowPrivateHosts: false,
    secrets: [],
    env,
  };
  settings.secrets = secretValues(env, [...audioKeys, ...socketUrlSecrets(settings.whatsappSocketUrl)]);
  const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
  if (!levels.includes(settings.logLevel)) throw new SettingsError(`LOG_LEVEL must be one of ${levels.join(', ')}; got "${settings.logLevel}"`);
  const probe = str('STARTUP_PROBE', 'on').toLowerCase();
  if (!['on', 'off', 'true', 'false', '1', '0'].includes(probe)) throw new SettingsError(`STARTUP_PROBE must be on or off; got "${probe}"`);
  settings.startupProbe = ['on', 'true', '1'].includes(probe);
  const format = str('LOG_FORMAT').toLowerCase();
  if (format && format !== 'pretty' && format !== 'json') throw new SettingsError(`LOG_FORMAT must be pretty or json (or empty: pretty on a terminal, json otherwise); got "${format}"`);
  settings.logFormat = format ? (format as 'pretty' | 'json') : undefined;
  const on = (name: string) => /^(1|true|yes|on)$/i.test(str(name));
  settings.egressAllowPrivateHostsFrom = on('EGRESS_ALLOW_PRIVATE_HOSTS') ? 'EGRESS_ALLOW_PRIVATE_HOSTS' : on('MP3_ALLOW_PRIVATE_HOSTS') ? 'MP3_ALLOW_PRIVATE_HOSTS' : undefined;
  settings.egressAllowPrivateHosts = Boolean(settings.egressAllowPrivateHostsFrom);

  if ((options.requireProviderKey ?? true) && !settings.primary.apiKey && !settings.second.apiKey && audioKeys.length === 0) {
    throw new SettingsError(
      'No AI provider key is configured, so the bot cannot answer. Set at least one of ' +
        'PRIMARY_GATEWAY_API_KEY (with PRIMARY_GATEWAY_BASE_URL and PRIMARY_GATEWAY_MODEL), ' +
        'API_KEY (with BASE_URL and MODEL), or AUDIO_API_KEYS / AUDIO_API_KEY_1 in .env or the environment.',
    );
  }
  for (const [label, gw, prefix] of [
    ['primary gateway', settings.primary, 'PRIMARY_GATEWAY_'],
    ['second gateway', settings.second, ''],
  ] as const) {
    if (!gw.apiKey) continue;
    const missing = [!gw.baseUrl && `${prefix}BASE_URL`, !gw.model && `${prefix}MODEL`].filter(Boolean);
    if (missing.length) throw new SettingsError(`The ${label} has a key but no ${missing.join(' and no ')}: set ${missing.length > 1 ? 'them' : 'it'}, or empty ${prefix}API_KEY.`);
    if (!/^https?:\/\/[^\s/]+/i.test(gw.baseUrl)) throw new SettingsError(`${prefix}BASE_URL must be an http(s) URL such as https://gateway.example.com/v1; got "${gw.baseUrl}"`);
  }
  return settings;
}

/** WA_WEBSOCKET_URL checked: empty, or a ws:// / wss:// URL (anything else would only fail at connect time). */
function socketUrl(raw: string): string {
  if (!raw) return '';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SettingsError(`WA_WEBSOCKET_URL must be a WebSocket URL such as wss://proxy.example.com/ws/chat (or empty for WhatsApp's own); got "${shownSocketUrl(raw)}"`);
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') throw new SettingsError(`WA_WEBSOCKET_URL must start with ws:// or wss:// (or be empty for WhatsApp's own); got "${shownSocketUrl(raw)}"`);
  return raw;
}

/** The parts of a socket URL that can carry a credential: the password and the query's values. */
function socketUrlSecrets(raw: string): string[] {
  if (!raw) return [];
  const url = new URL(raw);
  return [decodeURIComponent(url.password), ...url.searchParams.values()].filter((v) => v.length >= 4);
}

/**
 * A socket URL as it may be shown (start log, dashboard): the password and the query's values (an access token, say)
 * replaced by `…`.
 *
 * @example shownSocketUrl('ws://127.0.0.1:9/ws/chat?access_token=abc') // 'ws://127.0.0.1:9/ws/chat?access_token=…'
 */
export function shownSocketUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return raw.replace(/[?#].*$/, '?…').replace(/\/\/[^/@]*@/, '//…@');
  }
  if (url.password) url.password = '…';
  for (const name of [...new Set(url.searchParams.keys())]) url.searchParams.set(name, '…');
  return decodeURI(url.toString());
}

/** Values of every variable that looks secret (KEY, TOKEN, SECRET, PASSWORD), plus each audio key. */
export function secretValues(env: Record<string, string | undefined>, extra: string[] = []): string[] {
  const values = new Set<string>(extra);
  for (const [name, value] of Object.entries(env)) {
    if (!value || !/(KEY|TOKEN|SECRET|PASSWORD)/i.test(name)) continue;
    for (const part of value.split(',')) if (part.trim().length >= 4) values.add(part.trim());
  }
  // Longest first, so a key that contains another is redacted whole.
  return [...values].sort((a, b) => b.length - a.length);
}

/**
 * Makes sure DATA_DIR can hold the bot's data before anything is written there: the folder is created and a probe
 * file written and removed. Throws SettingsError naming DATA_DIR otherwise, so the bot refuses to start instead of
 * losing history silently. Kernel file systems (/proc, /sys) are refused up front: Node's recursive mkdir never
 * returns there.
 */
export function ensureDataDir(dataDir: string): void {
  const fail = (why: string) => new SettingsError(`DATA_DIR ${dataDir} cannot hold the bot's data: ${why}. Set DATA_DIR to a writable folder.`);
  if (/^\/(proc|sys|dev)(\/|$)/.test(dataDir)) throw fail('it is inside a kernel file system');
  let existing = dataDir;
  while (!existsSync(existing)) {
    const parent = path.dirname(existing);
    if (parent === existing) break;
    existing = parent;
  }
  try {
    if (!statSync(existing).isDirectory()) throw fail(`${existing} is not a folder`);
    accessSync(existing, constants.W_OK | constants.X_OK);
    mkdirSync(dataDir, { recursive: true });
    const probe = path.join(dataDir, `.write-test-${process.pid}`);
    try {
      writeFileSync(probe, 'ok');
    } finally {
      // Removed whether or not the write worked: a full disk leaves a half-written probe otherwise.
      rmSync(probe, { force: true });
    }
  } catch (err) {
    if (err instanceof SettingsError) throw err;
    throw fail((err as NodeJS.ErrnoException).code === 'EACCES' ? 'permission denied' : (err as Error).message);
  }
}
