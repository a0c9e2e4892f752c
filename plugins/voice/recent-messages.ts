import type { HistoryStore } from '../../core/index.js';
import { CONTEXT_SIZE, type ContextMessage } from './archive.js';

/**
 * The last few messages of every chat, as the "before" context of the next voice note. Kept in memory; after a
 * restart a chat's first window comes from its stored history, so the first note still gets context.
 *
 * @example
 * recent.push(chatId, { id, senderId, at, text });
 * const before = await recent.last(chatId);
 */
export class RecentMessages {
  private readonly chats = new Map<string, ContextMessage[]>();

  constructor(private readonly histories?: HistoryStore, private readonly size = CONTEXT_SIZE) {}

  /** The last `size` messages of the chat, oldest first. */
  async last(chatId: string): Promise<ContextMessage[]> {
    let list = this.chats.get(chatId);
    if (!list) {
      const entries = this.histories ? await this.histories.recent(chatId, this.size).catch(() => []) : [];
      list = entries.map((e, i) => ({ id: e.id ?? `history-${i}`, senderId: e.role === 'assistant' ? 'bot' : (e.senderId ?? ''), ...(e.senderName ? { senderName: e.senderName } : {}), at: e.at, text: e.text }));
      this.chats.set(chatId, list);
    }
    return [...list];
  }

  /** Forgets what is kept of a chat (it moved to another id): its next window comes from its stored history again. */
  forget(chatId: string): void {
    this.chats.delete(chatId);
  }

  async push(chatId: string, message: ContextMessage): Promise<void> {
    const list = await this.last(chatId);
    list.push(message);
    this.chats.set(chatId, list.slice(-this.size));
  }
}
