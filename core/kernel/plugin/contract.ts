import { Type, type TObject, type TSchema, type TUnknown } from '#typebox';
import path from 'node:path';
import { dataFileOf } from '../../services/store/store-declarations.js';
import { pluginErrors } from './errors.js';
import { resolveOptions, resolveSection, type SectionRule } from './options.js';
import type { Tool } from './message-context.js';
import type { Plugin, PluginSpec } from './spec.js';

/**
 * `definePlugin`: the one way a plugin is made. The types of the contract are in spec.ts, offer.ts, handlers.ts and
 * message-context.ts (the core runs on the same ones); this module checks a spec and freezes it.
 */

const NAME = /^[a-z][a-z0-9-]{0,39}$/;

/**
 * How the bot knows a plugin, whichever copy of this module made it. A plugin in its own folder imports
 * `definePlugin` from the `@wa-assistant-bot/plugin-api` package — a built copy of this entry, not the module the bot
 * runs — so the mark cannot be a class or a module-local symbol (`instanceof` and `Symbol()` differ between copies).
 * It is a key from the process-wide symbol registry (`Symbol.for`: every copy gets the same symbol), and its value
 * is the contract version, so a plugin made for another version of the contract is told apart from a non-plugin.
 */
const DEFINED_PLUGIN_MARK = Symbol.for('wa-assistant-bot.plugin');
/** The plugin contract this copy makes and runs; raised only when a plugin of the previous one could no longer run. */
export const CONTRACT_VERSION = 3;

/**
 * Declares a plugin. The default export of `plugins/<name>/index.ts`, or of a plugin package, must
 * be the result. Mistakes are refused here, with a code and the fix, so they show when the plugin loads.
 *
 * @example
 * export default definePlugin({
 *   name: 'echo',
 *   description: 'Repeats what you say',
 *   options: Type.Object({ prefix: Type.String({ default: 'you said: ' }) }),
 *   setup: () => ({
 *     commands: [{ command: 'echo', usage: '.echo <text>', run: (ctx) => ctx.reply(ctx.options.prefix + ctx.args) }],
 *   }),
 * });
 */
