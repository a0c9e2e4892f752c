import { execFileSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { madeOnceSync } from '../../helpers/made-media.js';

let found: string | undefined;

/**
 * The ffmpeg used to make test audio (the system one or the packaged one), looked up once per process on PATH: asking
 * `ffmpeg -version` at every call cost an ffmpeg start (~0.3 s of CPU, ~200 libraries) per fixture, made or not.
 */
export function testFfmpeg(): string {
  found ??= onPath('ffmpeg') ? 'ffmpeg' : (createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as { path: string }).path;
  return found;
}

function onPath(program: string): boolean {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => {
    try {
      accessSync(path.join(dir || '.', program), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
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
