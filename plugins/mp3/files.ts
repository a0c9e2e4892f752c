import { randomBytes } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

/*
 * Where the files go: `host.files.folder('media')` (incoming media, kept 30 days by the retention sweeper),
 * `host.files.folder('generated')` (files the bot made, kept 7 days), `host.files.work()` (one job's work folder).
 */

const EXT: Record<string, string> = {
  'audio/ogg': 'ogg', 'audio/mpeg': 'mp3', 'audio/mp4': 'm4a', 'audio/aac': 'aac', 'audio/wav': 'wav', 'audio/x-wav': 'wav',
  'audio/flac': 'flac', 'audio/webm': 'webm', 'audio/amr': 'amr', 'video/mp4': 'mp4', 'video/webm': 'webm',
  'video/quicktime': 'mov', 'video/x-matroska': 'mkv', 'video/3gpp': '3gp', 'image/jpeg': 'jpg', 'image/png': 'png',
  'image/webp': 'webp', 'image/gif': 'gif',
};

/** A file extension for a mimetype (`audio/ogg; codecs=opus` → `ogg`), `bin` when unknown. */
export function extensionFor(mimetype: string | undefined, fileName?: string): string {
  const base = (mimetype ?? '').split(';')[0]!.trim().toLowerCase();
  const fromName = fileName ? path.extname(fileName).slice(1).toLowerCase() : '';
  return EXT[base] ?? (/^[a-z0-9]{1,5}$/.test(fromName) ? fromName : 'bin');
}

/**
 * A file name safe on every file system and harmless in a chat: no path separators, no control characters, no
 * leading dots, at most 80 characters. Falls back to `fallback` when nothing usable is left.
 *
 * @example
 * safeName('../../etc/passwd\u0000 song: live?', 'audio'); // 'etc_passwd song_ live'
 */
export function safeName(title: string, fallback = 'audio'): string {
  const cleaned = title
    .normalize('NFC')
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .replace(/[\\/:*?"<>|]+/g, '_')
    .replace(/\s+/g, ' ')
    .replace(/^[\s._]+|[\s._]+$/g, '')
    .slice(0, 80)
    .trim();
  return cleaned || fallback;
}

/** A unique, sortable stem for stored files: `20260105-141502-a1b2c3`. */
function stamp(): string {
  const iso = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${iso}-${randomBytes(3).toString('hex')}`;
}

/**
 * Saves incoming media in `folder` (`data/media/`) and returns the path.
 *
 * @example
 * const file = await saveIncoming(host.files.folder('media'), bytes, 'mp4');
 */
export async function saveIncoming(folder: string, bytes: Buffer, ext: string): Promise<string> {
  await mkdir(folder, { recursive: true });
  const file = path.join(folder, `${stamp()}.${ext}`);
  await writeFile(file, bytes, { flag: 'wx' });
  return file;
}

/**
 * Moves a finished file from a work folder into `folder` (`data/generated/`) under a readable, unique name.
 *
 * @example
 * const final = await publish(host.files.folder('generated'), path.join(work.dir, 'out.mp3'), 'My song', 'mp3');
 */
export async function publish(folder: string, file: string, title: string, ext: string): Promise<string> {
  await mkdir(folder, { recursive: true });
  const target = path.join(folder, `${stamp()}-${safeName(title).replace(/\s/g, '_')}.${ext}`);
  await rename(file, target);
  return target;
}
