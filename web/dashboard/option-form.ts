import { optionProblems } from '../../core/operator.js';
import { html, type SafeHtml } from '../html.js';

/**
 * A plugin's options as a form built from its schema (TypeBox, i.e. JSON Schema at run time), and the form read
 * back. Every option gets a control an owner can read: a label from the schema's `title` (else a short `description`,
 * else the key in words), a select for a union of literals or an enum, a checkbox for a boolean, one line per item
 * for a list of strings or numbers, a fieldset for a nested object. An option of any other shape is shown as it is
 * and kept as it is (edited in config.json). The form is read against the section as it is on disk: only the
 * options whose field differs from what the form showed are written, so saving never writes defaults.
 */

type Schema = Record<string, any>;

/** What a control edits. */
export type OptionKind = 'boolean' | 'choice' | 'number' | 'string' | 'list' | 'object' | 'other';

/** One problem of the submitted options: `field` is the option's dotted path (`reactions.share`). */
export interface OptionProblem {
  field: string;
  message: string;
}

const typeOf = (schema: Schema): string | undefined => (Array.isArray(schema.type) ? schema.type.find((t: unknown) => t !== 'null') : schema.type);

/** The values a choice offers: an enum, or a union (anyOf/oneOf) of literals. */
export function choicesOf(schema: Schema): unknown[] | undefined {
  if (Array.isArray(schema.enum)) return schema.enum;
  const variants = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(variants) && variants.length && variants.every((v: Schema) => v && 'const' in v)) return variants.map((v: Schema) => v.const);
  return undefined;
}

export function kindOf(schema: Schema): OptionKind {
  if (choicesOf(schema)) return 'choice';
  const type = typeOf(schema);
  if (type === 'boolean') return 'boolean';
  if (type === 'integer' || type === 'number') return 'number';
  if (type === 'string') return 'string';
  if (type === 'array') {
    const item = typeOf(schema.items ?? {});
    return item === 'string' || item === 'integer' || item === 'number' ? 'list' : 'other';
  }
  if (type === 'object' && schema.properties && !schema.patternProperties) return 'object';
  return 'other';
}

/**
 * The key in words: `maxJobsPerUser` → "Max jobs per user", `max_upload_mb` → "Max upload MB".
 * @example humanise('dailyMinutesPerUser') // 'Daily minutes per user'
 */
