import type { IncomingMessage } from '../port/message.js';

/** Messages one turn carries in full; the earlier ones of a longer run are summarised in one line. */
export const MAX_TURN_MESSAGES = 20;

/** One sender's run of free-text messages in one chat, answered as one turn. */
interface Burst {
  senderId: string;
  messages: IncomingMessage[];
  timer: NodeJS.Timeout | undefined;
  /** Queued: its turn is waiting behind the chat's earlier work and still takes the sender's new messages. */
  queued: boolean;
  /** Closed: its turn started, or another message came after it; it takes nothing more. */
  closed: boolean;
  done: Promise<void>;
  settle: () => void;
}

export interface BurstDeps {
  /** The window (ms): a sender's next message within it joins the turn; 0 lets every message go on its own. */
  windowMs: () => number;
  /** Whether a message may wait for more (free text, not a command, not the owner's own). */
  joinable: (message: IncomingMessage) => boolean;
  /** Queues the handling of a message behind the chat's earlier work; resolves when it was handled. */
  queue: (chatId: string, handle: () => IncomingMessage) => Promise<void>;
  /** Told which messages one turn carried (kept on disk: burst-turns.ts), so a later delete or edit finds the turn. */
  merged: (chatId: string, messages: IncomingMessage[], turnId: string) => void;
}

/**
 * Makes one turn of a sender's burst: free-text messages and photos of one sender in one chat, each within the window of the
 * one before, are handled as one message (texts in order, one per line). The turn waits in the chat's queue like any
 * message, and until it starts it takes the sender's new messages: what they send while the bot is answering their
 * last turn becomes one follow-up turn. Anything else in the chat (a command, media, another sender) closes the burst
 * first, so the order of a chat's messages is kept. Commands are never held back.
 *
 * @example
 * const bursts = new Bursts({ windowMs: () => 1500, joinable: isFreeText, queue: (chat, take) => queue.push(chat, () => handle(take())) });
 * void bursts.offer(message);
 */
export class Bursts {
  private readonly open = new Map<string, Burst>();

  constructor(private readonly deps: BurstDeps) {}

  /** Takes one inbound message; resolves once the turn that carries it was handled. */
  offer(message: IncomingMessage): Promise<void> {
    const chatId = message.chatId;
    const current = this.open.get(chatId);
    const window = this.deps.windowMs();
    if (window > 0 && this.deps.joinable(message)) {
      if (current && !current.closed && current.senderId === message.senderId) {
        current.messages.push(message);
        if (!current.queued) this.arm(chatId, current, window);
        return current.done;
      }
      if (current) this.close(chatId, current);
      return this.begin(chatId, message, window);
    }
    if (current) this.close(chatId, current);
    return this.deps.queue(chatId, () => message);
  }

  /** Queues the chat's burst still waiting for its window now (its chat moves to another id: handled before the move). */
  flushChat(chatId: string): void {
    const burst = this.open.get(chatId);
    if (burst) this.close(chatId, burst);
  }

  /** Queues every burst still waiting for its window (a stop, the end of the console's input). */
  flushAll(): void {
    for (const [chatId, burst] of this.open) this.close(chatId, burst);
  }

  /** Resolves when every burst that exists now has been handled. */
  async settled(): Promise<void> {
    while (this.open.size) await Promise.all([...this.open.values()].map((b) => b.done));
  }

  private begin(chatId: string, message: IncomingMessage, window: number): Promise<void> {
    let settle!: () => void;
    const done = new Promise<void>((resolve) => (settle = resolve));
    const burst: Burst = { senderId: message.senderId, messages: [message], timer: undefined, queued: false, closed: false, done, settle };
    this.open.set(chatId, burst);
    this.arm(chatId, burst, window);
    return done;
  }

  private arm(chatId: string, burst: Burst, window: number): void {
    clearTimeout(burst.timer);
    burst.timer = setTimeout(() => this.enqueue(chatId, burst), window);
  }

  /** Another message came: the burst takes nothing more and goes in the queue now, before that message. */
  private close(chatId: string, burst: Burst): void {
    burst.closed = true;
    if (this.open.get(chatId) === burst) this.open.delete(chatId);
    if (!burst.queued) this.enqueue(chatId, burst);
  }

  private enqueue(chatId: string, burst: Burst): void {
    clearTimeout(burst.timer);
    burst.queued = true;
    void this.deps
      .queue(chatId, () => {
        // The turn starts: what it carries is fixed now.
        burst.closed = true;
        if (this.open.get(chatId) === burst) this.open.delete(chatId);
        const turn = oneTurn(burst.messages);
        if (burst.messages.length > 1) this.deps.merged(chatId, burst.messages, turn.id);
        return turn;
      })
      .finally(() => {
        if (this.open.get(chatId) === burst) this.open.delete(chatId);
        burst.settle();
      });
  }
}

/**
 * The messages of a burst as one message: the texts in order, one per line (the newest MAX_TURN_MESSAGES in full,
 * the earlier ones summarised in a first line), every mention, the first quote, every photo (`media` the first,
 * `album` all of them when more than one, each with its message's `messageId`); id, time and the rest are the last message's (an answer quotes the newest).
 */
export function oneTurn(messages: IncomingMessage[]): IncomingMessage {
  if (messages.length === 1) return messages[0];
  const last = messages[messages.length - 1];
  const full = messages.slice(-MAX_TURN_MESSAGES);
  const over = messages.slice(0, messages.length - full.length);
  const lines = full.map((m) => m.text).filter((text, i) => text || !full[i].media);
  if (over.length) {
    const gist = over.map((m) => m.text.replace(/\s+/g, ' ').trim() || '[photo]').join(' / ');
    lines.unshift(`[${over.length} earlier message${over.length === 1 ? '' : 's'}: ${gist.length > 300 ? `${gist.slice(0, 299)}…` : gist}]`);
  }
  const mentions = [...new Set(messages.flatMap((m) => m.mentions ?? []))];
  const quoted = messages.find((m) => m.quoted)?.quoted;
  const merged: IncomingMessage = { ...last, text: lines.join('\n'), mentions, burstIds: messages.slice(0, -1).map((m) => m.id) };
  if (quoted) merged.quoted = quoted;
  // Photos sent together (an album, or one after the other): the turn carries them all, the first as its media, each
  // with the id of the message that carried it (a later reply quotes that id, not the turn's).
  const photos = messages.flatMap((m) => (m.media ? [m.id === last.id ? m.media : { ...m.media, messageId: m.id }] : []));
  delete merged.media;
  delete merged.album;
  if (photos.length) merged.media = photos[0];
  if (photos.length > 1) merged.album = photos;
  return merged;
}
