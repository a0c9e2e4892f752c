import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { ffmpegBinary } from '../../../core/kernel/capabilities/detect.js';
import { madeOnce } from '../../helpers/made-media.js';

const run = promisify(execFile);

/** The ffmpeg the plugin uses in tests (the bundled one: no FFMPEG_PATH). */
export const FFMPEG = ffmpegBinary({ ffmpegPath: '' }).path;

/**
 * Makes a small real media file with ffmpeg's generators: `video` (MP4, test pattern + tone), `voice` (Ogg Opus
 * tone, like a WhatsApp voice note) or `silent-video` (MP4 without sound). Made once per test run (see made-media.ts);
 * the file at the returned path is this caller's own copy.
 *
 * @example
 * const clip = await makeSample(dir, 'video', 2); // dir/video.mp4
 */
export async function makeSample(dir: string, kind: 'video' | 'voice' | 'silent-video', seconds = 2): Promise<string> {
  const t = String(seconds);
  const file = path.join(dir, kind === 'voice' ? 'voice.ogg' : `${kind}.mp4`);
  const args =
    kind === 'voice'
      ? ['-f', 'lavfi', '-i', `sine=frequency=440:duration=${t}`, '-c:a', 'libopus', '-b:a', '24k']
      : kind === 'video'
        ? ['-f', 'lavfi', '-i', `testsrc=size=160x120:rate=10:duration=${t}`, '-f', 'lavfi', '-i', `sine=frequency=660:duration=${t}`, '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest']
        : ['-f', 'lavfi', '-i', `testsrc=size=160x120:rate=10:duration=${t}`, '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'];
  const options = ['-hide_banner', '-loglevel', 'error', '-y', ...args];
  await madeOnce([FFMPEG, ...options, path.extname(file)], file, (out) => run(FFMPEG, [...options, out], { timeout: 60_000 }));
  return file;
}

/** What ffmpeg says about a file: its format and duration (seconds). */
export async function inspectFile(file: string): Promise<{ format: string; seconds: number; hasVideo: boolean }> {
  const result = await run(FFMPEG, ['-hide_banner', '-i', file]).catch((err: { stderr: string }) => ({ stderr: err.stderr }));
  const stderr = result.stderr;
  const format = /Input #0, (.+?), from /.exec(stderr)?.[1] ?? 'unreadable';
  const d = /Duration: (\d+):(\d{2}):(\d{2}(?:\.\d+)?)/.exec(stderr);
  const seconds = d ? Number(d[1]) * 3600 + Number(d[2]) * 60 + Number(d[3]) : NaN;
  return { format, seconds, hasVideo: /Stream #.*Video: /.test(stderr) && !/attached pic/.test(stderr) };
}
