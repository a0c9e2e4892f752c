import { JsonFile, type DataSchema } from '../../core/index.js';

/** `data/voice_replies.json`: each chat's own choice of `.voice on|off`. */
export const VOICE_REPLY_CHOICES_SCHEMA: DataSchema = {
  name: 'voice reply choices',
  version: 1,
  schema: { type: 'object', required: ['chats'], properties: { chats: { type: 'object', additionalProperties: { type: 'boolean' } } } },
};

interface ChoicesDoc {
  chats: Record<string, boolean>;
}

/**
 * Which chats chose voice replies on or off with `.voice`; a chat that never chose follows the plugin option.
 *
 * @example
 * await choices.set(chatId, false);
 * await choices.wants(chatId, options.replies.enabled) // false
 */
export class VoiceReplyChoices {
  private readonly doc: JsonFile<ChoicesDoc>;

  constructor(file: string) {
    this.doc = new JsonFile<ChoicesDoc>(file, () => ({ chats: {} }), { schema: VOICE_REPLY_CHOICES_SCHEMA });
  }

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

  /**
   * The chat is known as `to` from now on (a private chat moved from its LID to its phone id): its choice goes there,
   * unless `to` chose already (the newer id's own choice wins); `from` keeps nothing. Resolves once on disk.
   */
  async moveChat(from: string, to: string): Promise<void> {
    if ((await this.choice(from)) === undefined) return;
    await this.doc.update((doc) => {
      doc.chats[to] ??= doc.chats[from];
      delete doc.chats[from];
    });
    await this.doc.flush();
  }

  flush(): Promise<void> {
    return this.doc.flush();
  }
}
