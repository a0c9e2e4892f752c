import { Type } from '#typebox';

/**
 * A history entry's fields as the store checks them (see `HistoryEntry`), shared by the two logs of that shape: the
 * chats' prompt history adds `carried`, the recall log bounds `at` (a message's month names its file). A leaf module,
 * so the recall plugin takes the fields without the history store's engine.
 */
export const HISTORY_ENTRY_FIELDS = {
  id: Type.Optional(Type.String()),
  role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
  senderId: Type.Optional(Type.String()),
  senderName: Type.Optional(Type.String()),
  text: Type.String(),
  at: Type.Number(),
  media: Type.Optional(Type.String()),
  answers: Type.Optional(Type.String()),
  answersMessage: Type.Optional(Type.String()),
};
