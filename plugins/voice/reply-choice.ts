import type { StoredDoc } from '../../core/index.js';

export { VOICE_REPLY_CHOICES } from './stores.js';

/**
 * Which chats chose voice replies on or off with `.voice`; a chat that never chose follows the plugin option.
 *
 * @example
 * const choices = new VoiceReplyChoices(host.store.doc(VOICE_REPLY_CHOICES));
 * await choices.set(chatId, false);
 * await choices.wants(chatId, options.replies.enabled) // false
 */
export class VoiceReplyChoices {
  constructor(private readonly doc: StoredDoc<{ chats: Record<string, boolean> }>) {}

  /** The chat's own choice, or undefined when it never chose. */
  async choice(chatId: string): Promise<boolean | undefined> {
    return (await this.doc.get()).chats[chatId];
  }

  /** Whether this chat gets voice replies: its own choice wins over the default. */
  async wants(chatId: string, byDefault: boolean): Promise<boolean> {
    return (await this.choice(chatId)) ?? byDefault;
  }

  async set(chatId: string, on: boolean): Promise<void> {
    await this.doc.update((doc) => {
      doc.chats[chatId] = on;
    });
  }
}
