import { copyFile, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ErrorObject } from 'ajv';
import { DEFAULT_NOTICE_LIMITS } from '../notices/owner-notices.js';
import { DEFAULT_SENDING_LIMITS } from '../sending/outbox.js';
import { DEFAULT_MAX_ANSWER_CHARS } from '../sending/split-message.js';
import { writeFileAtomicSafe } from '../store/atomic.js';
import { configSchema, type BotConfig } from './schema.js';
import { compiledValidator, lazyAjv } from './compiled-validator.js';

/** Thrown for a config.json that is not JSON or does not fit the schema; the message names file, field, reason. */

/** What a declined call is answered with unless config `calls.*.message` says otherwise. */
export const DEFAULT_CALL_MESSAGE = "I can't take calls. Please write to me, or send a voice note.";

export class ConfigError extends Error {
  constructor(readonly file: string, readonly problems: string[]) {
    super(`${file} is invalid:\n  - ${problems.join('\n  - ')}`);
  }
}

/** The project root (where config.example.json lives), found from this module's location in core/ or dist/core/. */
export function projectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(path.join(dir, 'config.example.json'))) return dir;
    dir = path.dirname(dir);
  }
  return process.cwd();
}

// validateSchema off: the schemas are TypeBox's (well-formed by construction); checking each against the JSON
// Schema meta-schema compiled that meta-schema in every ajv instance and was most of the start-up's validation cost.
// Compiled once and remembered between starts (compiledValidator): the schema is the largest a start validates with.
const ajv = lazyAjv({ allErrors: true, strict: false, validateSchema: false, useDefaults: false, code: { source: true } });
const validateSchema = compiledValidator(ajv, configSchema);

