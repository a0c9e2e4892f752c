import path from 'node:path';
import { lookup } from 'mime-types';

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
  const known = MIME[path.extname(file).toLowerCase()] ?? lookup(file);
  // mime-db names .bin (and the like) octet-stream: that says nothing, so the caller's kind decides (audio/mpeg …).
  return known && known !== 'application/octet-stream' ? known : fallback;
}
