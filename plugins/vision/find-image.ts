import type { IncomingMedia, MessageContext } from '../../core/index.js';

/** Where the image of a vision request came from. */
export interface FoundImage {
  media: IncomingMedia;
  /** True when the image is in the quoted message (a question replying to a photo). */
  quoted: boolean;
}

/** True for media that is a picture: photos, stickers, and documents whose mimetype is an image. */
export function isImageMedia(media: IncomingMedia | undefined): media is IncomingMedia {
  if (!media) return false;
  if (media.kind === 'image' || media.kind === 'sticker') return true;
  return media.kind === 'document' && /^image\//i.test(media.mimetype ?? '');
}

/** True for text that is a command (`.mp3`, `/ws`): a command in a caption belongs to the command's plugin. */
export function looksLikeCommand(text: string, prefix: string): boolean {
  return text.startsWith(prefix) || /^\/\w/.test(text);
}

/**
 * The image a message asks about: its own media, or — for a text that quotes a photo and asks something — the
 * quoted media. Captions that are commands are left to the command's plugin.
 *
 * @example
 * const found = findImage(ctx); // { media, quoted: false } for a photo with a caption
 */
export function findImage(ctx: MessageContext<unknown>): FoundImage | undefined {
  if (looksLikeCommand(ctx.text, ctx.host.config().prefix)) return undefined;
  if (isImageMedia(ctx.message.media)) return { media: ctx.message.media, quoted: false };
  if (!ctx.message.media && ctx.text && isImageMedia(ctx.message.quoted?.media)) return { media: ctx.message.quoted!.media!, quoted: true };
  return undefined;
}
