import type { AppendOptions, HistoryEntry } from '../../services/store/history.js';
import type { MemoryFact } from '../../services/store/memory.js';

/** The chat's history as a plugin sees it: bound to the current chat. */
export interface ChatHistoryView {
  recent(limit?: number): Promise<HistoryEntry[]>;
  /** Adds an entry (see `HistoryStore.append`; `heldForNextWrite` lets it share the next write, a question its answer's). */
  append(entry: HistoryEntry, options?: AppendOptions): Promise<void>;
  /**
   * Records the message being handled in the chat's history, as `text` (a voice note's transcript, say) — once:
   * the core then does not record it again (in a group, a message not addressed to the bot is kept as context).
   *
   * @example
   * await ctx.history.recordIncoming(transcript, { media: 'voice' });
   */
  recordIncoming(text: string, extra?: { media?: string }): Promise<void>;
  /** True once the message being handled is in the history (by `recordIncoming`). */
  incomingRecorded(): boolean;
  /**
   * True when the message being handled was in the history and a delete (its sender's `.mydata delete`, a delete for
   * everyone) or an edit took it out since: its answer is then kept nowhere, since it may repeat the removed words.
   */
  incomingRemoved(): boolean;
}

/** The chat's memory as a plugin sees it: bound to the current chat. */
export interface ChatMemoryView {
  facts(): Promise<MemoryFact[]>;
  remember(text: string): Promise<void>;
}
