import { Store, Type } from '../../core/index.js';

/** A chat the owner watches read-only: its name as the owner named it, who chose it and when. */
const WatchedChat = Type.Object({ name: Type.String(), by: Type.String(), at: Type.Number() });

/**
 * The watched chats, by chat id. A private chat's entry is about its person: it is in their `.mydata` and goes with
 * their delete (the chat is then no longer watched).
 */
export const WATCHED_CHATS = Store.doc('watched', Type.Object({ chats: Type.Record(Type.String(), WatchedChat) }), () => ({ chats: {} }), {
  title: 'watched chats',
  people: { byId: (doc) => doc.chats },
});

/** One message of a watched chat as kept: who wrote it, when, its words (or what its media was). */
export const KeptMessage = Type.Object({
  id: Type.Optional(Type.String()),
  senderId: Type.String(),
  senderName: Type.Optional(Type.String()),
  text: Type.String(),
  at: Type.Number({ minimum: 0 }),
  media: Type.Optional(Type.String()),
  /** Written by the account's owner (typed on the phone). */
  own: Type.Optional(Type.Boolean()),
});

/**
 * The log of the watched chats' messages, per chat, searchable: a person's messages are in their `.mydata` and go
 * with their delete; a message deleted for everyone goes; an edit replaces its words; retention from the options.
 */
export const WATCHED_MESSAGES = Store.chatSearchLog('watched-messages', KeptMessage, {
  title: 'watched chat messages',
  section: 'watched chats',
  keepDays: 30,
  people: {
    author: (m) => m.senderId,
    messageId: (m) => m.id,
    edited: (m, text) => ({ ...m, text }),
  },
});
