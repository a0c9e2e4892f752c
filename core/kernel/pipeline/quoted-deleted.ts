import type { MediaKind, QuotedMessage } from '../port/message.js';

/** What a quoted message of each media kind is called in a reply. */
const CALLED: Record<MediaKind, string> = {
  image: 'photo',
  video: 'video',
  voice: 'voice note',
  audio: 'audio file',
  document: 'document',
  sticker: 'sticker',
};

/** What a quoted message of media kind `kind` is called in a reply ('voice note' for `voice`). */
export function calledOf(kind: MediaKind): string {
  return CALLED[kind];
}

/**
 * The one sentence every plugin says when the message a user replies to was deleted for everyone (ctx.replyIfQuotedDeleted):
 * the thing is named by `what`, else by the quoted media's kind, else "message".
 *
 * @example
 * quotedDeletedSentence({ ...quoted, media: { kind: 'image', … } }); // 'That photo was deleted for everyone, so I no longer have it.'
 */
export function quotedDeletedSentence(quoted: QuotedMessage, what?: string): string {
  const called = what ?? (quoted.media ? CALLED[quoted.media.kind] : 'message');
  return `That ${called} was deleted for everyone, so I no longer have it.`;
}
