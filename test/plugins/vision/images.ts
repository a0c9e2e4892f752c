import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ffmpegBinary } from '../../../core/kernel/capabilities/detect.js';
import { madeOnce } from '../../helpers/made-media.js';
import type { IncomingMedia, MediaKind } from '../../../core/kernel/port/message.js';

/**
 * Makes a real image file with ffmpeg from a lavfi source (e.g. `color=c=red:s=64x48`, `testsrc=s=2000x1500`)
 * and returns its path; the format follows the extension. Made once per test run (see made-media.ts); the file at the
 * returned path is this caller's own copy.
 */
export async function makeImage(dir: string, name: string, source: string): Promise<string> {
  const file = path.join(dir, name);
  const ffmpeg = ffmpegBinary({ ffmpegPath: '' }).path;
  const args = ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', source, '-frames:v', '1'];
  await madeOnce([ffmpeg, ...args, path.extname(name)], file, (out) => new Promise<void>((resolve, reject) => execFile(ffmpeg, [...args, out], (err) => (err ? reject(err) : resolve()))));
  return file;
}

/** Incoming media around real bytes, as a transport hands it to plugins. */
export async function mediaOf(file: string | Buffer, kind: MediaKind = 'image', mimetype = 'image/png'): Promise<IncomingMedia> {
  const bytes = typeof file === 'string' ? await readFile(file) : file;
  return { kind, mimetype, size: bytes.length, download: async () => bytes };
}
