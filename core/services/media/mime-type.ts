import { createRequire } from 'node:module';
import path from 'node:path';

type MimeTypes = typeof import('mime-types');
let mimeTypes: MimeTypes | undefined;
/**
 * mime-types loads at the first lookup of a type the table below does not have, not with every start: it parses
 * mime-db's JSON of every type (~200 KB), a few hundredths of a second before "ready" that nothing there needs.
 */
const mimeDb = (): MimeTypes => (mimeTypes ??= createRequire(import.meta.url)('mime-types') as MimeTypes);

const MIME: Record<string, string> = {
  '.ogg': 'audio/ogg; codecs=opus', '.oga': 'audio/ogg; codecs=opus', '.opus': 'audio/ogg; codecs=opus', '.mp3': 'audio/mpeg',
  '.m4a': 'audio/mp4', '.wav': 'audio/wav', '.aac': 'audio/aac', '.flac': 'audio/flac', '.webm': 'video/webm',
  '.mp4': 'video/mp4', '.mkv': 'video/x-matroska', '.mov': 'video/quicktime', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg',
  '.png': 'image/png', '.gif': 'image/gif', '.webp': 'image/webp', '.pdf': 'application/pdf', '.txt': 'text/plain',
};

/**
 * The mimetype for a file name, by extension: the types above as WhatsApp wants them (a voice note's codec), else
 * mime-db's (a .csv is text/csv, so the phone opens it in a spreadsheet app), else `fallback`.
 */
export function mimeFor(file: string, fallback = 'application/octet-stream'): string {
  const known = MIME[path.extname(file).toLowerCase()] ?? mimeDb().lookup(file);
  // mime-db names .bin (and the like) octet-stream: that says nothing, so the caller's kind decides (audio/mpeg …).
  return known && known !== 'application/octet-stream' ? known : fallback;
}

/** The usual extension of a mimetype (`application/pdf` → `pdf`), from mime-db; false when it knows none. */
export function extensionFor(mimetype: string): string | false {
  return mimeDb().extension(mimetype);
}
