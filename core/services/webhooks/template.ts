/*
 * A hook's template turned into the text it sends: `{{field}}` (or `{{a.b}}` into nested objects) is replaced by the
 * payload's value. Nothing else is interpreted: no expressions, no loops, so a payload cannot run anything.
 */

const FIELD = /\{\{\s*([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)\s*\}\}/g;

/** A template the payload cannot fill: `message` names the field. */
export class TemplateError extends Error {}

/** The fields a template uses, in order (each once). */
export function templateFields(template: string): string[] {
  return [...new Set([...template.matchAll(FIELD)].map((m) => m[1]!))];
}

function valueAt(payload: unknown, dotted: string): unknown {
  let value: unknown = payload;
  for (const part of dotted.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.prototype.hasOwnProperty.call(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/**
 * `template` with each `{{field}}` replaced by the payload's value (strings as they are, numbers and booleans written
 * out, objects and lists as JSON; `fill` may put each into a frame of its own). Throws TemplateError naming the first field the payload lacks (null counts as
 * lacking), so a sender learns what to fix instead of the chat getting a message with a hole in it.
 *
 * @example renderTemplate('The {{machine}} is done', { machine: 'washer' }) // 'The washer is done'
 */
export function renderTemplate(template: string, payload: unknown, fill: (field: string, value: string) => string = (_field, value) => value): string {
  return template.replace(FIELD, (_all, field: string) => {
    const value = valueAt(payload, field);
    if (value === undefined || value === null) throw new TemplateError(`the payload has no field "${field}" (the hook's template uses {{${field}}})`);
    return fill(field, typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value));
  });
}
