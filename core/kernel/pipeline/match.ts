import type { CommandMatch, Trigger } from '../plugin/handlers.js';
import type { MessageContext } from '../plugin/message-context.js';

/** Splits `.cmd rest` into the command word and its arguments, when the text starts with a word. */
export function firstWord(text: string): { word: string; args: string } {
  const trimmed = text.trim();
  const space = trimmed.search(/\s/);
  return space === -1 ? { word: trimmed, args: '' } : { word: trimmed.slice(0, space), args: trimmed.slice(space).trim() };
}

export interface TriggerHit {
  command?: CommandMatch;
}

/** The first word of a message, split once and shared by every trigger checked against it. */
export interface FirstWord {
  word: string;
  args: string;
  /** `word` in lower case: commands and literals compare case-insensitively. */
  lower: string;
}

/** The message's first word, for `matchTrigger` (compute it once per message, not once per trigger). */
export function firstWordOf(text: string): FirstWord {
  const { word, args } = firstWord(text);
  return { word, args, lower: word.toLowerCase() };
}

/**
 * Whether a trigger matches a message. Commands compare case-insensitively after the configured prefix.
 * `first` is the message's first word (see `firstWordOf`), made once for all the triggers a message is checked against.
 */
export function matchTrigger(trigger: Trigger, ctx: MessageContext, prefix: string, first: FirstWord = firstWordOf(ctx.text)): TriggerHit | undefined {
  if ('command' in trigger) {
    const { word, args } = first;
    if (word.length > prefix.length && word.startsWith(prefix) && word.slice(prefix.length).toLowerCase() === trigger.command.toLowerCase()) {
      return { command: { word, args } };
    }
    return undefined;
  }
  if ('literal' in trigger) {
    const { word, args, lower } = first;
    return lower === trigger.literal.toLowerCase() ? { command: { word, args } } : undefined;
  }
  if ('media' in trigger) {
    const kind = ctx.message.media?.kind;
    if (!kind) return undefined;
    const kinds = Array.isArray(trigger.media) ? trigger.media : [trigger.media];
    return kinds.includes(kind) ? {} : undefined;
  }
  if ('when' in trigger) return trigger.when(ctx) ? {} : undefined;
  return undefined;
}

/** A control character other than tab, line feed and carriage return. */
// eslint-disable-next-line no-control-regex
const CONTROL_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]/;

/** True for text that is mostly control characters (a binary payload pasted as text). */
export function looksBinary(text: string): boolean {
  // Nearly every message has no control character at all: one regex scan says so without walking the text by hand.
  if (!CONTROL_CHAR.test(text)) return false;
  if (text.includes('\u0000')) return true;
  let control = 0;
  for (const ch of text) {
    const c = ch.charCodeAt(0);
    if (c < 32 && c !== 9 && c !== 10 && c !== 13) control++;
  }
  return text.length > 0 && control / text.length > 0.1;
}
