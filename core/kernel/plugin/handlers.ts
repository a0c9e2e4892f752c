import type { IncomingMedia, MediaKind } from '../port/message.js';
import type { Awaitable } from './awaitable.js';
import type { MessageContext } from './message-context.js';

/*
 * A plugin's message handlers: what each trigger (a command, a fixed word, media, a predicate) gets and declares, and
 * the core's routing shape of them (`Trigger`).
 */

/** The command a message invoked, when a command or literal trigger matched. */
export interface CommandMatch {
  /** The command as typed, e.g. `.ping` or `/ws`. */
  word: string;
  /** The rest of the text after the command word, trimmed. */
  args: string;
}

/** A command or literal handler's context: the command word as typed and its arguments are always there. */
export interface CommandContext<O = unknown> extends MessageContext<O> {
  readonly command: CommandMatch;
  /** The rest of the line after the command word, trimmed ('' when nothing follows). */
  readonly args: string;
}

/** A media handler's context: the media the trigger matched is always there. */
export interface MediaContext<O = unknown> extends MessageContext<O> {
  readonly media: IncomingMedia;
}

/**
 * What every handler may declare besides its trigger: help lines, and the capabilities it needs on top of the
 * plugin's own `needs` (the handler is not run while one is missing; `missing` is said instead).
 */
export interface HandlerBase {
  help?: string;
  /** Capabilities this handler needs besides the plugin's (e.g. `audio` for the one handler that transcribes). */
  needs?: string[];
  /** The reply when this handler matches but one of its needs is missing. Default: the plugin's `missing`. */
  missing?: string | ((missing: string[]) => string);
}

/** `.roll` with the configured prefix; `args` holds the rest of the line. */
export interface CommandHandler<O = unknown> extends HandlerBase {
  command: string;
  /** Shown in `.help`, written with the default "." prefix (it is shown with the configured one). */
  usage?: string;
  run(ctx: CommandContext<O>): Awaitable<unknown>;
}
/** A fixed first word whatever the prefix, such as `/ws`. */
export interface LiteralHandler<O = unknown> extends HandlerBase {
  literal: string;
  usage?: string;
  run(ctx: CommandContext<O>): Awaitable<unknown>;
}
/** A message carrying media of one of these kinds. */
export interface MediaHandler<O = unknown> extends HandlerBase {
  media: MediaKind | MediaKind[];
  run(ctx: MediaContext<O>): Awaitable<unknown>;
}
/**
 * An observer that needs capabilities besides the plugin's: the core does not run it while one is missing (checked at
 * every message, so a capability lost at run time stops it and a recovered one starts it again), and the start log
 * names it with `missing`, the sentence saying what is off meanwhile.
 *
 * @example
 * observers: [{ needs: ['audio'], missing: 'voice notes are not transcribed or archived', run: (ctx) => archive(ctx) }]
 */
export interface ObserverHandler<O = unknown> {
  needs?: string[];
  /** What is off while a need is missing, for the start log (e.g. 'voice notes are not archived'). */
  missing?: string;
  run(ctx: MessageContext<O>): Awaitable<unknown>;
}

/** Any predicate (e.g. "this user has a workspace open"); `usage` puts it in `.help` (e.g. `usage: '(photo)'`). */
export interface PredicateHandler<O = unknown> extends HandlerBase {
  when(ctx: MessageContext<O>): boolean;
  usage?: string;
  run(ctx: MessageContext<O>): Awaitable<unknown>;
}

/**
 * What one handler of a running plugin reacts to (the core's routing shape of the handlers a plugin offers).
 */
export type Trigger =
  | { command: string; help?: string; usage?: string }
  | { literal: string; help?: string; usage?: string }
  | { media: MediaKind | MediaKind[]; help?: string }
  | { when: (ctx: MessageContext) => boolean; help?: string; usage?: string };
