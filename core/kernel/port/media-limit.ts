import { CodedError } from '../../services/coded-error.js';
import type { MediaKind } from './message.js';

/** What a media kind is called in a sentence to a user. */
const KIND_WORDS: Record<MediaKind, string> = { voice: 'voice note', audio: 'audio file', image: 'photo', video: 'video', document: 'file', sticker: 'sticker' };

/** Bytes as a user reads them: "20 MB", "1.5 MB", "800 KB" (1 MB = 1024 × 1024 bytes, as the settings count). */
export function sizeInWords(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  if (mb >= 1) return `${Number(mb.toFixed(mb < 10 ? 1 : 0))} MB`;
  return `${Math.max(1, Math.round(bytes / 1024))} KB`;
}

/**
 * A media download stopped (or never started) because the media is larger than the limit for its kind: the bytes
 * actually received passed it, or the size WhatsApp declared is over it already. `message` is a sentence for the user.
 *
 * @example
 * try { bytes = await media.download({ maxBytes: 5_000_000 }); }
 * catch (err) { if (err instanceof MediaTooLargeError) return ctx.reply(err.message); throw err; }
 */
export class MediaTooLargeError extends CodedError {
  get code(): 'PLUGIN_MEDIA_TOO_LARGE' {
    return 'PLUGIN_MEDIA_TOO_LARGE';
  }

  constructor(
    readonly kind: MediaKind,
    /** The limit that applied, in bytes. */
    readonly limitBytes: number,
  ) {
    super(`That ${KIND_WORDS[kind] ?? 'file'} is too large for me: the limit is ${sizeInWords(limitBytes)}.`);
    this.name = 'MediaTooLargeError';
  }
}