function describe(error: ErrorObject): string {
  const field = error.instancePath ? error.instancePath.slice(1).replace(/\//g, '.') : '(top level)';
  if (error.keyword === 'additionalProperties') {
    return `${field === '(top level)' ? '' : field + '.'}${String(error.params.additionalProperty)}: unknown field`;
  }
  if (error.keyword === 'required') return `${String(error.params.missingProperty)}: is required`;
  if (error.keyword === 'enum') return `${field}: must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
  if (error.keyword === 'pattern' && /targetUserIds|owners|allow|block|access/.test(field)) return `${field}: must be digits only (a phone number or LID)`;
  return `${field}: ${error.message ?? 'is invalid'}`;
}

/** The top-level keys of config.json the core owns; a plugin cannot claim them for a section of its own. */
export const CORE_CONFIG_KEYS: readonly string[] = Object.keys(configSchema.properties);

/** The top-level keys of a config object that the core does not own (plugins' sections, or mistakes). */
export function sectionKeysOf(value: unknown): string[] {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return [];
  return Object.keys(value).filter((key) => !CORE_CONFIG_KEYS.includes(key));
}

/**
 * Validates a config object with the schema; returns the problems (empty when valid). `sectionKeys`: top-level keys
 * that plugins declared as their own sections (`configSection`), checked with the plugin's schema instead (their
 * values are the plugin's business; any other unknown key is an "unknown field"); `'any'` lets every unknown key
 * through, for loading before the plugins are known.
 * Plugin option sections are checked with each plugin's own schema by the registry.
 */
export function validateConfig(value: unknown, sectionKeys: readonly string[] | 'any' = []): string[] {
  const own = sectionKeysOf(value).filter((key) => sectionKeys === 'any' || sectionKeys.includes(key));
  if (own.length) value = Object.fromEntries(Object.entries(value as Record<string, unknown>).filter(([key]) => !own.includes(key)));
  if (validateSchema(value)) return [];
  const seen = new Set<string>();
  // oneOf produces one error per branch; keep one readable line per field.
  return (validateSchema.errors ?? [])
    .filter((e) => e.keyword !== 'oneOf')
    .map(describe)
    .filter((line) => (seen.has(line) ? false : (seen.add(line), true)));
}

/** "Expected ',' or '}' after property value (line 4, column 3)" from a JSON.parse error. */
function describeJsonError(text: string, err: Error): string {
  const message = err.message.replace(/^JSON\.parse: /, '');
  const position = /at position (\d+)/.exec(message);
  const reason = message.replace(/\s*in JSON at position \d+.*$/s, '').replace(/\s*\(line \d+ column \d+\)$/, '');
  if (!position) return /end of JSON input/.test(message) ? 'the file ends in the middle of the JSON (is it cut off?)' : reason;
  const before = text.slice(0, Number(position[1]));
  const line = before.split('\n').length;
  const column = Number(position[1]) - before.lastIndexOf('\n');
  return `${reason} (line ${line}, column ${column})`;
}

/**
 * Largest media downloaded per kind (MB): a WhatsApp photo is at most a few MB and a sticker under 1 MB; voice notes of
 * hours fit 16 MB of Opus; recordings, videos and files are larger (mp3 converts them), yet the bot only reads them.
 */
// No lower than the bundled plugins' own defaults (vision 30 MB, mp3 200 MB), so a plugin's documented limit holds as shipped.
export const DEFAULT_MAX_DOWNLOAD_MB = { voice: 16, audio: 200, image: 30, video: 200, document: 100, sticker: 2 } as const;

/** Fills defaults into a valid config object. */
export function withDefaults(raw: Partial<BotConfig> & Record<string, unknown>): BotConfig {
  return {
    prefix: raw.prefix ?? '.',
    botName: raw.botName ?? 'Assistant',
    targetUserIds: raw.targetUserIds ?? [],
    port: raw.port ?? 3000,
    host: raw.host ?? '127.0.0.1',
    owners: raw.owners ?? [],
    access: { mode: raw.access?.mode ?? 'everyone', allow: raw.access?.allow ?? [], block: raw.access?.block ?? [] },
    account: { mode: raw.account?.mode ?? 'bot' },
    // Without the keys an existing install keeps working as before (everyone, every group); config.example.json ships
    // the closed defaults (pairing, groups an owner opened).
    groups: { commandsWithoutMention: raw.groups?.commandsWithoutMention ?? false, policy: raw.groups?.policy ?? 'open' },
    takeover: { minutes: raw.takeover?.minutes ?? 30, autoReplies: raw.takeover?.autoReplies ?? [] },
    // A person's call is declined with a message by default; a group's rings on (the group may call anyone in it).
    calls: {
      private: { decline: raw.calls?.private?.decline ?? true, message: raw.calls?.private?.message ?? DEFAULT_CALL_MESSAGE },
      groups: { decline: raw.calls?.groups?.decline ?? false, message: raw.calls?.groups?.message ?? DEFAULT_CALL_MESSAGE },
      tellOwner: raw.calls?.tellOwner ?? false,
    },
    whatsapp: { readReceipts: raw.whatsapp?.readReceipts ?? true, presence: raw.whatsapp?.presence ?? true },
    // Left unset when the file does not set it: the transport decides (a piped console keeps every line apart).
    conversation: {
      ...(raw.conversation?.debounceMs === undefined ? {} : { debounceMs: raw.conversation.debounceMs }),
      ...(raw.conversation?.progressAfterSeconds === undefined ? {} : { progressAfterSeconds: raw.conversation.progressAfterSeconds }),
      ackReactions: raw.conversation?.ackReactions ?? false,
    },
    history: {
      maxMessages: raw.history?.maxMessages ?? 50,
      maxPromptTokens: raw.history?.maxPromptTokens ?? 6000,
      summarize: raw.history?.summarize ?? true,
      summaryMaxTokens: raw.history?.summaryMaxTokens ?? 800,
    },
    ai: {
      requestsPerMinute: raw.ai?.requestsPerMinute ?? 10,
      tokensPerDay: raw.ai?.tokensPerDay ?? 300_000,
      premiumTokensPerDay: raw.ai?.premiumTokensPerDay ?? 50_000,
      quotaMainTokens: raw.ai?.quotaMainTokens ?? 200_000_000,
      quotaPremiumTokens: raw.ai?.quotaPremiumTokens ?? 50_000_000,
      maxToolRounds: raw.ai?.maxToolRounds ?? 5,
      maxToolCallsPerRound: raw.ai?.maxToolCallsPerRound ?? 8,
      maxToolCallsPerMessage: raw.ai?.maxToolCallsPerMessage ?? 20,
      maxMemoryWritesPerMessage: raw.ai?.maxMemoryWritesPerMessage ?? 5,
      toolCallsPerDay: raw.ai?.toolCallsPerDay ?? 200,
      showProvider: raw.ai?.showProvider ?? false,
      maxAnswerChars: raw.ai?.maxAnswerChars ?? DEFAULT_MAX_ANSWER_CHARS,
      outageNoticeMinutes: raw.ai?.outageNoticeMinutes ?? 5,
      cacheControl: raw.ai?.cacheControl ?? false,
    },
    money: {
      currency: raw.money?.currency ?? 'USD',
      prices: raw.money?.prices ?? {},
      caps: { personMonthly: raw.money?.caps?.personMonthly ?? 0, chatMonthly: raw.money?.caps?.chatMonthly ?? 0, overallMonthly: raw.money?.caps?.overallMonthly ?? 0 },
      noticePercent: raw.money?.noticePercent ?? 80,
    },
    media: { maxDownloadMB: { ...DEFAULT_MAX_DOWNLOAD_MB, ...(raw.media?.maxDownloadMB ?? {}) } },
    data: { flushIntervalMs: raw.data?.flushIntervalMs ?? 1000, diskLowMb: raw.data?.diskLowMb ?? 200 },
    sending: {
      perChatPerMinute: raw.sending?.perChatPerMinute ?? DEFAULT_SENDING_LIMITS.perChatPerMinute,
      globalPerMinute: raw.sending?.globalPerMinute ?? DEFAULT_SENDING_LIMITS.globalPerMinute,
      jitterMs: raw.sending?.jitterMs ?? DEFAULT_SENDING_LIMITS.jitterMs,
    },
    notices: {
      minIntervalMinutes: raw.notices?.minIntervalMinutes ?? DEFAULT_NOTICE_LIMITS.minIntervalMinutes,
      maxPerHour: raw.notices?.maxPerHour ?? DEFAULT_NOTICE_LIMITS.maxPerHour,
    },
    ...(raw.guard ? { guard: raw.guard } : {}),
    ...(raw.hooks ? { hooks: raw.hooks } : {}),
    ...(raw.webhooks ? { webhooks: raw.webhooks } : {}),
    shutdown: { graceSeconds: raw.shutdown?.graceSeconds ?? 10 },
    pluginPackages: raw.pluginPackages ?? [],
    plugins: raw.plugins ?? {},
    sections: Object.fromEntries(sectionKeysOf(raw).map((key) => [key, raw[key]])),
  };
}

export interface LoadedConfig {
  config: BotConfig;
  file: string;
  /** True when config.json was missing and was created from config.example.json. */
  created: boolean;
}

/**
 * Loads `config.json` from `cwd`, creating it from `config.example.json` when missing, and
 * validates it. Throws ConfigError (file, field, reason) when it is not JSON or does not fit the schema.
 *
 * @example
 * const { config, created } = await loadConfigFile(process.cwd());
 *
 * `sectionKeys` as for `validateConfig`: the app loads with `'any'` (plugins are found from the config's
 * `pluginPackages`), then refuses the top-level keys no plugin declared.
 */
export async function loadConfigFile(cwd: string, file = path.join(cwd, 'config.json'), options: { sectionKeys?: readonly string[] | 'any' } = {}): Promise<LoadedConfig> {
  let created = false;
  if (!existsSync(file)) {
    await copyFile(path.join(projectRoot(), 'config.example.json'), file);
    created = true;
  }
  let raw: unknown;
  // Plain JSON.parse, its error put in words with the line and column. (cosmiconfig parsed the text a second time here,
  // with ~20 CommonJS modules loaded at every start for it, and its message buried the reason.)
  const text = await readFile(file, 'utf8');
  if (text.trim()) {
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw new ConfigError(file, [`not valid JSON: ${describeJsonError(text, err as Error)}`]);
    }
  }
  if (raw === undefined || raw === null) throw new ConfigError(file, [text.trim() ? 'not a JSON object' : 'the file is empty']);
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(file, ['must be a JSON object']);
  const problems = validateConfig(raw, options.sectionKeys);
  if (problems.length) throw new ConfigError(file, problems);
  return { config: withDefaults(raw as Partial<BotConfig> & Record<string, unknown>), file, created };
}

/**
 * Validates and writes config.json atomically, keeping the previous file as `config.json.bak`.
 * Throws ConfigError without touching the file when the new config is invalid. `sectionKeys`: the plugins' own
 * top-level sections (their values are checked by the caller with the plugin's schema).
 */
export async function saveConfigFile(file: string, value: unknown, sectionKeys: readonly string[] = []): Promise<BotConfig> {
  const problems = validateConfig(value, sectionKeys);
  if (problems.length) throw new ConfigError(file, problems);
  let indent = '  ';
  if (existsSync(file)) {
    await copyFile(file, `${file}.bak`);
    // The owner's layout is kept: a file indented with tabs or four spaces stays so (only changed lines differ).
    indent = /^\{\r?\n([ \t]+)"/.exec(await readFile(file, 'utf8').catch(() => ''))?.[1] ?? indent;
  }
  await writeFileAtomicSafe(file, JSON.stringify(value, null, indent) + '\n');
  return withDefaults(value as Partial<BotConfig> & Record<string, unknown>);
}
