import type { IncomingMedia } from '../port/message.js';
import type { CommandContext, CommandMatch, MediaContext } from './handlers.js';
import type { MessageContext } from './message-context.js';

/**
 * A plugin's view of a message's context with what its trigger matched on top (the command and its arguments, the
 * media). Getters onto the view, not `Object.create(view, …)`: V8 turns every object used as a prototype into a
 * prototype map, a cost paid again for every message's view, and a property descriptor map per message besides
 * (together ~4 % of a `.ping`'s CPU).
 */
class NarrowedContext implements MessageContext {
  // Private: a spread of the context (`{ ...ctx }`) gives the trigger's fields only, as before.
  readonly #base: MessageContext;
  constructor(base: MessageContext) {
    this.#base = base;
  }
  get message() {
    return this.#base.message;
  }
  get text() {
    return this.#base.text;
  }
  get chatId() {
    return this.#base.chatId;
  }
  get senderId() {
    return this.#base.senderId;
  }
  get addressed() {
    return this.#base.addressed;
  }
  get isOwner() {
    return this.#base.isOwner;
  }
  get reply() {
    return this.#base.reply;
  }
  get react() {
    return this.#base.react;
  }
  get sendMedia() {
    return this.#base.sendMedia;
  }
  get sendPoll() {
    return this.#base.sendPoll;
  }
  get sendLocation() {
    return this.#base.sendLocation;
  }
  get sendContact() {
    return this.#base.sendContact;
  }
  get edit() {
    return this.#base.edit;
  }
  get typing() {
    return this.#base.typing;
  }
  get progress() {
    return this.#base.progress;
  }
  get replyIfQuotedDeleted() {
    return this.#base.replyIfQuotedDeleted;
  }
  get history() {
    return this.#base.history;
  }
  get memory() {
    return this.#base.memory;
  }
  get ai() {
    return this.#base.ai;
  }
  get host() {
    return this.#base.host;
  }
  get log() {
    return this.#base.log;
  }
  get state() {
    return this.#base.state;
  }
}

/** A command or literal handler's context: `command` and `args` its own (enumerable) fields. */
class CommandNarrowed extends NarrowedContext implements CommandContext {
  readonly args: string;
  constructor(
    base: MessageContext,
    readonly command: CommandMatch,
  ) {
    super(base);
    this.args = command?.args ?? '';
  }
}

/** A media handler's context: `media` its own (enumerable) field. */
class MediaNarrowed extends NarrowedContext implements MediaContext {
  constructor(
    base: MessageContext,
    readonly media: IncomingMedia,
  ) {
    super(base);
  }
}

/** `ctx` with the command its trigger matched (`args`: the rest of the line, trimmed). */
export function withCommand(ctx: MessageContext, command: CommandMatch): CommandContext {
  return new CommandNarrowed(ctx, command);
}

/** `ctx` with the media its trigger matched. */
export function withMedia(ctx: MessageContext, media: IncomingMedia): MediaContext {
  return new MediaNarrowed(ctx, media);
}
