import type { BotConfig } from '../../services/config/schema.js';
import type { Middleware } from './compose.js';
import { firstWord } from './match.js';
import type { PluginRegistry, PluginState } from '../plugin/registry.js';
import type { BotContext } from '../plugin/types.js';

/**
 * What the core answers itself once no plugin claimed a message: `.help`, a command of a plugin the owner turned
 * off, and an unknown command. Anything else goes on to `next` (the main model).
 */
export function coreCommands(registry: PluginRegistry, config: () => BotConfig): Middleware<BotContext> {
  // Not async: free text handed on to the model costs no promise of its own here.
  return (ctx, next) => {
    const prefix = config().prefix;
    const { word } = firstWord(ctx.text);
    const lower = word.toLowerCase();
    if (lower === `${prefix}help` || lower === '/help') return replied(ctx.reply(helpText(registry, config(), ctx)));
    const off = disabledPluginFor(registry, lower, prefix);
    if (off) {
      return replied(ctx.reply(`${word.slice(0, 40)} is turned off: the owner switched off ${off.plugin.name} (${off.plugin.description.toLowerCase()}). Try ${prefix}help for what I can do now.`));
    }
    if (word.length > prefix.length && word.startsWith(prefix) && /^[a-z0-9]/i.test(word.slice(prefix.length))) {
      return replied(ctx.reply(`Unknown command ${word.slice(0, 40)}. Try ${prefix}help for the list of commands.`));
    }
    return next();
  };
}

/** Waits for a reply to be sent, resolving to nothing (a middleware's result). */
const replied = (sent: Promise<unknown>): Promise<void> => sent.then(() => undefined);

/** A plugin turned off in config.json whose command or literal is `word` (lower case). */
function disabledPluginFor(registry: PluginRegistry, word: string, prefix: string): PluginState | undefined {
  if (!word) return undefined;
  return registry.states.find(
    (s) =>
      !s.enabled &&
      (s.instance?.handlers ?? []).some(({ trigger: t }) => ('command' in t && `${prefix}${t.command}`.toLowerCase() === word) || ('literal' in t && t.literal.toLowerCase() === word)),
  );
}

/** `.help`: the commands of the enabled plugins this sender may use. */
export function helpText(registry: PluginRegistry, config: BotConfig, ctx: BotContext): string {
  const prefix = config.prefix;
  const lines = [`*${config.botName}*: here is what I can do.`, ''];
  for (const state of registry.active()) {
    if (!registry.mayUse(state.plugin.name, ctx.message)) continue;
    for (const { trigger: t } of state.instance!.handlers) {
      // Usage lines are written with the default "." prefix; show them with the configured one.
      if ('command' in t) lines.push(`${t.usage?.replace(/^\./, prefix) ?? prefix + t.command}: ${t.help ?? state.plugin.description}`);
      else if ('literal' in t) lines.push(`${t.usage ?? t.literal}: ${t.help ?? state.plugin.description}`);
      else if ('media' in t && t.help) lines.push(`(${[t.media].flat().join('/')}): ${t.help}`);
      else if ('when' in t && t.help) lines.push(`${t.usage ?? `(${state.plugin.name})`}: ${t.help}`);
    }
  }
  lines.push(`${prefix}help: this list`, '', 'Anything else is answered by the AI' + (ctx.message.isGroup ? ' when you mention me or reply to me.' : '.'));
  return lines.join('\n');
}
