import path from 'node:path';

const MIME: Record<string, string> = {
  '.ogg': 'audio/ogg; codecs=opus', '.oga': 'audio/ogg; codecs=opus', '.opus': 'audio/ogg; codecs=opus', '.mp3': 'audio/mpeg',
  '.m4a': 'audio/mp4', '.wav': 'audio/wav', '.aac': 'audio/aac', '.flac': 'audio/flac', '.webm': 'video/webm',
  '.mp4': 'video/mp4', '.mkv': 'video/x-matroska', '.mov': 'video/quicktime', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg',
  '.png': 'image/png', '.gif': 'image/gif', '.webp': 'image/webp', '.pdf': 'application/pdf', '.txt': 'text/plain',
};

/** The mimetype for a file name, by extension. */
export function mimeFor(file: string, fallback = 'application/octet-stream'): string {
  return MIME[path.extname(file).toLowerCase()] ?? fallback;
}
