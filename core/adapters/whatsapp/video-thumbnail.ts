import { execFile } from 'node:child_process';

/**
 * A small JPEG preview (base64, as Baileys wants it) of a video's first frame, made with the project's ffmpeg.
 * Baileys would otherwise run whatever `ffmpeg` is on PATH through a shell, or send no preview. Undefined on failure.
 *
 * @example const jpegThumbnail = await videoThumbnail('/usr/bin/ffmpeg', 'clip.mp4');
 */
export function videoThumbnail(ffmpeg: string, file: string, timeoutMs = 15_000): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(
      ffmpeg,
      ['-hide_banner', '-loglevel', 'error', '-ss', '0', '-i', file, '-vf', 'scale=32:-1', '-vframes', '1', '-f', 'image2', '-c:v', 'mjpeg', 'pipe:1'],
      { encoding: 'buffer', timeout: timeoutMs, maxBuffer: 1024 * 1024 },
      (err, stdout) => resolve(!err && stdout.length ? stdout.toString('base64') : undefined),
    );
  });
}
