import type { Plugin, PluginDefinition, Trigger } from './types.js';

/** Thrown for a plugin definition that cannot work; the message says which plugin and what to change. */
export class PluginDefinitionError extends Error {}

const NAME = /^[a-z][a-z0-9-]{0,39}$/;

function checkTrigger(name: string, trigger: Trigger, index: number): void {
  const where = `plugin "${name}", triggers[${index}]`;
  if (!trigger || typeof trigger !== 'object') throw new PluginDefinitionError(`${where}: a trigger must be an object such as { command: 'ping' }`);
  if ('command' in trigger) {
    if (!/^[a-z0-9][a-z0-9_-]*$/i.test(trigger.command)) {
      throw new PluginDefinitionError(`${where}: command "${trigger.command}" must be a single word without the prefix (write 'ping', not '.ping')`);
    }
  } else if ('literal' in trigger) {
    if (!/^\S+$/.test(trigger.literal)) throw new PluginDefinitionError(`${where}: literal "${trigger.literal}" must be one word, such as '/ws'`);
  } else if ('media' in trigger) {
    const kinds = Array.isArray(trigger.media) ? trigger.media : [trigger.media];
    const valid = ['voice', 'audio', 'image', 'video', 'document', 'sticker'];
    const bad = kinds.find((k) => !valid.includes(k));
    if (bad) throw new PluginDefinitionError(`${where}: media "${bad}" is not one of ${valid.join(', ')}`);
  } else if ('pattern' in trigger) {
    if (!(trigger.pattern instanceof RegExp)) throw new PluginDefinitionError(`${where}: pattern must be a RegExp`);
  } else if ('when' in trigger) {
    if (typeof trigger.when !== 'function') throw new PluginDefinitionError(`${where}: when must be a function (ctx) => boolean`);
  } else if (!('every' in trigger)) {
    throw new PluginDefinitionError(`${where}: unknown trigger; use command, literal, media, pattern, when or every`);
  }
}

/**
 * Declares a plugin. The default export of `plugins/<name>/index.ts` (or of a plugin package) must be the result.
 * The definition is checked here, so a mistake is reported when the plugin loads, not when a user hits it.
 *
 * @example
 * export default definePlugin({
 *   name: 'echo',
 *   description: 'Repeats what you say',
 *   triggers: [{ command: 'echo', help: 'repeat a text', usage: '.echo <text>' }],
 *   handle: (ctx) => ctx.reply(ctx.command?.args || 'Say something after .echo'),
 * });
 */
export function definePlugin(definition: PluginDefinition): Plugin {
  if (!definition || typeof definition !== 'object') throw new PluginDefinitionError('definePlugin needs an object: definePlugin({ name, description, ... })');
  const { name } = definition;
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new PluginDefinitionError(`plugin name "${String(name)}" is invalid: use lowercase letters, digits and dashes, starting with a letter`);
  }
  if (typeof definition.description !== 'string' || !definition.description.trim()) {
    throw new PluginDefinitionError(`plugin "${name}" has no description: it is shown in .help and in the dashboard`);
  }
  (definition.triggers ?? []).forEach((t, i) => checkTrigger(name, t, i));
  if (definition.triggers?.length && typeof definition.handle !== 'function') {
    throw new PluginDefinitionError(`plugin "${name}" declares triggers but no handle(ctx) function to run when they match`);
  }
  for (const need of definition.needs ?? []) {
    if (typeof need !== 'string' || !need) throw new PluginDefinitionError(`plugin "${name}": needs must be a list of capability names`);
  }
  return Object.freeze({ ...definition, __plugin: true as const });
}

/** True for a value made by definePlugin. */
export function isPlugin(value: unknown): value is Plugin {
  return Boolean(value && typeof value === 'object' && (value as { __plugin?: unknown }).__plugin === true);
}
