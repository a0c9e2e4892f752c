import type { HistoryStore, PrivacyParticipant } from '../../core/index.js';
import { changeableBy, isPrivateChatOf, writtenBy } from '../../core/storage.js';
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

  /**
   * These messages in the privacy controls. They are not a store (held in memory until the chat's next voice note
   * takes them as its context), but they are a person's words all the same: `.mydata` lists them, and a delete, a
   * message deleted for everyone, an edit and a chat move reach them before a note could carry them to disk.
   */
  participant(): PrivacyParticipant {
    const change = (chatId: string, matches: (m: ContextMessage) => boolean, next: (m: ContextMessage) => ContextMessage | undefined): number => {
      const list = this.chats.get(chatId);
      if (!list) return 0;
      let changed = 0;
      const kept = list.flatMap((m) => (matches(m) ? (changed++, next(m) ?? []) : [m]));
      this.chats.set(chatId, kept);
      return changed;
    };
    return {
      name: 'voice context held in memory',
      exportFor: async (person) => {
        const out: Record<string, ContextMessage[]> = {};
        for (const [chatId, list] of this.chats) {
          const mine = isPrivateChatOf(chatId, person) ? list : list.filter((m) => writtenBy(m.senderId, person));
          if (mine.length) out[chatId] = mine;
        }
        return out;
      },
      deleteFor: async (person) => {
        let removed = 0;
        for (const chatId of [...this.chats.keys()]) {
          if (isPrivateChatOf(chatId, person)) {
            removed += this.chats.get(chatId)!.length;
            // Its next window must not come back from history either: that history is being deleted too.
            this.chats.set(chatId, []);
          } else removed += change(chatId, (m) => writtenBy(m.senderId, person), () => undefined);
        }
        return removed;
      },
      revoke: async (chatId, messageId, author) => change(chatId, (m) => m.id === messageId && changeableBy(m.senderId, author), () => undefined),
      edit: async (chatId, messageId, text, author) => change(chatId, (m) => m.id === messageId && changeableBy(m.senderId, author), (m) => ({ ...m, text })),
      moveChat: async (from, to) => {
        this.forget(from);
        this.forget(to);
      },
    };
  }
}
