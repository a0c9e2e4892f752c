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

/** One listener, and the events it hears (every one when it does not say). */
interface Listener {
  listener: (event: BotEvent) => void;
  hears?: (event: BotEventName) => boolean;
}

/** The bot's events (see the module). A listener's throw is logged by the caller's `onError`, never passed on. */
export class BotEvents {
  /** Replaced, never changed in place: an emit goes on over the list it started with. */
  private listeners: readonly Listener[] = [];

  constructor(private readonly onError: (err: unknown) => void = () => undefined) {}

  /**
   * Whether `event` would reach a listener now. The message path asks before it builds an event's data: with no
   * event webhook configured (the usual case) nothing is made for each message.
   */
  heard(event: BotEventName): boolean {
    for (const l of this.listeners) if (!l.hears || l.hears(event)) return true;
    return false;
  }

  emit(event: BotEventName, data: Record<string, unknown>, at = Date.now()): void {
    for (const { listener, hears } of this.listeners) {
      if (hears && !hears(event)) continue;
      try {
        listener({ event, at, data });
      } catch (err) {
        this.onError(err);
      }
    }
  }

  /** Hears every event (or those `hears` says yes to, asked at each one); returns the function that stops it. */
  on(listener: (event: BotEvent) => void, hears?: (event: BotEventName) => boolean): () => void {
    const entry: Listener = hears ? { listener, hears } : { listener };
    this.listeners = [...this.listeners, entry];
    return () => void (this.listeners = this.listeners.filter((l) => l !== entry));
  }
}
