import path from 'node:path';
import { JsonFile } from '../../services/store/json-file.js';
import { changeableBy, isPrivateChatOf, writtenBy, type PersonIds, type PrivacyParticipant } from '../../services/store/privacy.js';
import type { DataSchema } from '../../services/store/schemas.js';
import type { QuotedMessage } from '../port/message.js';

/**
 * How long a message deleted for everyone is remembered: as long as the media the bot keeps (30 days), and longer
 * than WhatsApp serves a file through a quote.
 */
export const DELETED_KEPT_MS = 30 * 24 * 60 * 60 * 1000;

/** At most this many deleted messages are remembered (the oldest go first): the file stays small. */
export const DELETED_KEPT = 10_000;

/** One message deleted for everyone: ids only, no words. */
export interface DeletedMessage {
  chat: string;
  id: string;
  /** Who deleted it (their ids), when the delete was honoured for their own messages only; absent when vouched for (the account itself, a group admin, the transport). */
  by?: string[];
  at: number;
}

/** `data/deleted/messages.json`. */
export interface DeletedDocument {
  deleted: DeletedMessage[];
}

const str = { type: 'string' } as const;

export const DELETED_MESSAGES_SCHEMA: DataSchema = {
  name: 'deleted-messages',
  version: 1,
  schema: {
    type: 'object',
    required: ['deleted'],
    properties: {
      deleted: {
        type: 'array',
        maxItems: DELETED_KEPT,
        items: { type: 'object', required: ['chat', 'id', 'at'], properties: { chat: str, id: str, by: { type: 'array', items: str }, at: { type: 'number' } } },
      },
    },
  },
};

/** The file's place under DATA_DIR (for the doctor and the backup manifest). */
export const DELETED_MESSAGES_PATH = 'deleted/messages.json';

/**
 * The messages deleted for everyone, remembered by id (no words) so that a later reply quoting one never brings it
 * back: WhatsApp's quote still carries the old message (and its media key), so without this a plugin could fetch a
 * deleted photo or voice note again through the quote. A quote of a deleted message reaches the plugins with
 * `deleted: true`, no text, and media whose download refuses. Bounded by age and count; in the privacy controls.
 *
 * @example
 * const deleted = new DeletedMessages(dataDir);
 * await deleted.note(chatId, messageId, author);
 * message.quoted = await deleted.mark(chatId, message.quoted);
 */
export class DeletedMessages {
  private readonly file: JsonFile<DeletedDocument>;
  private index: Map<string, DeletedMessage> | undefined;

  constructor(dataDir: string, private readonly now: () => number = Date.now) {
    this.file = new JsonFile(path.join(dataDir, DELETED_MESSAGES_PATH), () => ({ deleted: [] }), { schema: DELETED_MESSAGES_SCHEMA, coalesceMs: 1000 });
  }

  private async loaded(): Promise<Map<string, DeletedMessage>> {
    if (this.index) return this.index;
    const doc = await this.file.get();
    if (!this.index) this.index = new Map(doc.deleted.map((m) => [key(m.chat, m.id), m]));
    return this.index;
  }

  /** Remembers that `messageId` of `chatId` was deleted for everyone (by `author`, or vouched for when undefined). */
  async note(chatId: string, messageId: string, author: PersonIds | undefined): Promise<void> {
    await this.loaded();
    const at = this.now();
    const entry: DeletedMessage = { chat: chatId, id: messageId, ...(author ? { by: [...author] } : {}), at };
    await this.file.update((doc) => {
      const index = this.index!;
      index.delete(key(chatId, messageId));
      index.set(key(chatId, messageId), entry);
      const kept = [...index.values()].filter((m) => m.at >= at - DELETED_KEPT_MS).slice(-DELETED_KEPT);
      if (kept.length !== index.size) this.index = new Map(kept.map((m) => [key(m.chat, m.id), m]));
      doc.deleted = kept;
    });
  }

  /**
   * The quoted message as plugins may see it: unchanged, or — when it was deleted for everyone by someone allowed to
   * (its own sender, an admin, the account) — marked `deleted`, without its words, its media refusing to download.
   */
  async mark(chatId: string, quoted: QuotedMessage): Promise<QuotedMessage> {
    const entry = (await this.loaded()).get(key(chatId, quoted.id));
    if (!entry || entry.at < this.now() - DELETED_KEPT_MS) return quoted;
    if (!changeableBy(quoted.senderId, entry.by)) return quoted;
    const { media } = quoted;
    return {
      id: quoted.id,
      senderId: quoted.senderId,
      text: '',
      fromBot: quoted.fromBot,
      deleted: true,
      ...(media ? { media: { kind: media.kind, mimetype: media.mimetype, download: () => Promise.reject(new Error('the quoted message was deleted for everyone')) } } : {}),
    };
  }

  flush(): Promise<void> {
    return this.file.flush();
  }

  private async removeWhere(drop: (m: DeletedMessage) => boolean): Promise<number> {
    await this.loaded();
    let removed = 0;
    await this.file.update((doc) => {
      const kept = doc.deleted.filter((m) => !drop(m));
      removed = doc.deleted.length - kept.length;
      doc.deleted = kept;
      this.index = new Map(kept.map((m) => [key(m.chat, m.id), m]));
    });
    return removed;
  }

  /** A person's entries: those of their private chat, and the deletes they made. */
  privacyParticipant(): PrivacyParticipant {
    const about = (person: PersonIds) => (m: DeletedMessage) => isPrivateChatOf(m.chat, person) || (m.by ?? []).some((id) => writtenBy(id, person));
    return {
      name: 'messages deleted for everyone',
      exportFor: async (person) => [...(await this.loaded()).values()].filter(about(person)).map(({ chat, id, at }) => ({ chat, id, at })),
      deleteFor: (person) => this.removeWhere(about(person)),
      moveChat: async (from, to) => {
        await this.loaded();
        await this.file.update((doc) => {
          doc.deleted = doc.deleted.map((m) => (m.chat === from ? { ...m, chat: to } : m));
          this.index = new Map(doc.deleted.map((m) => [key(m.chat, m.id), m]));
        });
        await this.file.flush();
      },
    };
  }
}

function key(chatId: string, messageId: string): string {
  return `${chatId}\0${messageId}`;
}
