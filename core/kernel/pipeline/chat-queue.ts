import type { Logger } from '../../services/log/logger.js';

/**
 * Runs work per chat strictly in order, different chats in parallel, and knows how much is in flight so a stop can
 * wait for it. A failing job is logged and never blocks the chat's later messages.
 *
 * @example
 * const queue = new ChatQueue(log);
 * void queue.push('chat-1', () => handle(message));
 * await queue.drain(10_000);
 */
export class ChatQueue {
  private readonly tails = new Map<string, Promise<void>>();
  private inFlight = 0;
  private idleWaiters: Array<() => void> = [];
  private draining = false;

  constructor(private readonly log: Logger) {}

  /** True once `drain` was called (the bot is stopping): `push` takes nothing from then on. */
  get isDraining(): boolean {
    return this.draining;
  }

  /** Queues `job` behind the chat's earlier ones. Never rejects; refused (resolved at once) while draining. */
  push(chatId: string, job: () => Promise<void> | void): Promise<void> {
    if (this.draining) {
      this.log.info({ chat: chatId }, 'a message came in while the bot is stopping: not taken');
      return Promise.resolve();
    }
    this.inFlight++;
    const previous = this.tails.get(chatId) ?? Promise.resolve();
    // One promise after the job, whichever way it ends (every message goes through here: no extra `finally` turn).
    const settled = () => {
      if (this.tails.get(chatId) === tail) this.tails.delete(chatId);
      if (--this.inFlight === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    };
    const tail: Promise<void> = previous.then(job).then(settled, (err) => {
      this.log.error({ err, chat: chatId }, 'message handling failed');
      settled();
    });
    this.tails.set(chatId, tail);
    return tail;
  }

  /**
   * Queues housekeeping behind the chat's messages (a delete-for-everyone must find the message it deletes), taken
   * even while draining and not counted as a message in flight. Never rejects: a failure goes to `onError`.
   */
  behind(chatId: string, job: () => Promise<void>, onError: (err: unknown) => void): Promise<void> {
    const previous = this.tails.get(chatId) ?? Promise.resolve();
    const tail = previous.then(job).catch(onError);
    this.tails.set(chatId, tail);
    return tail.finally(() => {
      if (this.tails.get(chatId) === tail) this.tails.delete(chatId);
    });
  }

  /** Resolves when no job is running or waiting. */
  idle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Takes no new jobs and waits at most `timeoutMs` for the queued ones; resolves with how many were unfinished. */
  async drain(timeoutMs: number): Promise<number> {
    this.draining = true;
    let timer: NodeJS.Timeout | undefined;
    const timeUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([this.idle(), timeUp]);
    clearTimeout(timer);
    return this.inFlight;
  }
}
