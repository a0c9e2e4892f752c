import type { IncomingMedia, MessageContext } from '../../core/index.js';

/** Where the picture(s) of a vision request came from. */
export interface FoundImage {
  media: IncomingMedia;
  /** True when the media is in the quoted message (a question replying to a photo or a video). */
  quoted: boolean;
  /** True for a video: a few of its frames are looked at. */
  video: boolean;
}

/** True for media that is a picture: photos, stickers, and documents whose mimetype is an image. */
export function isImageMedia(media: IncomingMedia | undefined): media is IncomingMedia {
  if (!media) return false;
  if (media.kind === 'image' || media.kind === 'sticker') return true;
  return media.kind === 'document' && /^image\//i.test(media.mimetype ?? '');
}

/** True for media vision looks at: a picture, or a video (a few of its frames). */
function isVisual(media: IncomingMedia | undefined): media is IncomingMedia {
  return media?.kind === 'video' || isImageMedia(media);
}

/** True for text that is a command (`.mp3`, `/ws`): a command in a caption belongs to the command's plugin. */
export function looksLikeCommand(text: string, prefix: string): boolean {
  return text.startsWith(prefix) || /^\/\w/.test(text);
}

/**
 * The picture or video a message asks about: its own media (not a bare sticker), or — for a text that quotes a photo,
 * a sticker or a video and asks something — the quoted media. Captions that are commands are left to the command's plugin.
 *
 * @example
 * const found = findImage(ctx); // { media, quoted: false, video: false } for a photo with a caption
 */
export function findImage(ctx: MessageContext<unknown>): FoundImage | undefined {
  if (looksLikeCommand(ctx.text, ctx.host.config().prefix)) return undefined;
  const own = ctx.message.media;
  // A sticker sent on its own is a gesture, not a question (WhatsApp gives stickers no caption): only a question
  // quoting one is looked at.
  if (isVisual(own) && own.kind !== 'sticker') return { media: own, quoted: false, video: own.kind === 'video' };
  const quoted = ctx.message.quoted?.media;
  if (!own && ctx.text && isVisual(quoted)) return { media: quoted, quoted: true, video: quoted.kind === 'video' };
  return undefined;
}
