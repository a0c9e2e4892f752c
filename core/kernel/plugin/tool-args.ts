import type { ErrorObject, ValidateFunction } from 'ajv';
import { lazyAjv } from '../../services/config/compiled-validator.js';
import type { Tool } from './message-context.js';

/**
 * The model's arguments of a tool call, checked against the tool's `parameters` before `run`: defaults filled in, a
 * value of the wrong type refused (never coerced: `{ query: 42 }` is a mistake to tell the model, not a search);
 * arguments a schema with `additionalProperties: false` does not name are dropped (a "chatId" the model adds is ignored:
 * the chat is the core's binding).
 */
// validateSchema off: the schemas are TypeBox's (well-formed by construction); checking each against the JSON
// Schema meta-schema compiled that meta-schema in every ajv instance and was most of the start-up's validation cost.
// Made at the first tool call (ajv loads then, not at start).
const ajv = lazyAjv({ allErrors: true, strict: false, validateSchema: false, useDefaults: true, removeAdditional: true });
/** Per schema object: its validator, or null when the schema cannot be compiled (then the tool checks its own). */
const compiled = new WeakMap<object, ValidateFunction | null>();

function validatorFor(schema: object): ValidateFunction | null {
  let validate = compiled.get(schema);
  if (validate !== undefined) return validate;
  try {
    // A schema from elsewhere (an MCP server's) may name a draft ajv does not load: the rules are what matter here.
    const { $schema: _draft, ...rules } = schema as Record<string, unknown>;
    validate = ajv.get().compile(rules);
  } catch {
    validate = null;
  }
  compiled.set(schema, validate);
  return validate;
}

function problemOf(e: ErrorObject): string {
  const parts = e.instancePath.split('/').filter(Boolean);
  if (e.keyword === 'required') return `${[...parts, String(e.params.missingProperty)].join('.')}: is required`;
  if (e.keyword === 'additionalProperties') return `${[...parts, String(e.params.additionalProperty)].join('.')}: is not a parameter of this tool`;
  return `${parts.join('.') || '(arguments)'}: ${e.message}`;
}

/**
 * Checks (and completes, in place) a tool call's arguments. Returns the problems in words, each naming the field; an
 * empty list when they fit; `undefined` when the tool's schema cannot be compiled (the arguments are passed unchecked).
 */
export function toolArgProblems(tool: Pick<Tool, 'parameters'>, args: Record<string, unknown>): string[] | undefined {
  const validate = validatorFor(tool.parameters ?? {});
  if (!validate) return undefined;
  if (validate(args)) return [];
  return [...new Set((validate.errors ?? []).map(problemOf))];
}

/** What the model is told when its arguments do not fit: each problem, and to call again with fitting ones. */
export function badArgsAnswer(name: string, problems: string[]): string {
  return `Error: ${name} was not run: its arguments do not fit its parameters (${problems.join('; ')}). Call it again with arguments that match the parameters' schema.`;
}
