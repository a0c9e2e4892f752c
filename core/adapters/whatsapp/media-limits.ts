import type { OutgoingMedia } from '../../kernel/port/message.js';

const MB = 1024 * 1024;

/**
 * The largest file WhatsApp takes per kind of message, as its own apps refuse larger ones: photos and voice notes
 * 16 MB, audio files and videos 64 MB (WhatsApp Web's media limit), stickers 1 MB (its sticker format asks for 100 KB
 * still and 500 KB animated; a larger one shows broken), documents 2 GB.
 */
export const WHATSAPP_MEDIA_LIMITS: Readonly<Record<OutgoingMedia['kind'], number>> = {
  image: 16 * MB,
  voice: 16 * MB,
  audio: 64 * MB,
  video: 64 * MB,
  sticker: 1 * MB,
  document: 2048 * MB,
};

/** Rounded up, so a file one byte over a limit never reads as the limit itself ("64 MB, more than the 64 MB"). */
function inWords(bytes: number): string {
  const up = (n: number) => Math.ceil(n * 10) / 10;
  return bytes >= 1024 * MB ? `${up(bytes / (1024 * MB))} GB` : bytes >= MB ? `${up(bytes / MB)} MB` : `${Math.ceil(bytes / 1024)} KB`;
}

/** Undefined when WhatsApp takes a `kind` of `size` bytes; else why not, in words a user understands. */
export function mediaTooLarge(kind: OutgoingMedia['kind'], size: number): string | undefined {
  const limit = WHATSAPP_MEDIA_LIMITS[kind];
  if (limit === undefined || size <= limit) return undefined;
  const hint = kind === 'video' || kind === 'image' || kind === 'audio' ? '; sent as a document it could go' : '';
  return `cannot send the ${kind}: it is ${inWords(size)}, more than the ${inWords(limit)} WhatsApp accepts for ${kind === 'image' || kind === 'audio' ? 'an' : 'a'} ${kind}${size <= WHATSAPP_MEDIA_LIMITS.document ? hint : ''}`;
}
