import { Ajv, type ValidateFunction } from 'ajv';
import type { PluginSection } from '../config/schema.js';

/**
 * Plugin options: declared once as a TypeBox schema (plain JSON Schema at run time, so the project's ajv validates
 * it and the dashboard builds its form from it), with defaults, from which the TypeScript type is inferred.
 */
const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true });
const compiled = new WeakMap<object, ValidateFunction>();

function validatorFor(schema: object): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
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
