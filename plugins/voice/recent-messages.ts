import type { HistoryView, PluginStore } from '../../core/index.js';
import { CONTEXT_SIZE, type ContextMessage } from './archive-note.js';
import { VOICE_CONTEXT } from './stores.js';

export { VOICE_CONTEXT } from './stores.js';

/**
 * The last messages of every chat, as the "before" context of the next voice note. A chat that has none kept (its
 * first note, or a chat whose context a delete emptied) starts from its stored history, so its first note still gets
 * context.
 *
 * @example
 * await recent.push(chatId, { id, senderId, at, text });
 * const before = await recent.last(chatId);
 */
export class RecentMessages {
  constructor(private readonly store: PluginStore, private readonly histories?: HistoryView, private readonly size = CONTEXT_SIZE) {}

  /** The last `size` messages of the chat, oldest first. */
  async last(chatId: string): Promise<ContextMessage[]> {
    const kept = (await this.store.chat(chatId).doc(VOICE_CONTEXT).get()).messages;
    return kept.length ? [...kept] : this.fromHistory(chatId);
  }

  async push(chatId: string, message: ContextMessage): Promise<void> {
    const doc = this.store.chat(chatId).doc(VOICE_CONTEXT);
    const start = (await doc.get()).messages.length ? [] : await this.fromHistory(chatId);
    // Read again inside the change: another message of the chat may have been added meanwhile.
    await doc.update((d) => ({ messages: [...(d.messages.length ? d.messages : start), message].slice(-this.size) }));
  }

  private async fromHistory(chatId: string): Promise<ContextMessage[]> {
    const entries = this.histories ? await this.histories.recent(chatId, this.size).catch(() => []) : [];
    return entries.map((e, i) => ({ id: e.id ?? `history-${i}`, senderId: e.role === 'assistant' ? 'bot' : (e.senderId ?? ''), ...(e.senderName ? { senderName: e.senderName } : {}), at: e.at, text: e.text }));
  }
}
