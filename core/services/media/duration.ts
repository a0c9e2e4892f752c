import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import type { Jail } from '../jail/jail.js';
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

/** Runs the probe in the core jail: it sees only this file (as `in/media`). */
async function run(jail: Jail, binary: string, file: string, args: string[], timeoutMs: number): Promise<{ stdout: string; stderr: string; failed: boolean }> {
  const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
  const result = await jail.run({
    kind: 'media',
    program: binary,
    args,
    inputs: { media: file },
    limits: { wallSeconds: seconds, cpuSeconds: seconds, memoryMb: 512, maxProcesses: 64, maxOutputBytes: 1024 * 1024, diskBytes: 0 },
  });
  return { stdout: result.stdout, stderr: result.stderr, failed: result.exitCode !== 0 || Boolean(result.stopped) };
}

/**
 * How long a media file plays, in seconds, read with ffprobe (or `ffmpeg -i` when there is no ffprobe) with the
 * input format pinned. Undefined when the container does not say or the file cannot be read.
 *
 * @example
 * await mediaSeconds(host.jail, '/usr/bin/ffmpeg', '/tmp/x/note.ogg', { container: 'ogg', demuxer: 'ogg' }); // 12.48
 */
export async function mediaSeconds(jail: Jail, ffmpeg: string, file: string, format: PinnedFormat, timeoutMs = 30_000): Promise<number | undefined> {
  const ffprobe = ffprobeBeside(ffmpeg);
  if (ffprobe) {
    const out = await run(jail, ffprobe, file, ['-v', 'error', ...inputArgs(format), '-i', 'in/media', '-show_entries', 'format=duration', '-of', 'default=noprint_wrappers=1:nokey=1'], timeoutMs);
    const seconds = Number.parseFloat(out.stdout.trim());
    return !out.failed && Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
  }
  // ffmpeg without an output exits 1 by design; the duration is in its banner.
  const out = await run(jail, ffmpeg, file, ['-hide_banner', '-nostdin', ...inputArgs(format), '-i', 'in/media'], timeoutMs);
  const m = /Duration: (\d+):(\d{2}):(\d{2}(?:\.\d+)?)/.exec(out.stderr);
  return m ? Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) : undefined;
}
