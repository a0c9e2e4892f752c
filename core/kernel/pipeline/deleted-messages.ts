import { Type } from '#typebox';
import type { BoundedRecord } from '../../services/store/bounded-record.js';
import { changeableBy } from '../../services/store/privacy.js';
import type { DataSchema } from '../../services/store/schemas.js';
import { dataSchemaOf, Store } from '../../services/store/store-declarations.js';
import type { PersonIds } from '../port/privacy-participant.js';
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

/** Where earlier versions kept it, under DATA_DIR (taken in once, then kept aside under `data/migrated/`). */
export const DELETED_MESSAGES_PATH = 'deleted/messages.json';

/**
 * The record as the core declares it (`core` namespace of the store database): a person's `.mydata` lists the deletes
 * of their private chat and those they made (without who deleted), and deletes them; a chat's entries move with it.
 */
export const DELETED_MESSAGES_STORE = Store.chatRecord('deleted', Type.Object({ chat: Type.String(), id: Type.String(), by: Type.Optional(Type.Array(Type.String())), at: Type.Number() }), {
  path: DELETED_MESSAGES_PATH,
  title: 'deleted-messages',
  section: 'messages deleted for everyone',
  exportAs: '',
  chatOf: (m) => m.chat,
  withChat: (m, chat) => ({ ...m, chat }),
  keepMs: DELETED_KEPT_MS,
  keepCount: DELETED_KEPT,
  people: { author: (m) => m.by },
  exported: ({ chat, id, at }) => ({ chat, id, at }),
});

/** The earlier file's schema (the backup manifest names it). */
export const DELETED_MESSAGES_SCHEMA: DataSchema = dataSchemaOf(DELETED_MESSAGES_STORE, 'core');

/**
 * The messages deleted for everyone, remembered by id (no words) so that a later reply quoting one never brings it
 * back: WhatsApp's quote still carries the old message (and its media key), so without this a plugin could fetch a
 * deleted photo or voice note again through the quote. A quote of a deleted message reaches the plugins with
 * `deleted: true`, no text, and media whose download refuses. Bounded by age and count; in the privacy controls.
 *
 * @example
 * const deleted = new DeletedMessages(coreStores(dataDir, { histories, memories }).record(DELETED_MESSAGES_STORE));
 * await deleted.note(chatId, messageId, author);
 * message.quoted = await deleted.mark(chatId, message.quoted);
 */
export class DeletedMessages {
  /** `record`: the core's stores' `DELETED_MESSAGES_STORE` (core-stores.ts), whose declaration puts it in the privacy controls. */
  constructor(private readonly record: BoundedRecord<DeletedMessage>, private readonly now: () => number = Date.now) {}

  /** Remembers that `messageId` of `chatId` was deleted for everyone (by `author`, or vouched for when undefined). */
  note(chatId: string, messageId: string, author: PersonIds | undefined): Promise<void> {
    return this.record.add([{ chat: chatId, id: messageId, ...(author ? { by: [...author] } : {}), at: this.now() }]);
  }

  /**
   * The quoted message as plugins may see it: unchanged, or — when it was deleted for everyone by someone allowed to
   * (its own sender, an admin, the account) — marked `deleted`, without its words, its media refusing to download.
   */
  async mark(chatId: string, quoted: QuotedMessage): Promise<QuotedMessage> {
    const entry = await this.record.get(chatId, quoted.id);
    if (!entry || !changeableBy(quoted.senderId, entry.by)) return quoted;
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
    return this.record.flush();
  }

}
