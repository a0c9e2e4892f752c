import type { ValidateFunction } from 'ajv';
import { lazyAjv } from '../config/compiled-validator.js';

/**
 * The schema and version of one kind of data file. The version lives in the file (`"version": 1` first, or
 * `versionKey` for files that are plain maps); the in-memory document never carries it. A file without a version
 * is version 0 (written before versions existed) and is migrated, like any older version.
 *
 * A document that has a key of that name itself (its schema declares it, or it simply holds one) keeps it: the file's
 * version is then written as `"$version"` instead, so what was stored comes back exactly as stored (see
 * `fileVersionKey`). `$version` is the store's own key: a document must not hold one.
 */
export interface DataSchema {
  /** What the file is, for messages ("chat history"). */
  name: string;
  version: number;
  /** Key of the version inside the file; default `version`. */
  versionKey?: string;
  /** JSON schema of the document (without the version key). */
  schema: object;
  /** Turns a document of an older version into the current one (it is validated afterwards). */
  migrate?: (value: Record<string, unknown>, fromVersion: number) => Record<string, unknown>;
}

/** The store's own version key, used when the document has a key named like `versionKey` itself. */
export const OWN_VERSION_KEY = '$version';

/** True when the document schema names `key` among its properties (so the key is the document's, not the file's). */
function declares(spec: DataSchema, key: string): boolean {
  const props = (spec.schema as { properties?: Record<string, unknown> }).properties;
  return Boolean(props && Object.prototype.hasOwnProperty.call(props, key));
}

/**
 * The key the file's version is written under: `versionKey` (default `version`), or `$version` when the document
 * declares or holds a key of that name itself (it is data then, and never stripped at load).
 */
export function fileVersionKey(spec: DataSchema, value: unknown): string {
  const key = spec.versionKey ?? 'version';
  const holds = value !== null && typeof value === 'object' && Object.prototype.hasOwnProperty.call(value, key);
  return declares(spec, key) || holds ? OWN_VERSION_KEY : key;
}

export type CheckResult = { ok: true; value: Record<string, unknown>; migratedFrom?: number } | { ok: false; reason: string };

// validateSchema off: the schemas are TypeBox's (well-formed by construction); checking each against the JSON
// Schema meta-schema compiled that meta-schema in every ajv instance and was most of the start-up's validation cost.
// Made at the first check of a data file or log line (ajv loads then, not at start).
const ajv = lazyAjv({ allErrors: false, strict: false, validateSchema: false });
const compiled = new WeakMap<object, ValidateFunction>();

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * Checks a parsed data file against its schema, migrating an older version first. Says why when it does not match.
 *
 * @example checkDocument(HISTORY_SCHEMA, JSON.parse(text)) // { ok: true, value: { messages: [...] } }
 */
export function checkDocument(spec: DataSchema | undefined, parsed: unknown): CheckResult {
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { ok: false, reason: `is ${kindOf(parsed)}, expected an object` };
  if (!spec) return { ok: true, value: parsed as Record<string, unknown> };
  const own = Object.prototype.hasOwnProperty.call(parsed, OWN_VERSION_KEY);
  // `$version` present: the document has a key named like the version key, and keeps it. Otherwise the version key is
  // the file's, except where the schema declares it as the document's own: such a file was written before `$version`
  // existed (its version key held the document's value), and is read as the current version, nothing stripped.
  const documentsKey = !own && declares(spec, spec.versionKey ?? 'version');
  const key = own ? OWN_VERSION_KEY : (spec.versionKey ?? 'version');
  let value: Record<string, unknown>;
  let rawVersion: unknown;
  if (documentsKey) {
    value = { ...(parsed as Record<string, unknown>) };
    rawVersion = spec.version;
  } else {
    ({ [key]: rawVersion, ...value } = parsed as Record<string, unknown>);
  }
  const version = rawVersion === undefined ? 0 : rawVersion;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 0) return { ok: false, reason: `has a "${key}" that is not a version number` };
  if (version > spec.version) return { ok: false, reason: `was written by a newer version of the bot (${spec.name} v${version}; this one reads up to v${spec.version})` };
  let migratedFrom: number | undefined;
  if (version < spec.version) {
    try {
      value = spec.migrate ? spec.migrate(value, version) : value;
    } catch (err) {
      return { ok: false, reason: `could not be migrated from v${version}: ${(err as Error).message}` };
    }
    migratedFrom = version;
  }
  let validate = compiled.get(spec.schema);
  if (!validate) {
    validate = ajv.get().compile(spec.schema);
    compiled.set(spec.schema, validate);
  }
  if (!validate(value)) return { ok: false, reason: `does not match the ${spec.name} schema: ${ajv.get().errorsText(validate.errors, { dataVar: 'file' })}` };
  return { ok: true, value, migratedFrom };
}