export function humanise(key: string): string {
  const words = key
    .replace(/[_-]+/g, ' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .trim()
    .split(/\s+/)
    .map((w) => (/^(mb|kb|gb|ms|url|id|ids|api|mp3|tts)$/i.test(w) ? w.toUpperCase().replace(/^IDS$/, 'ids') : w.toLowerCase()));
  const text = words.join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Longest description used as the label itself (longer ones are the help under a label made from the key). */
const SHORT_DESCRIPTION = 60;

/** The label and the help text of an option. */
export function labelOf(key: string, schema: Schema): { label: string; help: string } {
  const description = typeof schema.description === 'string' ? schema.description.trim() : '';
  if (typeof schema.title === 'string' && schema.title.trim()) return { label: schema.title.trim(), help: description };
  if (description && description.length <= SHORT_DESCRIPTION && !/[;(]/.test(description)) {
    return { label: (description.charAt(0).toUpperCase() + description.slice(1)).replace(/\.$/, ''), help: '' };
  }
  return { label: humanise(key), help: description ? description.charAt(0).toUpperCase() + description.slice(1) : '' };
}

const shownDefault = (value: unknown): string => (Array.isArray(value) ? (value.length ? value.map(String).join(', ') : 'none') : typeof value === 'string' ? (value ? `"${value}"` : 'empty') : String(value));

/** The text a field shows for a value (empty: not set, the default applies). */
function fieldText(kind: OptionKind, value: unknown): string {
  if (value === undefined) return '';
  if (kind === 'list') return Array.isArray(value) ? value.map(String).join('\n') : '';
  return String(value);
}

const fieldName = (path: string[]) => `opt:${path.join('.')}`;
const fieldId = (plugin: string, path: string[]) => `opt-${plugin}-${path.join('-')}`;

/** One option's control with its label, help and problem. */
function control(plugin: string, path: string[], schema: Schema, value: unknown, problems: readonly OptionProblem[]): SafeHtml {
  const key = path[path.length - 1] ?? '';
  const kind = kindOf(schema);
  const { label, help } = labelOf(key, schema);
  const id = fieldId(plugin, path);
  const name = fieldName(path);
  const dotted = path.join('.');
  if (kind === 'object') {
    const nested = (value && typeof value === 'object' && !Array.isArray(value) ? value : {}) as Record<string, unknown>;
    return html`<fieldset class="nested" id="${id}"><legend>${label}</legend>${help ? html`<p class="hint">${help}</p>` : ''}${Object.entries(schema.properties as Record<string, Schema>).map(([k, s]) => control(plugin, [...path, k], s, nested[k], problems))}</fieldset>`;
  }
  const problem = problems.find((p) => p.field === dotted)?.message;
  const range = schema.minimum !== undefined || schema.maximum !== undefined ? `From ${schema.minimum ?? schema.exclusiveMinimum ?? '…'} to ${schema.maximum ?? '…'}.` : '';
  const sentence = (text: string) => (text && !/[.!?]$/.test(text) ? `${text}.` : text);
  const hint = [sentence(help), kind === 'list' ? `One ${typeOf(schema.items ?? {}) === 'string' ? 'item' : 'number'} per line; empty: the default.` : '', schema.default !== undefined && kind !== 'boolean' ? `Default: ${shownDefault(schema.default)}.` : '', range]
    .filter(Boolean)
    .join(' ');
  const described = html` aria-describedby="${id}-help${problem ? ` ${id}-err` : ''}"${problem ? html` aria-invalid="true"` : ''}`;
  const after = html`<p class="hint" id="${id}-help">${hint || ' '}</p>${problem ? html`<p class="field-error" id="${id}-err">${problem}</p>` : ''}`;
  if (kind === 'boolean') {
    return html`<div class="option"><label for="${id}" class="inline"><input type="checkbox" id="${id}" name="${name}"${(value ?? schema.default) ? html` checked` : ''}${described}> ${label}</label><input type="hidden" name="present:${dotted}" value="1">${after}</div>`;
  }
  if (kind === 'other') {
    return html`<div class="option"><span class="label" id="${id}">${label}</span><pre class="value">${value === undefined ? '(default)' : JSON.stringify(value, null, 2)}</pre><p class="hint" id="${id}-help">${help ? `${help} ` : ''}Edited in config.json (plugins.${plugin}.${dotted}), not here.</p></div>`;
  }
  let input: SafeHtml;
  const text = fieldText(kind, value);
  if (kind === 'choice') {
    const current = value === undefined ? '' : String(value);
    input = html`<select id="${id}" name="${name}"${described}><option value="">${schema.default === undefined ? '(not set)' : `(default: ${String(schema.default)})`}</option>${(choicesOf(schema) ?? []).map((o) => html`<option value="${String(o)}"${current === String(o) ? html` selected` : ''}>${String(o)}</option>`)}</select>`;
  } else if (kind === 'list') {
    input = html`<textarea id="${id}" name="${name}" rows="${String(Math.min(8, Math.max(3, text.split('\n').length + 1)))}"${described}>${text}</textarea>`;
  } else {
    const placeholder = schema.default === undefined ? '' : String(schema.default);
    input = html`<input type="text"${kind === 'number' ? html` inputmode="decimal"` : ''} id="${id}" name="${name}" value="${text}" placeholder="${placeholder}"${described}>`;
  }
  return html`<div class="option"><label for="${id}">${label}${kind === 'list' ? html` <span class="hint">(one per line)</span>` : ''}</label>${input}${after}</div>`;
}

/**
 * The controls of every option in `schema` for `plugin`, filled from `values` (the section as on disk, or as
 * submitted when it came back with problems).
 */
/** The dotted paths of the options that have a control of their own (a problem elsewhere is said above the form). */
export function controlPaths(schema: Schema | undefined, path: string[] = []): string[] {
  return Object.entries((schema?.properties ?? {}) as Record<string, Schema>).flatMap(([key, s]) => {
    const kind = kindOf(s);
    if (kind === 'object') return controlPaths(s, [...path, key]);
    return kind === 'other' ? [] : [[...path, key].join('.')];
  });
}

export function optionControls(plugin: string, schema: Schema | undefined, values: Record<string, unknown>, problems: readonly OptionProblem[] = []): SafeHtml {
  const props = (schema?.properties ?? {}) as Record<string, Schema>;
  return html`${Object.entries(props).map(([key, s]) => control(plugin, [key], s, values[key], problems))}`;
}

/** Parses one field's text as the option's kind; a value that is not one stays text so the schema names it. */
function parseField(kind: OptionKind, schema: Schema, text: string): unknown {
  if (kind === 'number') return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
  if (kind === 'choice') return (choicesOf(schema) ?? []).find((c) => String(c) === text) ?? text;
  if (kind === 'list') {
    const items = text.split('\n').map((l) => l.trim()).filter(Boolean);
    return typeOf(schema.items ?? {}) === 'string' ? items : items.map((i) => (/^-?\d+(\.\d+)?$/.test(i) ? Number(i) : i));
  }
  return text;
}

/** Normalises a field's text for the changed-or-not comparison (list lines trimmed, blank lines dropped). */
function comparable(kind: OptionKind, text: string): string {
  return kind === 'list' ? text.split('\n').map((l) => l.trim()).filter(Boolean).join('\n') : text.trim();
}

/**
 * Applies the submitted option fields to a copy of `previous` (the section's options as on disk): a field that still
 * shows what the form showed leaves the option as it is (absent stays absent); a changed one is written, an emptied
 * one removed (the default applies). Returns the new options, with problems from the plugin's schema (checked with
 * defaults filled in on a copy, as at start) keyed by the option's path.
 *
 * @example readOptions(form, plugin.optionsSchema, { step: 2 }) // { values: { step: 3 }, problems: [] }
 */
export function readOptions(form: URLSearchParams, schema: Schema | undefined, previous: Record<string, unknown>): { values: Record<string, unknown>; problems: OptionProblem[] } {
  const values = structuredClone(previous);
  if (!schema) return { values, problems: [] };
  const walk = (props: Record<string, Schema>, path: string[], target: () => Record<string, unknown>, before: Record<string, unknown> | undefined) => {
    for (const [key, s] of Object.entries(props)) {
      const here = [...path, key];
      const kind = kindOf(s);
      const old = before?.[key];
      if (kind === 'object') {
        const nestedBefore = old && typeof old === 'object' && !Array.isArray(old) ? (old as Record<string, unknown>) : undefined;
        walk(s.properties as Record<string, Schema>, here, () => {
          const parent = target();
          const current = parent[key];
          if (!current || typeof current !== 'object' || Array.isArray(current)) parent[key] = {};
          return parent[key] as Record<string, unknown>;
        }, nestedBefore);
        continue;
      }
      if (kind === 'other') continue;
      const dotted = here.join('.');
      if (kind === 'boolean') {
        if (form.get(`present:${dotted}`) !== '1') continue;
        const on = form.get(fieldName(here)) === 'on';
        if (on !== Boolean(old ?? s.default)) target()[key] = on;
        continue;
      }
      const raw = form.get(fieldName(here));
      if (raw === null) continue; // not on the form: as it is
      if (comparable(kind, raw) === comparable(kind, fieldText(kind, old))) continue;
      const text = raw.trim();
      if (!text) delete target()[key];
      else target()[key] = parseField(kind, s, comparable(kind, raw));
    }
  };
  walk((schema.properties ?? {}) as Record<string, Schema>, [], () => values, previous);
  const paths = controlPaths(schema);
  const problems = optionProblems(schema, structuredClone(values)).map((line) => {
    const at = line.indexOf(': ');
    const where = at === -1 ? '' : line.slice(0, at);
    // A list item's problem (`quietHours.2`) belongs to the list's field.
    const field = paths.filter((p) => where === p || where.startsWith(`${p}.`)).sort((a, b) => b.length - a.length)[0] ?? where;
    return { field, message: line };
  });
  return { values, problems };
}
