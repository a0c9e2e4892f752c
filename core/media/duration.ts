import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { inputArgs, type PinnedFormat } from './format.js';

/** The ffprobe beside an ffmpeg binary (Debian's /usr/bin has both; the bundled build has no ffprobe). */
export function ffprobeBeside(ffmpeg: string): string | undefined {
  if (!ffmpeg.includes('/')) return undefined;
  const candidate = path.join(path.dirname(ffmpeg), 'ffprobe');
  try {
    accessSync(candidate, constants.X_OK);
    return candidate;
  } catch {
    return undefined;
  }
}

function run(binary: string, args: string[], timeoutMs: number): Promise<{ stdout: string; stderr: string; failed: boolean }> {
  return new Promise((resolve) => {
    execFile(binary, args, { timeout: timeoutMs, maxBuffer: 1024 * 1024, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } }, (err, stdout, stderr) =>
      resolve({ stdout: String(stdout), stderr: String(stderr), failed: Boolean(err) }),
    );
  });
}

/**
 * How long a media file plays, in seconds, read with ffprobe (or `ffmpeg -i` when there is no ffprobe) with the
 * input format pinned. Undefined when the container does not say or the file cannot be read.
 *
 * @example
 * await mediaSeconds('/usr/bin/ffmpeg', '/tmp/x/note.ogg', { container: 'ogg', demuxer: 'ogg' }); // 12.48
 */
export async function mediaSeconds(ffmpeg: string, file: string, format: PinnedFormat, timeoutMs = 30_000): Promise<number | undefined> {
  const ffprobe = ffprobeBeside(ffmpeg);
  if (ffprobe) {
    const out = await run(ffprobe, ['-v', 'error', ...inputArgs(format), '-i', file, '-show_entries', 'format=duration', '-of', 'default=noprint_wrappers=1:nokey=1'], timeoutMs);
    const seconds = Number.parseFloat(out.stdout.trim());
    return !out.failed && Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
  }
  // ffmpeg without an output exits 1 by design; the duration is in its banner.
  const out = await run(ffmpeg, ['-hide_banner', '-nostdin', ...inputArgs(format), '-i', file], timeoutMs);
  const m = /Duration: (\d+):(\d{2}):(\d{2}(?:\.\d+)?)/.exec(out.stderr);
  return m ? Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) : undefined;
}
