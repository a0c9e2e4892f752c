import { EventEmitter } from 'node:events';
import type { BotEventName } from '../../services/config/schema.js';

/*
 * What the bot tells the automation around it (outbound event webhooks): a message received, a message answered,
 * the link to WhatsApp changing state, an action held for the owner's approval. Emitted synchronously by the
 * message path and the guard, heard by listeners that must return at once (the webhooks only queue): nothing here
 * ever slows or fails a turn.
 */

export type { BotEventName };

/** One event: its name, when it happened and what it is about (plain JSON). */
export interface BotEvent {
  event: BotEventName;
  at: number;
  data: Record<string, unknown>;
}

/** The bot's events (see the module). A listener's throw is logged by the caller's `onError`, never passed on. */
export class BotEvents {
  private readonly emitter = new EventEmitter();

  constructor(private readonly onError: (err: unknown) => void = () => undefined) {
    this.emitter.setMaxListeners(0);
  }

  emit(event: BotEventName, data: Record<string, unknown>, at = Date.now()): void {
    for (const listener of this.emitter.listeners('event') as Array<(e: BotEvent) => void>) {
      try {
        listener({ event, at, data });
      } catch (err) {
        this.onError(err);
      }
    }
  }

  /** Hears every event; returns the function that stops it. */
  on(listener: (event: BotEvent) => void): () => void {
    this.emitter.on('event', listener);
    return () => void this.emitter.off('event', listener);
  }
}
