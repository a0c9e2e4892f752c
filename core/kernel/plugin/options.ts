import type { ValidateFunction } from 'ajv';
import { compiledValidator, lazyAjv } from '../../services/config/compiled-validator.js';
import type { PluginSection } from '../../services/config/schema.js';

/**
 * Plugin options: declared once as a TypeBox schema (plain JSON Schema at run time, so the project's ajv validates
 * it and the dashboard builds its form from it), with defaults, from which the TypeScript type is inferred.
 */
// validateSchema off: the schemas are TypeBox's (well-formed by construction); checking each against the JSON
// Schema meta-schema compiled that meta-schema in every ajv instance and was most of the start-up's validation cost.
// Each validator is remembered between starts (compiledValidator), as the config schema's: a start validated ~29
// plugins' options, each compiled anew (~80 ms of a start on a quiet machine).
const ajv = lazyAjv({ allErrors: true, strict: false, validateSchema: false, useDefaults: true, code: { source: true } });
const compiled = new WeakMap<object, ValidateFunction>();

function validatorFor(schema: object): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = compiledValidator(ajv, schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** Problems of `value` against `schema`, as `field: message` lines (empty when valid); `prefix` names the section. */
export function optionProblems(schema: object, value: unknown, prefix = ''): string[] {
  const validate = validatorFor(schema);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => {
    const parts = e.instancePath.split('/').filter(Boolean);
    if (e.keyword === 'additionalProperties') parts.push(String(e.params.additionalProperty));
    const field = [prefix, ...parts].filter(Boolean).join('.') || '(options)';
    return e.keyword === 'additionalProperties' ? `${field}: unknown option` : `${field}: ${e.message}`;
  });
}

/**
 * A plugin's options from its config.json section: `enabled` and `access` (the core's) removed, defaults filled in,
 * validated. Returns the options and the problems (an invalid section still yields its defaults).
 */
export function resolveOptions(schema: object, section: PluginSection | undefined): { options: Record<string, unknown>; problems: string[] } {
  const { enabled: _enabled, access: _access, ...rest } = (section ?? {}) as Record<string, unknown>;
  const options = structuredClone(rest);
  const problems = optionProblems(schema, options);
  if (!problems.length) return { options, problems };
  const defaults: Record<string, unknown> = {};
  optionProblems(schema, defaults);
  return { options: defaults, problems };
}

/** A plugin's top-level section of config.json as the core checks it (`configSection` of definePlugin). */
export interface SectionRule {
  key: string;
  schema: object;
  check?(value: unknown): string | undefined;
}

/** The schema's default for a section (validating `undefined` fills nothing in, so it is read from the schema). */
function sectionDefault(rule: SectionRule): unknown {
  return structuredClone((rule.schema as { default?: unknown }).default);
}

/**
 * Problems of a plugin's top-level section value, as `key: message` lines (empty when valid). `undefined` (the key
 * absent from config.json) stands for the default.
 */
export function sectionProblems(rule: SectionRule, value: unknown): string[] {
  const checked = value === undefined ? sectionDefault(rule) : structuredClone(value);
  if (checked === undefined) return [`${rule.key}: has no default; give its schema one (e.g. Type.String({ default: '' }))`];
  const problems = optionProblems(rule.schema, checked, rule.key);
  if (problems.length) return problems;
  let problem: string | undefined;
  try {
    problem = rule.check?.(checked);
  } catch (err) {
    problem = `could not be checked (${(err as Error).message})`;
  }
  return problem ? [`${rule.key}: ${problem}`] : [];
}

/** A section's value for the plugin: the file's when valid, else the default, with the problems found. */
export function resolveSection(rule: SectionRule, value: unknown): { value: unknown; problems: string[] } {
  const problems = sectionProblems(rule, value);
  return { value: value === undefined || problems.length ? sectionDefault(rule) : structuredClone(value), problems };
}
