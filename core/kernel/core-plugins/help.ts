import { definePlugin, type MessageContext } from '../../index.js';

/** The first word of the text (the command as typed), '' for none. */
const firstWord = (text: string): string => text.trim().split(/\s/, 1)[0] ?? '';

/**
 * `.help`: the commands of the active plugins this sender may use, in routing order — only those that work here now.
 * A handler whose capabilities are missing is not offered; one line at the end says what is off and why (for an
 * owner, with the fix).
 */
function helpText(ctx: MessageContext): string {
  const { prefix, botName } = ctx.host.config();
  const lines = [`*${botName}*: here is what I can do.`, ''];
  // Missing capability → the commands it takes away (in order).
  const off = new Map<string, string[]>();
  for (const plugin of ctx.host.plugins()) {
    if (!plugin.active || plugin.name === ctx.host.name || !plugin.mayUse(ctx.message)) continue;
    for (const t of plugin.triggers) {
      const missing = ctx.host.capabilities.missing(t.needs);
      if (missing.length) {
        const name = t.kind === 'command' ? prefix + t.command : t.kind === 'literal' ? t.literal : t.kind === 'media' && t.help ? t.media.join('/') : t.kind === 'predicate' && t.help ? (t.usage ?? `(${plugin.name})`) : undefined;
        if (name) for (const cap of missing) off.set(cap, [...new Set([...(off.get(cap) ?? []), name])]);
        continue;
      }
      // Usage lines are written with the default "." prefix; show them with the configured one.
      if (t.kind === 'command') lines.push(`${t.usage?.replace(/^\./, prefix) ?? prefix + t.command}: ${t.help ?? plugin.description}`);
      else if (t.kind === 'literal') lines.push(`${t.usage ?? t.literal}: ${t.help ?? plugin.description}`);
      else if (t.kind === 'media' && t.help) lines.push(`(${t.media.join('/')}): ${t.help}`);
      else if (t.kind === 'predicate' && t.help) lines.push(`${t.usage ?? `(${plugin.name})`}: ${t.help}`);
    }
  }
  // Free text is answered by whichever plugin declares it does (the core's chat plugin, or one of the owner's): while
  // none is active for this sender, nothing but the commands is answered.
  const freeText = ctx.host.plugins().find((p) => p.answersFreeText && p.active && p.mayUse(ctx.message));
  const by = freeText?.core ? 'the AI' : `${freeText?.name} (${freeText?.description.replace(/\.$/, '').toLowerCase()})`;
  const anythingElse = freeText ? `Anything else is answered by ${by}` + (ctx.message.isGroup ? ' when you mention me or reply to me.' : '.') : 'I answer only these commands here.';
  lines.push(`${prefix}help: this list`, '', anythingElse);
  if (off.size) {
    const why = [...off].map(([cap, names]) => {
      const status = ctx.host.capabilities.status(cap);
      return `${names.join(', ')} (${status.detail}${ctx.isOwner && status.fix ? `; fix: ${status.fix}` : ''})`;
    });
    lines.push('', `Off here: ${why.join('; ')}.`);
  }
  return lines.join('\n');
}

/**
 * The answer to a command no active plugin took: the owner turned its plugin off, or no plugin has it. Undefined
 * for anything else (free text goes on to the fallback).
 */
function unansweredCommand(ctx: MessageContext): string | undefined {
  const prefix = ctx.host.config().prefix;
  // A relayed text (forwarded, a card's name) was not typed here: never a command, answered as content.
  if (ctx.message.relayed) return undefined;
  const word = firstWord(ctx.text);
  if (!word) return undefined;
  const lower = word.toLowerCase();
  const off = ctx.host
    .plugins()
    .find((p) => !p.enabled && p.triggers.some((t) => (t.kind === 'command' && `${prefix}${t.command}`.toLowerCase() === lower) || (t.kind === 'literal' && t.literal.toLowerCase() === lower)));
  if (off) return `${word.slice(0, 40)} is turned off: the owner switched off ${off.name} (${off.description.toLowerCase()}). Try ${prefix}help for what I can do now.`;
  if (word.length > prefix.length && word.startsWith(prefix) && /^[a-z0-9]/i.test(word.slice(prefix.length))) {
    return `Unknown command ${word.slice(0, 40)}. Try ${prefix}help for the list of commands.`;
  }
  return undefined;
}

/**
 * The `help` core plugin: `.help` and `/help` list what the sender may use; a command of a plugin the owner turned
 * off says so, and an unknown command points to `.help`. It is tried after every other plugin (order 1000), and the
 * owner cannot turn it off: it is how people find out what the bot does.
 */
export default definePlugin({
  name: 'help',
  description: 'Lists the commands; says when a command is unknown or its plugin is turned off',
  order: 1000,
  setup: () => ({
    commands: [{ command: 'help', help: 'this list', run: (ctx) => ctx.reply(helpText(ctx)) }],
    literals: [{ literal: '/help', help: 'this list', run: (ctx) => ctx.reply(helpText(ctx)) }],
    predicates: [{ when: (ctx) => unansweredCommand(ctx) !== undefined, run: (ctx) => ctx.reply(unansweredCommand(ctx) ?? '') }],
  }),
});
