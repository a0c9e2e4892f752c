import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { madeOnceSync } from '../../helpers/made-media.js';

/** The ffmpeg used to make test audio (the system one or the packaged one). */
export function testFfmpeg(): string {
  try {
    execFileSync('ffmpeg', ['-version'], { stdio: 'ignore' });
    return 'ffmpeg';
  } catch {
    return (createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as { path: string }).path;
  }
}

/**
 * Makes a real audio file with ffmpeg: a sine tone encoded like WhatsApp voice notes (Ogg/Opus, mono) or as
 * mp3 / aiff, and returns its bytes. Made once per test run (see made-media.ts); `dir/name` is this caller's own copy.
 *
 * @example const ogg = makeTone(dir, 'note.ogg', 2);
 */
export function makeTone(dir: string, name: string, seconds = 1.5, frequency = 440): Buffer {
  const file = path.join(dir, name);
  const codec = name.endsWith('.ogg') ? ['-c:a', 'libopus', '-b:a', '24k', '-ac', '1'] : name.endsWith('.mp3') ? ['-c:a', 'libmp3lame', '-b:a', '32k'] : [];
  const ffmpeg = testFfmpeg();
  const args = ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', `sine=frequency=${frequency}:duration=${seconds}`, ...codec];
  madeOnceSync([ffmpeg, ...args, path.extname(name)], file, (out) => execFileSync(ffmpeg, [...args, out]));
  return readFileSync(file);
}
