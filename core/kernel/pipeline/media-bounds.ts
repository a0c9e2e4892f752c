import { MediaTooLargeError } from '../../api/errors.js';
import type { DownloadOptions, IncomingMedia, IncomingMessage, MediaKind } from '../port/message.js';

const BOUND = Symbol('download bounded');

/**
 * Bounds every download of a message's media (its own, an album's, a quote's) by the owner's limit for its kind
 * (config `media.maxDownloadMB`, read at each download) or the plugin's `maxBytes`, whichever is smaller. The
 * transport stops receiving past it; the bytes it returns are checked again (a transport that cannot stream), and a
 * size the sender declared over the limit refuses before anything is fetched. Changes the media objects in place, so
 * a plugin comparing `ctx.message.media === media` still can; bounding twice is a no-op.
 */
export function boundDownloads(message: IncomingMessage, limitOf: (kind: MediaKind) => number): void {
  // Most messages carry no media at all: nothing to walk.
  if (!message.media && !message.album && !message.quoted?.media) return;
  for (const media of [message.media, ...(message.album ?? []), message.quoted?.media]) if (media) bound(media, limitOf);
}

function bound(media: IncomingMedia & { [BOUND]?: true }, limitOf: (kind: MediaKind) => number): void {
  if (media[BOUND]) return;
  const download = media.download.bind(media);
  media.download = async (options: DownloadOptions = {}) => {
    const maxBytes = Math.min(limitOf(media.kind), options.maxBytes ?? Infinity);
    if (media.size !== undefined && media.size > maxBytes) throw new MediaTooLargeError(media.kind, maxBytes);
    const bytes = await download({ ...options, maxBytes });
    if (bytes.length > maxBytes) throw new MediaTooLargeError(media.kind, maxBytes);
    return bytes;
  };
  Object.defineProperty(media, BOUND, { value: true });
}
