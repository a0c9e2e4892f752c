import { validateConfig, withDefaults } from '../../core/operator.js';
import type { Access } from '../../core/operator.js';
import { userPart } from '../../core/operator.js';
import { optionProblems, sectionProblems, type SectionRule } from '../../core/operator.js';
import type { Plugin } from '../../core/operator.js';
import { readOptions } from './option-form.js';
import { corePluginRule } from '../../core/operator.js';

/** One problem with a submitted field: `field` is the form field it belongs to, `message` says what is wrong. */
export interface FieldProblem {
  field: string;
  message: string;
}

/** The top-level config.json keys plugins own (`configSection`), for validating and saving. */
export function sectionKeysOf(plugins: readonly Plugin[]): string[] {
  return plugins.flatMap((p) => (p.configSection ? [p.configSection.key] : []));
}

/** True when a section's value is edited as plain text (a string schema), not as JSON. */
export function isTextSection(rule: { schema: object }): boolean {
  return (rule.schema as { type?: unknown }).type === 'string';
}

/** A section's schema as the options form reads it: one option named after the section's key. */
export function sectionFormSchema(rule: { key: string; schema: object }): Record<string, any> {
  return { type: 'object', properties: { [rule.key]: rule.schema } };
}

/** The text a section's field shows for its value in the file (empty: not set, the default applies). */
export function sectionText(rule: { schema: object }, value: unknown): string {
  if (value === undefined) return '';
  return isTextSection(rule) && typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

/**
 * Applies the form's fields of the plugins' top-level sections (`section:<key>`): a string is taken as typed, other
 * values as JSON; an empty field removes the key (the default applies). Each is checked with its plugin's schema.
 */
function applySections(form: URLSearchParams, config: Record<string, any>, plugins: readonly Plugin[], texts: Record<string, string>, problems: FieldProblem[]): void {
  for (const plugin of plugins) {
    const rule = plugin.configSection as SectionRule | undefined;
    if (!rule || form.get(`section:${rule.key}:present`) !== '1') continue;
    if (!isTextSection(rule)) {
      // Edited field by field like plugin options (never as a JSON box); only changed fields are written.
      const { values } = readOptions(form, sectionFormSchema(rule), rule.key in config ? { [rule.key]: config[rule.key] } : {});
      if (sameValue(values[rule.key], config[rule.key])) continue;
      if (values[rule.key] === undefined) delete config[rule.key];
      else config[rule.key] = values[rule.key];
      problems.push(...sectionProblems(rule, values[rule.key]).map((message) => ({ field: `section.${rule.key}`, message })));
      continue;
    }
    const text = form.get(`section:${rule.key}`) ?? '';
    texts[`section:${rule.key}`] = text;
    if (text.trim() === sectionText(rule, config[rule.key]).trim()) continue;
    const field = `section.${rule.key}`;
    if (!text.trim()) {
      delete config[rule.key];
      continue;
    }
    let value: unknown = text.trim();
    if (!isTextSection(rule)) {
      try {
        value = JSON.parse(text);
      } catch (err) {
        problems.push({ field, message: `${rule.key}: not valid JSON (${(err as Error).message})` });
        continue;
      }
    }
    config[rule.key] = value;
    problems.push(...sectionProblems(rule, value).map((message) => ({ field, message })));
  }
}

/** The config as the owner submitted it, plus the raw text of each plugin's options box (it may not be JSON). */
export interface ConfigDraft {
  config: Record<string, any>;
  optionTexts: Record<string, string>;
  problems: FieldProblem[];
}

/** The form fields an error can point at (the longest one that prefixes an error's path wins). */
const TOP_FIELDS = ['prefix', 'botName', 'targetUserIds', 'port', 'host', 'owners', 'access.mode', 'access.allow', 'access.block', 'groups.commandsWithoutMention', 'whatsapp.readReceipts', 'whatsapp.presence'];

/**
 * Splits an id list typed into a text box (commas, spaces or new lines) into bare ids: a pasted jid
 * (`628123@s.whatsapp.net`) or `+628123` becomes `628123`; duplicates are dropped.
 *
 * @example idList('628123, +62 8124\n628123@s.whatsapp.net') // ['628123', '62', '8124']
 */
export function idList(text: string | null): string[] {
  const ids = (text ?? '')
    .split(/[\s,;]+/)
    .map((part) => (part.includes('@') || part.startsWith('+') ? userPart(part) : part))
    .filter(Boolean);
  return [...new Set(ids)];
}

/** Options of a plugin section: everything but `enabled` and `access`. */
export function pluginOptions(section: Record<string, unknown> | undefined): Record<string, unknown> {
  const { enabled: _e, access: _a, ...options } = section ?? {};
  return options;
}

/** The form field an error line from `validateConfig` (`"targetUserIds.0: must be digits only"`) belongs to. */
export function fieldOf(path: string): string {
  const plugin = /^plugins\.([^.]+)(?:\.(.*))?$/.exec(path);
  if (plugin) {
    const rest = plugin[2] ?? '';
    if (rest === 'enabled' || rest.startsWith('enabled.')) return `plugins.${plugin[1]}.enabled`;
    if (rest === 'access' || rest.startsWith('access.')) return `plugins.${plugin[1]}.access`;
    return `plugins.${plugin[1]}.options`;
  }
  let best = '';
  for (const field of TOP_FIELDS) {
    if ((path === field || path.startsWith(`${field}.`)) && field.length > best.length) best = field;
  }
  return best || path.split('.')[0] || path;
}

function splitProblem(line: string): FieldProblem {
  const at = line.indexOf(': ');
  const path = at === -1 ? '' : line.slice(0, at);
  // The schema's one raw regex message, said for people.
  return { field: fieldOf(path), message: line.replace(/must match pattern "\^\\S\+\$"/, 'must not contain spaces') };
}

/**
 * Applies the dashboard form to the config file's current content and validates the result with the start-up
 * schema and each plugin's options schema. Fields the form does not show (history, ai, pluginPackages, sections
 * of plugins that are not installed) are kept as they are.
 *
 * @example const draft = formToConfig(form, JSON.parse(await readFile(file, 'utf8')), app.bot.plugins().map((s) => s.plugin));
 */
export function formToConfig(form: URLSearchParams, base: Record<string, any>, plugins: readonly Plugin[]): ConfigDraft {
  const config: Record<string, any> = structuredClone(base);
  const problems: FieldProblem[] = [];
  const optionTexts: Record<string, string> = {};
  const shown = shownSettings(base);
  // Only a field that differs from what the page showed is written: what the owner did not touch stays as it is in
  // the file (absent stays absent, so the defaults never land in config.json).
  const update = (path: string[], now: unknown, was: unknown) => {
    if (!sameValue(now, was)) setPath(config, path, now);
  };

  update(['prefix'], (form.get('prefix') ?? '').trim(), shown.prefix);
  update(['botName'], (form.get('botName') ?? '').trim(), shown.botName);
  const targets = idList(form.get('targetUserIds'));
  const add = form.get('addOwnId');
  if (add && !targets.includes(userPart(add))) targets.push(userPart(add));
  update(['targetUserIds'], targets, shown.targetUserIds);
  const port = (form.get('port') ?? '').trim();
  // A non-number stays a string so the schema names the field ("port: must be integer").
  if (port !== shown.port) config.port = /^\d{1,6}$/.test(port) ? Number(port) : port;
  update(['host'], (form.get('host') ?? '').trim(), shown.host);
  update(['owners'], idList(form.get('owners')), shown.owners);
  update(['access', 'mode'], form.get('access.mode') ?? shown.access.mode, shown.access.mode);
  update(['access', 'allow'], idList(form.get('access.allow')), shown.access.allow);
  update(['access', 'block'], idList(form.get('access.block')), shown.access.block);
  update(['groups', 'commandsWithoutMention'], form.get('groups.commandsWithoutMention') === 'on', shown.groups.commandsWithoutMention);
  // Unticked boxes are not sent at all: only a form that showed them (the marker) may turn them off.
  if (form.get('whatsapp:present') === '1') {
    update(['whatsapp', 'readReceipts'], form.get('whatsapp.readReceipts') === 'on', shown.whatsapp.readReceipts);
    update(['whatsapp', 'presence'], form.get('whatsapp.presence') === 'on', shown.whatsapp.presence);
  }

  for (const plugin of plugins) {
    const name = plugin.name;
    if (form.get(`plugin:${name}:present`) !== '1') continue;
    const previous = (base.plugins?.[name] ?? {}) as Record<string, unknown>;
    const section: Record<string, unknown> = { ...previous };
    const enabled = form.get(`plugin:${name}:enabled`) === 'on';
    const core = corePluginRule(plugin);
    if (!enabled && core && !core.canTurnOff) problems.push({ field: `plugins.${name}.enabled`, message: `plugins.${name}.enabled: ${name} is a core plugin that cannot be turned off (${core.why})` });
    if (!sameValue(enabled, previous.enabled ?? plugin.enabledByDefault ?? true)) section.enabled = enabled;
    const choice = form.get(`plugin:${name}:access`) ?? 'everyone';
    const access: Access = choice === 'owners' ? 'owners' : choice === 'list' ? idList(form.get(`plugin:${name}:ids`)) : 'everyone';
    if (!sameValue(access, previous.access ?? 'everyone')) section.access = access;
    // Options are edited field by field on the plugin's card (plugins view); a whole-JSON `plugin:<name>:options` field
    // is not read: a typo in hand-written JSON could replace every option at once.
    if (!sameValue(section, previous)) {
      config.plugins = { ...(config.plugins ?? {}), [name]: orderLike(previous, section) };
    }
  }

  applySections(form, config, plugins, optionTexts, problems);

  problems.unshift(...validateConfig(config, sectionKeysOf(plugins)).map(splitProblem));
  return { config, optionTexts, problems };
}

/** What the settings form shows for a config file: its values, with the defaults where it sets nothing. */
export function shownSettings(file: Record<string, any>): {
  prefix: string;
  botName: string;
  targetUserIds: string[];
  port: string;
  host: string;
  owners: string[];
  access: { mode: string; allow: string[]; block: string[] };
  groups: { commandsWithoutMention: boolean };
  whatsapp: { readReceipts: boolean; presence: boolean };
} {
  const c = withDefaults(file as Parameters<typeof withDefaults>[0]);
  const ids = (value: unknown) => (Array.isArray(value) ? value.map(String) : []);
  return {
    prefix: String(c.prefix),
    botName: String(c.botName),
    targetUserIds: ids(c.targetUserIds),
    port: String(c.port),
    host: String(c.host),
    owners: ids(c.owners),
    access: { mode: String(c.access.mode), allow: ids(c.access.allow), block: ids(c.access.block) },
    groups: { commandsWithoutMention: Boolean(c.groups.commandsWithoutMention) },
    whatsapp: { readReceipts: c.whatsapp.readReceipts !== false, presence: c.whatsapp.presence !== false },
  };
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Sets `path` in `target`, making the objects on the way (an existing object keeps its other keys). */
function setPath(target: Record<string, any>, path: string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    if (!node[key] || typeof node[key] !== 'object' || Array.isArray(node[key])) node[key] = {};
    node = node[key];
  }
  node[path[path.length - 1]!] = value;
}

/**
 * `section`'s keys in the order they had in `before` (new ones after), so a save moves nothing in config.json.
 * @example orderLike({ a: 1, b: 2 }, { c: 3, b: 4 }) // { b: 4, c: 3 }
 */
export function orderLike(before: Record<string, unknown>, section: Record<string, unknown>): Record<string, unknown> {
  const ordered: Record<string, unknown> = {};
  for (const key of Object.keys(before)) if (key in section) ordered[key] = section[key];
  for (const key of Object.keys(section)) if (!(key in ordered)) ordered[key] = section[key];
  return ordered;
}