/**
 * A check of single values against a JSON schema (a line of an append-only log): undefined when it matches, else why.
 *
 * @example checkValue(Type.Object({ text: Type.String() }), { text: 1 }) // 'value/text must be string'
 */
export function checkValue(schema: object, value: unknown): string | undefined {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.get().compile(schema);
    compiled.set(schema, validate);
  }
  return validate(value) ? undefined : ajv.get().errorsText(validate.errors, { dataVar: 'value' });
}

const str = { type: 'string' } as const;
const num = { type: 'number' } as const;
const mapOf = (values: object) => ({ type: 'object', additionalProperties: values });

/** `data/history/<chat>.json`. */
export const HISTORY_SCHEMA: DataSchema = {
  name: 'chat history',
  version: 1,
  schema: {
    type: 'object',
    required: ['messages'],
    properties: {
      messages: {
        type: 'array',
        items: {
          type: 'object',
          required: ['role', 'text', 'at'],
          properties: { role: { enum: ['user', 'assistant'] }, text: str, at: num, id: str, senderId: str, senderName: str, media: str, answers: str, answersMessage: str, carried: { type: 'boolean' } },
        },
      },
      // Sequence number of the last `<chat>.jsonl` line folded into this file: lines up to it are not replayed again.
      logSeq: { type: 'integer', minimum: 0 },
      // The running summary of the turns folded out of `messages` (history.summarize).
      summary: {
        type: 'object',
        required: ['text', 'at', 'folded', 'people', 'recent'],
        properties: {
          text: str,
          at: num,
          folded: { type: 'integer', minimum: 0 },
          people: { type: 'array', items: str },
          recent: { type: 'array', items: { type: 'object', required: ['id'], properties: { id: str, senderId: str, role: { enum: ['user', 'assistant'] } } } },
        },
      },
    },
  },
};

/**
 * `data/memory/<chat>.json`. Version 0 (the original service) kept facts as plain strings; they become
 * `{ text, at: 0 }`.
 */
export const MEMORY_SCHEMA: DataSchema = {
  name: 'chat memory',
  version: 1,
  schema: {
    type: 'object',
    required: ['facts'],
    properties: {
      facts: { type: 'array', items: { type: 'object', required: ['text', 'at'], properties: { text: str, at: num, by: str } } },
      archived: { type: 'array', items: { type: 'object', required: ['text', 'at'], properties: { text: str, at: num, by: str } } },
    },
  },
  migrate: (value) => {
    if (Array.isArray(value.facts)) value.facts = value.facts.map((f: unknown) => (typeof f === 'string' ? { text: f, at: 0 } : f));
    return value;
  },
};

// `cached`: input tokens the provider served from its prompt cache (part of `prompt`), where it reports them.
const counter = { type: 'object', required: ['prompt', 'completion', 'total', 'requests'], properties: { prompt: num, completion: num, total: num, requests: num, cached: num } };

/** The token usage (`USAGE_STORE`; `data/usage.json` before). */
export const USAGE_SCHEMA: DataSchema = {
  name: 'token usage',
  version: 1,
  schema: {
    type: 'object',
    required: ['days', 'totals', 'warned'],
    properties: {
      days: mapOf(mapOf(counter)),
      totals: { type: 'object', required: ['main', 'premium'], properties: { main: num, premium: num } },
      warned: { type: 'object', required: ['main', 'premium'], properties: { main: { type: 'boolean' }, premium: { type: 'boolean' } } },
    },
  },
};

/** The budget counters (`BUDGETS_STORE`; `data/budgets.json` before). */
export const BUDGETS_SCHEMA: DataSchema = {
  name: 'user budgets',
  version: 1,
  schema: {
    type: 'object',
    required: ['day', 'tokens', 'premiumTokens'],
    properties: { day: str, tokens: mapOf(num), premiumTokens: mapOf(num), recent: mapOf({ type: 'array', items: num }), toolCalls: mapOf(num) },
  },
};

/**
 * The core's data file kinds, for the backup manifest (`schemas`: name → version). Plugins declare theirs in
 * `dataFiles` (`definePlugin`), the WhatsApp adapter its own (whatsapp-data-schemas.ts); cli/data-schemas.ts adds them.
 */
export const DATA_SCHEMAS: DataSchema[] = [
  HISTORY_SCHEMA,
  MEMORY_SCHEMA,
  USAGE_SCHEMA,
  BUDGETS_SCHEMA,
];
