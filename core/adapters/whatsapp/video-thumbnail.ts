import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Jail } from '../../services/jail/jail.js';
import { inputArgs, MediaRefused, pinFileFormat } from '../../services/media/index.js';

/** A preview, or why the video goes without one (said in the log: the send itself goes on). */
export type VideoThumbnail = { jpegThumbnail: string } | { missing: string };

/** The preview is small (32 px wide); a run that needs more than this is not making one. */
const LIMITS = { wallSeconds: 15, cpuSeconds: 15, memoryMb: 512, maxProcesses: 64, maxOutputBytes: 64 * 1024, diskBytes: 1024 * 1024 };

/**
 * A small JPEG preview (base64, as Baileys wants it) of a video's first frame, made by the project's ffmpeg in the
 * core jail: the video may come from a chat or the web, so ffmpeg sees only this file (as `in/media`), opened with
 * the demuxer its bytes pin (never a playlist that names other files). Baileys would otherwise run whatever `ffmpeg`
 * is on PATH through a shell, outside the jail. Without a jail there is no preview: nothing runs unjailed.
 *
 * @example
 * const thumb = await videoThumbnail(jail, '/usr/bin/ffmpeg', 'clip.mp4');
 * if ('missing' in thumb) log.warn(thumb.missing);
 */
export async function videoThumbnail(jail: Jail | undefined, ffmpeg: string | undefined, file: string): Promise<VideoThumbnail> {
  if (!ffmpeg) return { missing: 'no ffmpeg is configured' };
  if (!jail) return { missing: 'no jail to run ffmpeg in (a video is untrusted bytes: ffmpeg never reads one outside the jail)' };
  let format;
  try {
    format = await pinFileFormat(file, 'sound');
  } catch (err) {
    if (err instanceof MediaRefused) return { missing: 'the file is not in a video format ffmpeg may open' };
    return { missing: `the file could not be read (${(err as Error).message})` };
  }
  const out = await mkdtemp(path.join(os.tmpdir(), 'wabot-thumb-'));
  try {
    const result = await jail.run({
      kind: 'media',
      program: ffmpeg,
      args: ['-hide_banner', '-loglevel', 'error', '-nostdin', ...inputArgs(format), '-i', 'in/media', '-vf', 'scale=32:-1', '-frames:v', '1', '-f', 'image2', '-c:v', 'mjpeg', 'out/thumb.jpg'],
      inputs: { media: file },
      outputTo: out,
      limits: LIMITS,
    });
    if (result.setupFailed) return { missing: `the jail could not be set up (${result.setupFailed})` };
    if (result.stopped) return { missing: `ffmpeg was stopped in the jail (${result.stopped})` };
    const jpeg = result.exitCode === 0 && result.outputs.includes('thumb.jpg') ? await readFile(path.join(out, 'thumb.jpg')) : undefined;
    if (!jpeg?.length) return { missing: `ffmpeg made no preview (${result.stderr.trim().split('\n').at(-1) || `exit ${result.exitCode}`})` };
    return { jpegThumbnail: jpeg.toString('base64') };
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}