export function definePlugin<S extends TObject = TObject<{}>, C extends TSchema = TUnknown>(spec: PluginSpec<S, C>): Plugin {
  if (!spec || typeof spec !== 'object') throw pluginErrors.badDefinition('?', 'definePlugin needs an object: definePlugin({ name, description, setup })');
  const { name } = spec;
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw pluginErrors.badDefinition(String(name), 'the name must be lowercase letters, digits and dashes, starting with a letter');
  }
  if (typeof spec.description !== 'string' || !spec.description.trim()) throw pluginErrors.badDefinition(name, 'it has no description: it is shown in .help and in the dashboard');
  if (typeof spec.setup !== 'function') throw pluginErrors.badDefinition(name, 'it has no setup(host) function returning what it offers, e.g. setup: () => ({ commands: [...] })');
  for (const need of spec.needs ?? []) if (typeof need !== 'string' || !need) throw pluginErrors.badDefinition(name, 'needs must be a list of capability names');
  for (const p of spec.provides ?? []) {
    if (!p || typeof p.name !== 'string' || typeof p.detect !== 'function' || typeof p.missing !== 'string') {
      throw pluginErrors.badDefinition(name, 'each of provides must be { name, detect(host), missing: "what the user is told" }');
    }
  }
  const stores = spec.stores ?? [];
  const storeNames = new Set<string>();
  for (const decl of stores) {
    if (!decl || !['chat-doc', 'doc', 'chat-log', 'chat-search-log'].includes((decl as { kind?: string }).kind ?? '')) {
      throw pluginErrors.badDefinition(name, 'each of stores must be made with Store.chatDoc, Store.doc or Store.chatLog (Store.chatSearchLog for a log searched by its words)');
    }
    if (storeNames.has(decl.name)) throw pluginErrors.badDefinition(name, `two stores are named "${decl.name}": give each its own name`);
    storeNames.add(decl.name);
    for (const f of decl.options?.earlierFiles ?? []) {
      if (!f || typeof f.path !== 'string' || !f.path || path.isAbsolute(f.path) || f.path.split('/').includes('..') || typeof f.schema?.name !== 'string' || !Number.isInteger(f.schema.version)) {
        throw pluginErrors.badDefinition(name, `each of the store "${decl.name}"'s earlierFiles must be { path: relative to DATA_DIR, schema: { name, version, schema } }`);
      }
    }
  }
  for (const decl of stores) {
    const refers = decl.kind === 'doc' ? decl.options.refersTo : undefined;
    if (refers && !stores.includes(refers.decl)) throw pluginErrors.badDefinition(name, `the store "${decl.name}" refers to "${refers.decl.name}", which is not in stores: list it too`);
  }
  const section = spec.configSection;
  if (section !== undefined) {
    if (!section || typeof section.key !== 'string' || !/^[A-Za-z][A-Za-z0-9]{0,39}$/.test(section.key) || !section.schema || typeof section.schema !== 'object') {
      throw pluginErrors.badDefinition(name, "configSection must be { key: 'timeZone' (letters and digits), schema: Type.String({ default: '' }) }");
    }
    if (section.check !== undefined && typeof section.check !== 'function') throw pluginErrors.badDefinition(name, 'configSection.check must be a function (value) => problem or undefined');
    const resolved = resolveSection(section as SectionRule, undefined);
    if (resolved.problems.length) throw pluginErrors.badOptionDefault(name, resolved.problems);
  }
  const schema = spec.options ?? Type.Object({});
  if ((schema as { type?: unknown }).type !== 'object') throw pluginErrors.badDefinition(name, 'options must be an object schema: Type.Object({ … })');
  const { problems } = resolveOptions(schema, {});
  if (problems.length) throw pluginErrors.badOptionDefault(name, problems);
  const missing = spec.missing;
  return Object.freeze({
    name,
    description: spec.description,
    needs: spec.needs,
    missing: typeof missing === 'function' ? (names: string[]) => missing(names) : missing,
    optionsSchema: schema,
    enabledByDefault: spec.enabledByDefault,
    answersFreeText: spec.answersFreeText === true,
    order: spec.order,
    provides: spec.provides,
    settings: spec.settings,
    movedToEnv: spec.movedToEnv,
    dataFiles: stores.flatMap((decl) => [dataFileOf(decl, name), ...(decl.options.earlierFiles ?? [])]),
    stores: Object.freeze([...stores]),
    configSection: section,
    setup: spec.setup,
    [DEFINED_PLUGIN_MARK]: CONTRACT_VERSION,
  });
}

/** True for a value made by `definePlugin` of this contract version (by this copy of the API or another). */
export function isPlugin(value: unknown): value is Plugin {
  return pluginBrand(value) === CONTRACT_VERSION && typeof (value as { setup?: unknown }).setup === 'function';
}

/** The contract version a value was made for by `definePlugin`, or undefined when no definePlugin made it. */
export function pluginBrand(value: unknown): unknown {
  return value && typeof value === 'object' ? (value as Record<symbol, unknown>)[DEFINED_PLUGIN_MARK] : undefined;
}

/**
 * Declares a tool with typed arguments: `args` is inferred from the TypeBox `parameters` (the core checks the model's
 * arguments against them before `run`, and tells the model what does not fit instead of running the tool).
 *
 * @example
 * const roll = defineTool({
 *   name: 'roll_dice',
 *   description: 'Roll dice',
 *   parameters: Type.Object({ sides: Type.Integer({ minimum: 2, maximum: 100, default: 6 }) }),
 *   effects: { outsideText: false, acts: 'nothing' },
 *   run: ({ sides }) => String(1 + Math.floor(Math.random() * sides)),
 * });
 */
export function defineTool<P extends TObject>(tool: Tool<P>): Tool<P> {
  return tool;
}
